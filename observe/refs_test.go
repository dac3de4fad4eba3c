package observe_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/observe"
)

// TestTakeInventoryOfReadsBranchesAsGit: the branch tips an item's
// inventory reads from git's ref files directly are exactly what git
// for-each-ref says, for loose refs, packed refs, a ref both packed and
// loose (the loose one wins), a branch whose name is a directory of
// others, and a branch that does not exist; a symbolic or malformed branch
// ref is left to git, whose answer is used.
func TestTakeInventoryOfReadsBranchesAsGit(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	main := s.newOrigin()
	first := s.rev(main, "HEAD")
	s.git(main, "branch", "packed")
	s.git(main, "branch", "both")
	s.git(main, "branch", "dir/inner")
	s.git(main, "pack-refs", "--all")
	second := s.commitFile(main, "b.txt", "b\n")
	s.git(main, "branch", "loose")
	s.git(main, "branch", "-f", "both", second) // loose again, over the packed one
	repo := s.discover(main)
	g := observe.NewGit(&observe.Runner{})
	names := []string{"main", "packed", "both", "dir/inner", "loose", "dir", "absent"}

	inv, err := observe.TakeInventoryOf(context.Background(), g, repo, names...)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"main": second, "packed": first, "both": second, "dir/inner": first, "loose": second}
	if diff := cmp.Diff(want, inv.Branches); diff != "" {
		t.Errorf("branches read from files (-git +custody):\n%s", diff)
	}
	all, err := observe.TakeInventory(context.Background(), g, repo)
	if err != nil {
		t.Fatal(err)
	}
	for n, oid := range inv.Branches {
		if all.Branches[n] != oid {
			t.Errorf("branch %s: read %s from files, git for-each-ref says %s", n, oid, all.Branches[n])
		}
	}

	// A symbolic branch ref is not read as a file: git answers.
	if err := os.WriteFile(filepath.Join(repo.CommonDir, "refs", "heads", "sym"), []byte("ref: refs/heads/loose\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	inv, err = observe.TakeInventoryOf(context.Background(), g, repo, "sym", "packed")
	if err != nil {
		t.Fatal(err)
	}
	if inv.Branches["packed"] != first || inv.Branches["sym"] != s.rev(main, "refs/heads/sym") {
		t.Errorf("with a symbolic ref: branches %v, want packed %s and sym as git resolves it", inv.Branches, first)
	}

	// A malformed loose ref is never guessed at either.
	if err := os.WriteFile(filepath.Join(repo.CommonDir, "refs", "heads", "loose"), []byte("not an id\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	inv, err = observe.TakeInventoryOf(context.Background(), g, repo, "loose")
	if err != nil {
		t.Fatal(err)
	}
	if oid, ok := inv.Branches["loose"]; ok {
		t.Errorf("malformed loose ref read as %q; git for-each-ref skips it", oid)
	}
}
