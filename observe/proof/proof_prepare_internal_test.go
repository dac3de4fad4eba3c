package proof

import (
	"github.com/custody-sh/custody/observe/hostio"
	"strings"
	"testing"
)

// TestTouchesAny: a commit's changed entries touch head's paths when git's
// pathspec matching lists the commit for that reason alone: the same path,
// or an entry below one of them (a path that is a directory); an entry
// above one of them does not count, whatever git lists.
func TestTouchesAny(t *testing.T) {
	t.Parallel()
	paths := map[string]bool{"a/b.txt": true, "dir": true, "top.txt": true}
	for _, tc := range []struct {
		changed []string
		want    bool
	}{
		{[]string{"a/b.txt"}, true},
		{[]string{"top.txt"}, true},
		{[]string{"dir/deep/file"}, true},
		{[]string{"a"}, false}, // a file where a/ was: git does not list it for a/b.txt
		{[]string{"other", "a/c.txt"}, false},
		{[]string{"a/b.txt.orig"}, false},
		{[]string{"dirt/file"}, false},
		{[]string{"top"}, false},
		{nil, false},
	} {
		if got := touchesAny(tc.changed, paths); got != tc.want {
			t.Errorf("touchesAny(%q) = %v, want %v", tc.changed, got, tc.want)
		}
	}
}

// TestWholeHeaderIsNoCommitOfTheBatch: each whole change of a batch gets a
// header of its own, of the head's length, that is no head.
func TestWholeHeaderIsNoCommitOfTheBatch(t *testing.T) {
	t.Parallel()
	head := strings.Repeat("f", 40)
	seen := map[string]bool{head: true}
	for i := range 300 {
		h := wholeHeader(head, i)
		if seen[h] || len(h) != len(head) || !hostio.IsHexOID(h) {
			t.Fatalf("wholeHeader(%d) = %q: taken, or not an id of the head's length", i, h)
		}
		seen[h] = true
	}
}
