package observe_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/internal/gitsandbox"
)

// TestDiscoverLegacyFacts: the facts discovery reads decide each place's
// class by identity, whatever the names say: a tree whose admin entry was
// deleted (a missing registration), a .git file naming a gitdir that does
// not exist, a symlink to a linked worktree, a bare clone, an unrelated
// repository named like a worktree, and a main checkout that is not a
// place.
func TestDiscoverLegacyFacts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := gitsandbox.NewSandbox(t)
	main := filepath.Join(s.Root, "repo")
	s.Git(s.Root, "init", "-q", "-b", "main", main)
	s.CommitFile(main, "README", "x\n")
	linked := filepath.Join(s.Root, "repo-linked")
	s.Git(main, "worktree", "add", "-q", "-b", "l", linked, "main")
	orphan := filepath.Join(s.Root, "repo-orphan")
	s.Git(main, "worktree", "add", "-q", "-b", "o", orphan, "main")
	if err := os.RemoveAll(filepath.Join(main, ".git", "worktrees", "repo-orphan")); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(s.Root, "repo-dangling")
	s.Write(dangling, ".git", "gitdir: "+filepath.Join(s.Root, "nowhere")+"\n")
	if err := os.Symlink(linked, filepath.Join(s.Root, "repo-link")); err != nil {
		t.Fatal(err)
	}
	s.Git(s.Root, "clone", "-q", "--bare", main, filepath.Join(s.Root, "repo.git"))
	lookalike := filepath.Join(s.Root, "repo-worktree")
	s.Git(s.Root, "init", "-q", "-b", "main", lookalike)
	s.CommitFile(lookalike, "other.txt", "y\n")

	repo, err := gitfiles.Discover(ctx, s.G, main)
	if err != nil {
		t.Fatal(err)
	}
	inv, err := gitfiles.TakeInventory(ctx, s.G, repo)
	if err != nil {
		t.Fatal(err)
	}
	places, err := observe.DiscoverLegacy(ctx, s.G, repo, inv, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !places.Complete || places.Bounds.Registered != 1 {
		t.Fatalf("bounds %+v complete %v", places.Bounds, places.Complete)
	}
	got := map[string]machine.MigrateClass{}
	for _, f := range places.Facts {
		got[filepath.Base(f.Path)] = machine.Classify(f).Class
	}
	want := map[string]machine.MigrateClass{
		"repo-linked": machine.ClassLinked, "repo-orphan": machine.ClassUnregistered, "repo-dangling": machine.ClassContradictory,
		"repo-link": machine.ClassSymlink, "repo.git": machine.ClassClone, "repo-worktree": machine.ClassOtherRepository,
		"home": machine.ClassOrdinary, "bin": machine.ClassOrdinary,
	}
	for name, c := range want {
		if got[name] != c {
			t.Errorf("%s classified %q, want %q", name, got[name], c)
		}
	}
	if _, ok := got["repo"]; ok {
		t.Error("the main checkout is listed as a place")
	}
	if len(got) != len(want) {
		t.Errorf("places %v, want exactly %v", got, want)
	}

	// A scan bound below the parent's entries is an incomplete inventory.
	places, err = observe.DiscoverLegacy(ctx, s.G, repo, inv, nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	if places.Complete || places.Bounds.Scanned != 2 {
		t.Errorf("bound 2: complete %v scanned %d, want incomplete after 2", places.Complete, places.Bounds.Scanned)
	}

	// A tree whose directory is gone keeps the key of the admin entry that
	// names it.
	if err := os.RemoveAll(linked); err != nil {
		t.Fatal(err)
	}
	if key := observe.AdminKeyNaming(repo, linked); key != "repo-linked" {
		t.Errorf("AdminKeyNaming = %q, want repo-linked", key)
	}
	if _, err := os.Lstat(linked); !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
}

// TestStashesAndUnpushed: a stash made in a linked worktree is listed with
// its base commit (the tree's HEAD), and Unpushed counts what HEAD adds
// over the tips, bounded.
func TestStashesAndUnpushed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := gitsandbox.NewSandbox(t)
	main := filepath.Join(s.Root, "repo")
	s.Git(s.Root, "init", "-q", "-b", "main", main)
	base := s.CommitFile(main, "README", "x\n")
	repo, err := gitfiles.Discover(ctx, s.G, main)
	if err != nil {
		t.Fatal(err)
	}
	if list, complete, err := observe.Stashes(ctx, s.G, repo); err != nil || !complete || len(list) != 0 {
		t.Fatalf("no stash: %v %v %v", list, complete, err)
	}
	wt := filepath.Join(s.Root, "wt")
	s.Git(main, "worktree", "add", "-q", "-b", "topic", wt, "main")
	s.CommitFile(wt, "a.txt", "a\n")
	head := s.CommitFile(wt, "b.txt", "b\n")
	s.Write(wt, "README", "changed\n")
	s.Git(wt, "stash", "push", "-q", "-m", "half done")
	list, complete, err := observe.Stashes(ctx, s.G, repo)
	if err != nil || !complete || len(list) != 1 {
		t.Fatalf("one stash: %v %v %v", list, complete, err)
	}
	if list[0].Parent != head || list[0].Subject != "On topic: half done" {
		t.Errorf("stash %+v, want parent %s and subject naming topic", list[0], head)
	}
	for _, tc := range []struct {
		bound, want int
	}{{10, 2}, {1, 2}} {
		n, err := observe.Unpushed(ctx, s.G, repo, head, []string{base}, tc.bound)
		if err != nil || n != tc.want {
			t.Errorf("Unpushed bound %d = %d, %v; want %d", tc.bound, n, err, tc.want)
		}
	}
	if n, err := observe.Unpushed(ctx, s.G, repo, head, []string{head}, 10); err != nil || n != 0 {
		t.Errorf("Unpushed of a tip = %d, %v; want 0", n, err)
	}
}
