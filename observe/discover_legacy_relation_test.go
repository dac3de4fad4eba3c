package observe_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/internal/gitsandbox"
)

// TestDiscoverLegacyRelations: a tree moved with plain mv is found by the
// admin entry its .git names, from both ends; an independent repository's
// history is related to this one's by commits, not names (a clone one
// commit ahead, a clone two behind); a bare repository a remote reads is
// that remote.
func TestDiscoverLegacyRelations(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := gitsandbox.NewSandbox(t)
	main := filepath.Join(s.Root, "repo")
	s.Git(s.Root, "init", "-q", "-b", "main", main)
	s.CommitFile(main, "README", "x\n")
	s.Git(s.Root, "clone", "-q", "--bare", main, filepath.Join(s.Root, "up.git"))
	s.Git(main, "remote", "add", "up", filepath.Join(s.Root, "up.git"))
	ahead := filepath.Join(s.Root, "clone-ahead")
	s.Git(s.Root, "clone", "-q", main, ahead)
	s.CommitFile(ahead, "only-here.txt", "y\n")
	behind := filepath.Join(s.Root, "clone-behind")
	s.Git(s.Root, "clone", "-q", main, behind)
	s.CommitFile(main, "later.txt", "z\n")
	s.CommitFile(main, "later2.txt", "z\n")
	old := filepath.Join(s.Root, "repo-old")
	s.Git(main, "worktree", "add", "-q", "-b", "m", old, "main")
	moved := filepath.Join(s.Root, "repo-new")
	if err := os.Rename(old, moved); err != nil {
		t.Fatal(err)
	}

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
	by := map[string]machine.Discovered{}
	for _, f := range places.Facts {
		by[filepath.Base(f.Path)] = machine.Classify(f)
	}
	for name, want := range map[string]struct {
		class machine.MigrateClass
		check func(machine.Discovered) bool
	}{
		"repo-old": {machine.ClassMoved, func(d machine.Discovered) bool { return d.MovedTo == moved && d.AdminKey == "repo-old" }},
		"repo-new": {machine.ClassMoved, func(d machine.Discovered) bool {
			return d.MovedFrom == old && d.Retry == machine.RepairMovedRetry(moved)
		}},
		"clone-ahead":  {machine.ClassClone, func(d machine.Discovered) bool { return d.SharesHistory && d.Ahead == 1 }},
		"clone-behind": {machine.ClassClone, func(d machine.Discovered) bool { return d.SharesHistory && d.Ahead == 0 }},
		"up.git":       {machine.ClassRemote, func(d machine.Discovered) bool { return d.Bare && len(d.Remotes) == 1 && d.Remotes[0] == "up" }},
	} {
		d, ok := by[name]
		if !ok || d.Class != want.class || !want.check(d) {
			t.Errorf("%s: %+v, want class %s", name, d, want.class)
		}
	}
}
