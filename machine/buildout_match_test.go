package machine_test

import (
	"testing"

	"github.com/custody-sh/custody/machine"
)

func TestPatternsMatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		patterns []string
		path     string
		dir      bool
		want     bool
	}{
		// A name without a slash matches at any depth.
		{[]string{"out"}, "out", true, true},
		{[]string{"out"}, "a/b/out", false, true},
		{[]string{"out"}, "outer", true, false},
		// A leading or middle slash anchors to the root.
		{[]string{"/out"}, "out", true, true},
		{[]string{"/out"}, "a/out", true, false},
		{[]string{"web/dist"}, "web/dist", true, true},
		{[]string{"web/dist"}, "x/web/dist", true, false},
		// A trailing slash matches only directories.
		{[]string{"out/"}, "out", false, false},
		{[]string{"out/"}, "a/out", true, true},
		// Below a matched directory everything matches.
		{[]string{"/out/"}, "out/x/report.html", false, true},
		// Globs stay within one component.
		{[]string{"*.log"}, "logs/run.log", false, true},
		{[]string{"/*.log"}, "logs/run.log", false, false},
		{[]string{"a/*/c"}, "a/b/c", true, true},
		{[]string{"a/*/c"}, "a/b/x/c", true, false},
		{[]string{"file?.txt"}, "file1.txt", false, true},
		{[]string{"[!a]x"}, "bx", false, true},
		{[]string{"[!a]x"}, "ax", false, false},
		{[]string{"[0-9].tmp"}, "7.tmp", false, true},
		// ** across components.
		{[]string{"**/cache"}, "a/b/cache", true, true},
		{[]string{"**/cache"}, "cache", true, true},
		{[]string{"a/**/z"}, "a/z", true, true},
		{[]string{"a/**/z"}, "a/b/c/z", true, true},
		{[]string{"a/**"}, "a/b", false, true},
		{[]string{"a/**"}, "a", true, false},
		// The last matching line decides; negation re-includes a file
		// but not below an excluded directory.
		{[]string{"*.log", "!keep.log"}, "keep.log", false, false},
		{[]string{"*.log", "!keep.log", "keep.log"}, "keep.log", false, true},
		{[]string{"/out/", "!/out/keep"}, "out/keep", false, true},
		// Comments, blanks and escapes.
		{[]string{"# out", "", "  "}, "# out", false, false},
		{[]string{`\#out`}, "#out", false, true},
		{[]string{`\!out`}, "!out", false, true},
		{[]string{"out   "}, "out", false, true},
		{nil, "anything", true, false},
	}
	for _, tt := range tests {
		ps, err := machine.ParsePatterns(tt.patterns)
		if err != nil {
			t.Fatalf("ParsePatterns(%q): %v", tt.patterns, err)
		}
		if got := ps.Match(tt.path, tt.dir); got != tt.want {
			t.Errorf("%q.Match(%q, dir=%v) = %v, want %v", tt.patterns, tt.path, tt.dir, got, tt.want)
		}
	}
}

func TestParsePatternsRefuses(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"[", "/", "a//b", "!", "a\nb", "x\x00"} {
		if _, err := machine.ParsePatterns([]string{bad}); err == nil {
			t.Errorf("ParsePatterns(%q) accepted it", bad)
		}
	}
}

// FuzzPatterns: any pattern either is refused or compiles into a matcher
// that answers for any path without panicking.
func FuzzPatterns(f *testing.F) {
	for _, s := range []string{"out/", "!keep", "**/x/**", "[a-", `\#x`, "a/**/b", "*.log", "/"} {
		f.Add(s, "a/b/out")
	}
	f.Fuzz(func(t *testing.T, pattern, p string) {
		ps, err := machine.ParsePatterns([]string{pattern})
		if err != nil {
			return
		}
		ps.Match(p, true)
		ps.Match(p, false)
	})
}
