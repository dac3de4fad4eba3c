package gitfiles_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/internal/gitsandbox"
)

// TestTakeInventoryOfReadsBranchesAsGit: the branch tips an item's
// inventory reads from git's ref files directly are exactly what git
// for-each-ref says, for loose refs, packed refs, a ref both packed and
// loose (the loose one wins), a branch whose name is a directory of
// others, and a branch that does not exist; a symbolic or malformed branch
// ref is left to git, whose answer is used.
func TestTakeInventoryOfReadsBranchesAsGit(t *testing.T) {
	t.Parallel()
	s := gitsandbox.NewSandbox(t)
	main := s.NewOrigin()
	first := s.Rev(main, "HEAD")
	s.Git(main, "branch", "packed")
	s.Git(main, "branch", "both")
	s.Git(main, "branch", "dir/inner")
	s.Git(main, "pack-refs", "--all")
	second := s.CommitFile(main, "b.txt", "b\n")
	s.Git(main, "branch", "loose")
	s.Git(main, "branch", "-f", "both", second) // loose again, over the packed one
	repo := s.Discover(main)
	g := hostio.NewGit(&hostio.Runner{})
	names := []string{"main", "packed", "both", "dir/inner", "loose", "dir", "absent"}

	inv, err := gitfiles.TakeInventoryOf(context.Background(), g, repo, names...)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"main": second, "packed": first, "both": second, "dir/inner": first, "loose": second}
	if diff := cmp.Diff(want, inv.Branches); diff != "" {
		t.Errorf("branches read from files (-git +custody):\n%s", diff)
	}
	all, err := gitfiles.TakeInventory(context.Background(), g, repo)
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
	inv, err = gitfiles.TakeInventoryOf(context.Background(), g, repo, "sym", "packed")
	if err != nil {
		t.Fatal(err)
	}
	if inv.Branches["packed"] != first || inv.Branches["sym"] != s.Rev(main, "refs/heads/sym") {
		t.Errorf("with a symbolic ref: branches %v, want packed %s and sym as git resolves it", inv.Branches, first)
	}

	// A malformed loose ref is never guessed at either.
	if err := os.WriteFile(filepath.Join(repo.CommonDir, "refs", "heads", "loose"), []byte("not an id\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	inv, err = gitfiles.TakeInventoryOf(context.Background(), g, repo, "loose")
	if err != nil {
		t.Fatal(err)
	}
	if oid, ok := inv.Branches["loose"]; ok {
		t.Errorf("malformed loose ref read as %q; git for-each-ref skips it", oid)
	}
}

// TestTakeTreeInventoryMatchesGit: one tree's inventory read from its admin
// files says exactly what `git worktree list` says of it (path, HEAD,
// branch, detached; neither locked nor prunable), on a branch, on a packed
// branch and detached; a locked tree, one whose .git names another entry,
// and an unborn branch are left to git, whose answer is used.
func TestTakeTreeInventoryMatchesGit(t *testing.T) {
	t.Parallel()
	s := gitsandbox.NewSandbox(t)
	main := s.NewOrigin()
	repo := s.Discover(main)
	g := hostio.NewGit(&hostio.Runner{})
	add := func(name string, args ...string) string {
		wt := filepath.Join(s.Root, name)
		s.Git(main, append([]string{"worktree", "add", "-q"}, append(args, wt)...)...)
		return wt
	}
	onBranch := add("on-branch", "-b", "on-branch")
	s.CommitFile(onBranch, "x.txt", "x\n")
	packed := add("packed", "-b", "packed")
	s.Git(main, "pack-refs", "--all")
	detached := add("detached", "--detach")
	locked := add("locked", "-b", "locked")
	s.Git(main, "worktree", "lock", "--reason", "mine", locked)
	unborn := add("unborn", "-b", "unborn")
	s.Git(unborn, "checkout", "-q", "--orphan", "nothing-yet")

	full, err := gitfiles.TakeInventory(context.Background(), g, repo)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path, branch string
		partial      bool
	}{
		{onBranch, "on-branch", true}, {packed, "packed", true}, {detached, "", true},
		{locked, "locked", false}, {unborn, "nothing-yet", false},
	} {
		key := gitfiles.AdminKeyOf(repo, c.path)
		inv, err := gitfiles.TakeTreeInventory(context.Background(), g, repo, c.path, key, c.branch)
		if err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		got, ok := inv.Entry(c.path)
		want, _ := full.Entry(c.path)
		if !ok {
			t.Errorf("%s: not in its own inventory", c.path)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: entry (-git worktree list +custody):\n%s", c.path, diff)
		}
		if c.branch != "" && inv.Branches[c.branch] != full.Branches[c.branch] {
			t.Errorf("%s: branch %s tip %q, git says %q", c.path, c.branch, inv.Branches[c.branch], full.Branches[c.branch])
		}
		if partial := len(inv.Entries) == 1; partial != c.partial {
			t.Errorf("%s: %d entries, want read from its admin files: %v", c.path, len(inv.Entries), c.partial)
		}
		if c.partial && !inv.CheckedOut("no-such-branch") {
			t.Errorf("%s: an inventory of one tree claims to know no tree has a branch checked out", c.path)
		}
	}

	// A .git file that names another admin entry is not this tree's.
	if err := os.WriteFile(filepath.Join(detached, ".git"), []byte("gitdir: "+filepath.Join(repo.CommonDir, "worktrees", "packed")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	inv, err := gitfiles.TakeTreeInventory(context.Background(), g, repo, detached, "detached", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Entries) == 1 {
		t.Errorf("a .git naming another entry was read as the tree's own: %+v", inv.Entries)
	}
}
