package observe_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/hostio"
)

// TestParseStatusBranch: the --branch headers of git status --porcelain=v2
// -z give HEAD, its branch, its upstream and the counts; entries, a
// rename's original path included, are skipped; a malformed header is
// ErrMalformed.
func TestParseStatusBranch(t *testing.T) {
	t.Parallel()
	const oid = "9191352045666aa418a222a35e764aaa4a001da5"
	for name, tt := range map[string]struct {
		in   string
		want observe.StatusBranch
	}{
		"tracking": {"# branch.oid " + oid + "\x00# branch.head topic\x00# branch.upstream origin/topic\x00# branch.ab +2 -1\x00",
			observe.StatusBranch{OID: oid, Head: "topic", Upstream: "origin/topic", HasAB: true, Ahead: 2, Behind: 1}},
		"gone upstream": {"# branch.oid " + oid + "\x00# branch.head t\x00# branch.upstream origin/t\x00",
			observe.StatusBranch{OID: oid, Head: "t", Upstream: "origin/t"}},
		"detached, initial": {"# branch.oid (initial)\x00# branch.head (detached)\x00", observe.StatusBranch{}},
		"entries skipped": {"# branch.oid " + oid + "\x00# branch.head a b\x00? new file\x002 R. N... 100644 100644 100644 " + oid + " " + oid + " R100 to\x00from\x00# branch.ab +0 -0\x00# stash 3\x00",
			observe.StatusBranch{OID: oid, Head: "a b", HasAB: true}},
		"empty": {"", observe.StatusBranch{}},
	} {
		got, err := observe.ParseStatusBranch([]byte(tt.in))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: (-want +got):\n%s", name, diff)
		}
	}
	for name, in := range map[string]string{
		"no NUL":       "# branch.head x",
		"no value":     "# branch.head\x00",
		"bad oid":      "# branch.oid xyz\x00",
		"bad counts":   "# branch.ab 2 1\x00",
		"negative":     "# branch.ab +-2 -1\x00",
		"rename cut":   "2 R. N... 100644 100644 100644 a b R100 to\x00",
		"one count":    "# branch.ab +2\x00",
		"not a number": "# branch.ab +x -1\x00",
	} {
		if _, err := observe.ParseStatusBranch([]byte(in)); !errors.Is(err, hostio.ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", name, err)
		}
	}
}

// FuzzParseStatusBranch: no output makes the parser panic, and the counts
// it reads are never negative.
func FuzzParseStatusBranch(f *testing.F) {
	f.Add([]byte("# branch.oid 9191352045666aa418a222a35e764aaa4a001da5\x00# branch.head x\x00# branch.upstream origin/x\x00# branch.ab +1 -0\x00? a\x00"))
	f.Add([]byte("2 R. N... 100644 100644 100644 a b R100 to\x00from\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		sb, err := observe.ParseStatusBranch(b)
		if err == nil && (sb.Ahead < 0 || sb.Behind < 0) {
			t.Fatalf("negative counts %+v", sb)
		}
	})
}

// TestCommitGraph: rev-list --parents output read into a graph; the
// commits reachable from a head counted through it, a merge's both sides
// once, parents outside it not at all; malformed lines refused.
func TestCommitGraph(t *testing.T) {
	t.Parallel()
	id := func(c byte) string { return string(bytes.Repeat([]byte{c}, 40)) }
	a, b, c, d, out := id('a'), id('b'), id('c'), id('d'), id('e')
	// d merges b and c, which both have a as parent; a's parent is outside.
	text := d + " " + b + " " + c + "\n" + b + " " + a + "\n" + c + " " + a + "\n" + a + " " + out + "\n"
	g, err := observe.ParseRevListParents([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	for head, want := range map[string]int{d: 4, b: 2, c: 2, a: 1, out: 0} {
		if got := g.Reachable(head); got != want {
			t.Errorf("Reachable(%c) = %d, want %d", head[0], got, want)
		}
	}
	if g, err := observe.ParseRevListParents(nil); err != nil || len(g) != 0 {
		t.Errorf("no output: %v, %v", g, err)
	}
	for name, in := range map[string]string{
		"not ids":     "xyz\n",
		"twice":       a + "\n" + a + "\n",
		"mixed sizes": a + " " + string(bytes.Repeat([]byte{'b'}, 64)) + "\n",
		"blank line":  a + "\n\n" + b + "\n",
	} {
		if _, err := observe.ParseRevListParents([]byte(in)); !errors.Is(err, hostio.ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", name, err)
		}
	}
}

// FuzzParseRevListParents: no output makes the parser panic, and every
// head's count is at most the graph's size.
func FuzzParseRevListParents(f *testing.F) {
	a, b := string(bytes.Repeat([]byte{'a'}, 40)), string(bytes.Repeat([]byte{'b'}, 40))
	f.Add([]byte(a + " " + b + "\n" + b + "\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		g, err := observe.ParseRevListParents(in)
		if err != nil {
			return
		}
		for h := range g {
			if n := g.Reachable(h); n < 1 || n > len(g) {
				t.Fatalf("Reachable(%s) = %d in a graph of %d", h, n, len(g))
			}
		}
	})
}
