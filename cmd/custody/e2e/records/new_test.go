package records

// custody new: safe ids and paths for any name, and the commit it starts
// from.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
)

// TestNewEdgeCases: names that are all punctuation are refused; path-like
// ones become safe ids under the managed root; --from an annotated tag resolves to the
// commit it tags; an unborn HEAD is a clear unknown-revision error that
// makes nothing.
func TestNewEdgeCases(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	root := filepath.Join(r.Dir, ".worktrees") + string(os.PathSeparator)
	for _, name := range []string{"!!!", "…", "..", " "} {
		if b := clitest.DecodeError(t, clitest.MustCustody(t, r, 1, "new", "--json", "--", name)); b.Code != "empty-name" {
			t.Errorf("new %q: %+v, want empty-name", name, b)
		}
	}
	for _, name := range []string{"../../escape", "/abs/path", "a\nb"} {
		nr := clitest.DecodeResult[steps.NewResult](t, clitest.MustCustody(t, r, 0, "new", "--json", "--", name), "new")
		if !strings.HasPrefix(nr.Path, root) || strings.Contains(nr.Path[len(root):], string(os.PathSeparator)) || !machine.ValidID(nr.ID) {
			t.Errorf("new %q: id %q path %q", name, nr.ID, nr.Path)
		}
		if nr.Branch != "custody/"+nr.ID {
			t.Errorf("new %q: branch %q", name, nr.Branch)
		}
	}
	first := r.Head(r.Dir)
	r.Git("tag", "-a", "-m", "annotated", "v9", first)
	r.Commit(r.Dir, "later.txt", "later\n")
	nr := clitest.DecodeResult[steps.NewResult](t, clitest.MustCustody(t, r, 0, "new", "tagged", "--from", "v9", "--json"), "new")
	if nr.Head != first || r.Head(nr.Path) != first {
		t.Errorf("--from an annotated tag: head %s (tree at %s), want the tagged commit %s", nr.Head, r.Head(nr.Path), first)
	}

	empty := fixtures.New(t, fixtures.Options{NoRemote: true})
	empty.Git("update-ref", "-d", "HEAD")
	clitest.MustCustody(t, empty, 0, "init")
	res := clitest.MustCustody(t, empty, 1, "new", "x", "--json")
	if b := clitest.DecodeError(t, res); b.Code != "unknown-revision" {
		t.Errorf("new with an unborn HEAD: %+v", b)
	}
	if ents, _ := os.ReadDir(filepath.Join(empty.Dir, ".worktrees")); len(ents) != 0 {
		t.Errorf("new with an unborn HEAD left %d entries in the managed root", len(ents))
	}
}

// TestNewFromInsideLinkedTree: `custody new` starts from the main
// checkout's HEAD, even when run inside another managed tree whose HEAD
// has moved on.
func TestNewFromInsideLinkedTree(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	_, path := clitest.NewTree(t, r, "first")
	moved := r.Commit(path, "x.txt", "x\n")
	res := clitest.RunBin(t, clitest.Bin(), r, path, nil, "new", "second", "--json")
	if res.Code != 0 {
		t.Fatalf("new inside a linked tree: %s", res)
	}
	nr := clitest.DecodeResult[steps.NewResult](t, res, "new")
	if main := r.Head(r.Dir); nr.Head != main || nr.Head == moved || r.Head(nr.Path) != main {
		t.Errorf("new inside a linked tree started from %s, want the main checkout's HEAD %s", nr.Head, main)
	}
	if !strings.HasPrefix(nr.Path, filepath.Join(r.Dir, ".worktrees")+string(os.PathSeparator)) {
		t.Errorf("new inside a linked tree made %s, not under the main checkout's managed root", nr.Path)
	}
}
