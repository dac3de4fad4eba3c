package observe_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
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
	s := newSandbox(t)
	main := filepath.Join(s.root, "repo")
	s.git(s.root, "init", "-q", "-b", "main", main)
	s.commitFile(main, "README", "x\n")
	linked := filepath.Join(s.root, "repo-linked")
	s.git(main, "worktree", "add", "-q", "-b", "l", linked, "main")
	orphan := filepath.Join(s.root, "repo-orphan")
	s.git(main, "worktree", "add", "-q", "-b", "o", orphan, "main")
	if err := os.RemoveAll(filepath.Join(main, ".git", "worktrees", "repo-orphan")); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(s.root, "repo-dangling")
	s.write(dangling, ".git", "gitdir: "+filepath.Join(s.root, "nowhere")+"\n")
	if err := os.Symlink(linked, filepath.Join(s.root, "repo-link")); err != nil {
		t.Fatal(err)
	}
	s.git(s.root, "clone", "-q", "--bare", main, filepath.Join(s.root, "repo.git"))
	lookalike := filepath.Join(s.root, "repo-worktree")
	s.git(s.root, "init", "-q", "-b", "main", lookalike)
	s.commitFile(lookalike, "other.txt", "y\n")

	repo, err := observe.Discover(ctx, s.g, main)
	if err != nil {
		t.Fatal(err)
	}
	inv, err := observe.TakeInventory(ctx, s.g, repo)
	if err != nil {
		t.Fatal(err)
	}
	places, err := observe.DiscoverLegacy(ctx, s.g, repo, inv, nil, 0)
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
	places, err = observe.DiscoverLegacy(ctx, s.g, repo, inv, nil, 2)
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
	s := newSandbox(t)
	main := filepath.Join(s.root, "repo")
	s.git(s.root, "init", "-q", "-b", "main", main)
	base := s.commitFile(main, "README", "x\n")
	repo, err := observe.Discover(ctx, s.g, main)
	if err != nil {
		t.Fatal(err)
	}
	if list, complete, err := observe.Stashes(ctx, s.g, repo); err != nil || !complete || len(list) != 0 {
		t.Fatalf("no stash: %v %v %v", list, complete, err)
	}
	wt := filepath.Join(s.root, "wt")
	s.git(main, "worktree", "add", "-q", "-b", "topic", wt, "main")
	s.commitFile(wt, "a.txt", "a\n")
	head := s.commitFile(wt, "b.txt", "b\n")
	s.write(wt, "README", "changed\n")
	s.git(wt, "stash", "push", "-q", "-m", "half done")
	list, complete, err := observe.Stashes(ctx, s.g, repo)
	if err != nil || !complete || len(list) != 1 {
		t.Fatalf("one stash: %v %v %v", list, complete, err)
	}
	if list[0].Parent != head || list[0].Subject != "On topic: half done" {
		t.Errorf("stash %+v, want parent %s and subject naming topic", list[0], head)
	}
	for _, tc := range []struct {
		bound, want int
	}{{10, 2}, {1, 2}} {
		n, err := observe.Unpushed(ctx, s.g, repo, head, []string{base}, tc.bound)
		if err != nil || n != tc.want {
			t.Errorf("Unpushed bound %d = %d, %v; want %d", tc.bound, n, err, tc.want)
		}
	}
	if n, err := observe.Unpushed(ctx, s.g, repo, head, []string{head}, 10); err != nil || n != 0 {
		t.Errorf("Unpushed of a tip = %d, %v; want 0", n, err)
	}
}
