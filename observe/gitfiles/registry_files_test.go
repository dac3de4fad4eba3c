package gitfiles_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/internal/gitsandbox"
)

// TestTakeRegistryInventoryMatchesGit holds the registry read from git's
// files to exactly what `git worktree list` gives (every entry, its HEAD,
// branch, detached and prunable state; the branches asked for; which are
// checked out), and requires that it asked git nothing in the plain case,
// and asked git's registry whenever an entry is not the plain case.
func TestTakeRegistryInventoryMatchesGit(t *testing.T) {
	t.Parallel()
	s := gitsandbox.NewSandbox(t)
	main := s.NewOrigin()
	repo := s.Discover(main)
	add := func(name string, args ...string) string {
		wt := filepath.Join(s.Root, name)
		s.Git(main, append([]string{"worktree", "add", "-q"}, append(args, wt)...)...)
		return wt
	}
	onBranch := add("on-branch", "-b", "on-branch")
	s.CommitFile(onBranch, "x.txt", "x\n")
	add("packed", "-b", "packed")
	s.Git(main, "pack-refs", "--all")
	add("detached", "--detach")
	gone := add("gone", "-b", "gone")
	if err := os.RemoveAll(gone); err != nil { // deleted by hand, not pruned
		t.Fatal(err)
	}
	s.Git(main, "branch", "-q", "free")
	branches := []string{"on-branch", "packed", "gone", "free", "no-such-branch"}

	compare := func(t *testing.T, wantGit bool) {
		t.Helper()
		var trace bytes.Buffer
		got, err := gitfiles.TakeRegistryInventory(context.Background(), s.Traced(&trace), repo, branches...)
		if err != nil {
			t.Fatal(err)
		}
		if asked := strings.Contains(trace.String(), "worktree list"); asked != wantGit {
			t.Errorf("asked git's registry: %v, want %v (trace %q)", asked, wantGit, trace.String())
		}
		want, err := gitfiles.TakeInventoryOf(context.Background(), s.G, repo, branches...)
		if err != nil {
			t.Fatal(err)
		}
		byPath := cmpopts.SortSlices(func(a, b gitfiles.WorktreeEntry) bool { return a.Path < b.Path })
		if diff := cmp.Diff(want.Entries, got.Entries, byPath); diff != "" {
			t.Errorf("entries (-git worktree list +custody):\n%s", diff)
		}
		if got.Entries[0].Path != repo.MainCheckout {
			t.Errorf("first entry %s, want the main checkout %s", got.Entries[0].Path, repo.MainCheckout)
		}
		if diff := cmp.Diff(want.Branches, got.Branches); diff != "" {
			t.Errorf("branches (-git +custody):\n%s", diff)
		}
		for _, b := range append(slices.Clone(branches), "main") {
			if got.CheckedOut(b) != want.CheckedOut(b) {
				t.Errorf("CheckedOut(%s) = %v, git's registry says %v", b, got.CheckedOut(b), want.CheckedOut(b))
			}
		}
		for _, e := range want.Entries {
			if _, ok := got.Entry(e.Path); !ok {
				t.Errorf("Entry(%s) not found", e.Path)
			}
		}
		if _, ok := got.Entry(filepath.Join(s.Root, "never-made")); ok {
			t.Error("a path no entry names was found")
		}
	}
	t.Run("plain", func(t *testing.T) { compare(t, false) })

	locked := add("locked", "-b", "locked")
	s.Git(main, "worktree", "lock", "--reason", "mine", locked)
	t.Run("locked", func(t *testing.T) { compare(t, true) })
	s.Git(main, "worktree", "unlock", locked)
	t.Run("unlocked", func(t *testing.T) { compare(t, false) })

	relative := filepath.Join(repo.CommonDir, "worktrees", "detached", "gitdir")
	old, err := os.ReadFile(relative)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(relative, []byte("../../../detached/.git\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Run("relative gitdir", func(t *testing.T) { compare(t, true) })
	if err := os.WriteFile(relative, old, 0o644); err != nil {
		t.Fatal(err)
	}

	unborn := add("unborn", "-b", "unborn")
	s.Git(unborn, "checkout", "-q", "--orphan", "nothing-yet")
	t.Run("unborn", func(t *testing.T) { compare(t, true) })
}
