package gitfiles_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/internal/gitsandbox"
)

// TestOtherEntriesNamingTheTree: an admin entry of another key whose gitdir
// names a tree's path, in every spelling git accepts for it, is found by
// every inventory an assessment uses (git's listing, the registry read from
// files, one tree's own entry when asked), with its HEAD, ready marker, lock
// and prunable state; an entry naming another path, and the tree's own entry, are not.
// Once the tree is gone, the entries naming its path are still found. No
// spelling costs a git process: every inventory's answer came from files.
func TestOtherEntriesNamingTheTree(t *testing.T) {
	t.Parallel()
	s := gitsandbox.NewSandbox(t)
	main := s.NewOrigin()
	repo := s.Discover(main)
	tree := filepath.Join(s.Root, "trees", "tree")
	s.Git(main, "worktree", "add", "-q", "-b", "tree", tree)
	other := filepath.Join(s.Root, "trees", "other")
	s.Git(main, "worktree", "add", "-q", "-b", "other", other)
	lone := strings.TrimSpace(s.Git(main, "commit-tree", "-m", "only here", "HEAD^{tree}"))
	if err := os.Mkdir(filepath.Join(s.Root, "trees", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(s.Root, "trees"), filepath.Join(s.Root, "via-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(tree, filepath.Join(s.Root, "tree-link")); err != nil {
		t.Fatal(err)
	}
	entry := func(key, gitdir string, extra ...string) string {
		dir := repo.AdminDir(key)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		files := append([]string{"gitdir", gitdir, "commondir", "../..\n", "HEAD", lone + "\n"}, extra...)
		for i := 0; i < len(files); i += 2 {
			if err := os.WriteFile(filepath.Join(dir, files[i]), []byte(files[i+1]), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	dotgit := filepath.Join(tree, ".git")
	spellings := map[string]string{
		"exact":          dotgit + "\n",
		"trailing-slash": dotgit + "/\n",
		"no-dotgit":      tree + "\n",
		"double-slash":   strings.Replace(dotgit, "/trees/", "//trees/", 1) + "\n",
		"dot-segment":    filepath.Join(s.Root, "trees", "x") + "/../tree/.git\n",
		"trailing-space": dotgit + "  \n",
		"relative":       "../../../../trees/tree/.git\n",
		"via-link":       filepath.Join(s.Root, "via-link", "tree", ".git") + "\n",
		"tree-link":      filepath.Join(s.Root, "tree-link", ".git") + "\n",
	}
	var want []string
	for key, gitdir := range spellings {
		entry(key, gitdir)
		want = append(want, key)
	}
	entry("locked", dotgit+"\n", "locked", "on a usb disk\n")
	want = append(want, "locked")
	entry("on-branch", dotgit+"\n", "HEAD", "ref: refs/heads/other\n")
	want = append(want, "on-branch")
	entry("marked", dotgit+"\n", gitfiles.MarkerName, "rec-123456\n")
	want = append(want, "marked")
	entry("names-other", filepath.Join(other, ".git")+"\n") // another tree's path: not listed
	slices.Sort(want)

	pi := hostio.Lstat(tree)
	id := hostio.Identity{Dev: pi.Dev, Ino: pi.Ino}
	check := func(t *testing.T, inv gitfiles.Inventory, present bool) {
		t.Helper()
		got := inv.OtherEntries(tree, "tree", "tree", present, id, true)
		var keys []string
		for _, e := range got {
			keys = append(keys, e.Key)
			if e.Dir != repo.AdminDir(e.Key) || e.CommonDir != repo.CommonDir {
				t.Errorf("%s: dir %s, common dir %s", e.Key, e.Dir, e.CommonDir)
			}
			switch e.Key {
			case "on-branch":
				if e.Branch != "other" || e.Head != "" {
					t.Errorf("%s: HEAD %q branch %q, want branch other", e.Key, e.Head, e.Branch)
				}
			case "locked":
				if !e.Locked || e.LockReason != "on a usb disk" {
					t.Errorf("%s: locked %v %q", e.Key, e.Locked, e.LockReason)
				}
			case "marked":
				if e.Marker != "rec-123456" || e.Head != lone {
					t.Errorf("%s: marker %q HEAD %q, want rec-123456 and %s", e.Key, e.Marker, e.Head, lone)
				}
			default:
				if e.Head != lone || e.Branch != "" || e.Marker != "" {
					t.Errorf("%s: HEAD %q branch %q, want detached %s", e.Key, e.Head, e.Branch, lone)
				}
			}
			// git prunes an entry whose gitdir names nothing there: a
			// trailing slash after the .git file does, and trailing
			// spaces (which prune, unlike git's listing, keeps), and
			// every spelling once the tree is gone.
			if wantPrunable := !present || e.Key == "trailing-slash" || e.Key == "trailing-space"; e.Prunable != wantPrunable {
				t.Errorf("%s: prunable %v, want %v", e.Key, e.Prunable, wantPrunable)
			}
		}
		slices.Sort(keys)
		if !slices.Equal(keys, want) {
			t.Errorf("other entries %v, want %v", keys, want)
		}
	}
	ctx := context.Background()
	var trace bytes.Buffer
	traced := s.Traced(&trace)
	t.Run("git-listing", func(t *testing.T) {
		inv, err := gitfiles.TakeInventory(ctx, s.G, repo)
		if err != nil {
			t.Fatal(err)
		}
		check(t, inv, true)
	})
	t.Run("registry-files", func(t *testing.T) {
		inv, err := gitfiles.TakeRegistryInventory(ctx, s.G, repo, "tree")
		if err != nil {
			t.Fatal(err)
		}
		check(t, inv, true)
	})
	t.Run("one-tree", func(t *testing.T) {
		inv, err := gitfiles.TakeTreeInventory(ctx, traced, repo, tree, "tree", "tree")
		if err != nil {
			t.Fatal(err)
		}
		if trace.Len() != 0 {
			t.Errorf("one tree's inventory asked git: %q", trace.String())
		}
		check(t, inv, true)
		// Not asked (an observation that is no assessment): one tree's
		// inventory reads only its own entry.
		if got := inv.OtherEntries(tree, "tree", "tree", true, id, false); got != nil {
			t.Errorf("not asked, one tree's inventory read the others: %+v", got)
		}
	})
	t.Run("tree-gone", func(t *testing.T) {
		if err := os.RemoveAll(tree); err != nil {
			t.Fatal(err)
		}
		inv, err := gitfiles.TakeRegistryInventory(ctx, s.G, repo, "tree")
		if err != nil {
			t.Fatal(err)
		}
		// Gone, its spellings through a link to the tree itself no longer
		// lead anywhere: the others are found by name in the same parent.
		want = slices.DeleteFunc(want, func(k string) bool { return k == "tree-link" })
		check(t, inv, false)
	})
}

// TestOtherEntriesUnknown: an entry whose gitdir cannot be read (a
// directory there, a NUL byte git would end the path at) may name the tree,
// so it is listed as unreadable; one without a gitdir names nothing.
func TestOtherEntriesUnknown(t *testing.T) {
	t.Parallel()
	s := gitsandbox.NewSandbox(t)
	main := s.NewOrigin()
	repo := s.Discover(main)
	tree := filepath.Join(s.Root, "tree")
	s.Git(main, "worktree", "add", "-q", "-b", "tree", tree)
	odd := repo.AdminDir("odd")
	if err := os.MkdirAll(filepath.Join(odd, "gitdir"), 0o755); err != nil { // a directory, not a file
		t.Fatal(err)
	}
	if err := os.MkdirAll(repo.AdminDir("half-made"), 0o755); err != nil { // no gitdir yet: names nothing
		t.Fatal(err)
	}
	if err := os.MkdirAll(repo.AdminDir("nul"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo.AdminDir("nul"), "gitdir"), []byte(filepath.Join(tree, ".git")+"\x00more\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pi := hostio.Lstat(tree)
	id := hostio.Identity{Dev: pi.Dev, Ino: pi.Ino}
	inv, err := gitfiles.TakeTreeInventory(context.Background(), s.G, repo, tree, "tree", "tree")
	if err != nil {
		t.Fatal(err)
	}
	got := inv.OtherEntries(tree, "tree", "tree", true, id, true)
	if len(got) != 2 || got[0].Key != "nul" || got[1].Key != "odd" || got[0].Unreadable == "" || got[1].Unreadable == "" {
		t.Fatalf("other entries %+v, want nul and odd as unreadable", got)
	}
	for _, k := range []string{"odd", "nul"} {
		if err := os.RemoveAll(repo.AdminDir(k)); err != nil {
			t.Fatal(err)
		}
	}
	if got := inv.OtherEntries(tree, "tree", "tree", true, id, true); len(got) != 2 {
		t.Errorf("an inventory's answer changed after it was read once: %+v", got)
	}
	inv, err = gitfiles.TakeTreeInventory(context.Background(), s.G, repo, tree, "tree", "tree")
	if err != nil {
		t.Fatal(err)
	}
	if got := inv.OtherEntries(tree, "tree", "tree", true, id, true); len(got) != 0 {
		t.Errorf("other entries %+v, want none", got)
	}
}

// TestListedTwiceIsTheTreesOwn: a path git lists twice (another entry
// names it exactly) is observed through the entry its own .git names,
// whichever order git lists them in, never the other entry's HEAD.
func TestListedTwiceIsTheTreesOwn(t *testing.T) {
	t.Parallel()
	s := gitsandbox.NewSandbox(t)
	main := s.NewOrigin()
	repo := s.Discover(main)
	tree := filepath.Join(s.Root, "tree")
	s.Git(main, "worktree", "add", "-q", "-b", "tree", tree)
	head := s.Rev(tree, "HEAD")
	lone := strings.TrimSpace(s.Git(main, "commit-tree", "-m", "only here", "HEAD^{tree}"))
	for _, key := range []string{"a-before", "z-after"} {
		dir := repo.AdminDir(key)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, content := range map[string]string{"gitdir": filepath.Join(tree, ".git") + "\n", "commondir": "../..\n", "HEAD": lone + "\n"} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	inv, err := gitfiles.TakeInventory(context.Background(), s.G, repo)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range inv.Entries {
		if e.Path == tree {
			n++
		}
	}
	if n != 3 {
		t.Fatalf("git lists %s %d times, want 3", tree, n)
	}
	e, ok := inv.Entry(tree)
	if !ok || e.Head != head || e.Branch != "refs/heads/tree" {
		t.Errorf("Entry(%s) = %+v, want the tree's own (branch tree at %s)", tree, e, head)
	}
}
