package agents

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
)

// TestLocateHookTree: a hook finds the linked worktree its directory is in
// (the tree's top or below it, through a symlinked path too) from git's
// files alone, and refuses with not-in-worktree a main checkout, a
// directory in no repository, and a tree whose .git names an admin entry
// that does not name it back.
func TestLocateHookTree(t *testing.T) {
	t.Parallel()
	r := fixtures.New(t, fixtures.Options{})
	tree := filepath.Join(r.Root, "trees", "t1")
	r.Git("worktree", "add", "-q", "-b", "b1", tree)
	if err := os.MkdirAll(filepath.Join(tree, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(r.Root, "link")
	if err := os.Symlink(tree, link); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{tree, filepath.Join(tree, "a", "b"), filepath.Join(link, "a")} {
		got, err := LocateHookTree(dir)
		if err != nil {
			t.Fatalf("LocateHookTree(%s): %v", dir, err)
		}
		if got.Path != tree || got.Key != "t1" || got.Repo.CommonDir != filepath.Join(r.Dir, ".git") || got.Repo.MainCheckout != r.Dir {
			t.Errorf("LocateHookTree(%s) = %+v, want tree %s key t1 of %s", dir, got, tree, r.Dir)
		}
	}
	// A copy of the tree's .git elsewhere names t1's admin entry, which
	// does not name it back.
	forged := filepath.Join(r.Root, "forged")
	if err := os.MkdirAll(forged, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(tree, ".git"))
	if err != nil {
		t.Fatal(err)
	}
	r.WriteFile(forged, ".git", string(b))
	for _, dir := range []string{r.Dir, filepath.Join(r.Dir, "sub"), t.TempDir(), forged} {
		_, err := LocateHookTree(dir)
		var ref *machine.Refusal
		if !errors.As(err, &ref) || ref.Code != machine.CodeNotInWorktree || ref.Retry != "custody list" {
			t.Errorf("LocateHookTree(%s): %v, want a not-in-worktree refusal", dir, err)
		}
	}
}
