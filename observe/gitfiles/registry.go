package gitfiles

import (
	"context"
	"errors"
	"path/filepath"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/safefile"
)

// errEntryUnreadable is returned by readTreeEntry when a tree's admin files
// are not the plain, unlocked, consistent entry custody reads itself: the
// caller asks `git worktree list` instead.
var errEntryUnreadable = errors.New("the worktree's admin entry is not one custody reads exactly")

// TakeTreeInventory is the inventory one tree's observation needs, read
// from the tree's admin entry directly when it is the plain case: the
// entry <common>/worktrees/<key> names path/.git, path/.git names it back,
// it is not locked, and its HEAD is a commit id or a branch whose tip the
// ref files give. Then Entries holds that one entry, Branches the tip of
// branch (when it exists), and CheckedOut knows nothing (it reports every
// branch checked out, so nothing is deleted on its word), and OtherEntries
// reads the other entries' gitdir files only for an observation that asks
// (an assessment's). In any other case it is TakeRegistryInventory(branch):
// Git's whole registry (read from its files when every entry is plain, else
// listed by git).
func TakeTreeInventory(ctx context.Context, g *hostio.Git, repo hostio.Repo, path, key, branch string) (Inventory, error) {
	unlock, err := RegistryLock(ctx, repo, false)
	if err != nil {
		return Inventory{}, err
	}
	ent, err := readTreeEntry(repo, path, key)
	var tips map[string]string
	if err == nil && branch != "" {
		tips, err = readBranches(repo, []string{branch})
	}
	unlock()
	if err != nil {
		return TakeRegistryInventory(ctx, g, repo, branch)
	}
	if tips == nil {
		tips = map[string]string{}
	}
	return Inventory{Entries: []WorktreeEntry{ent}, Branches: tips, byPath: map[string]int{filepath.Clean(ent.Path): 0}, partial: true,
		names: newAdminNames(repo)}, nil
}

// readTreeEntry reads the registry entry git would list for the linked
// worktree at path with admin key: its path, HEAD and branch, from
// <common>/worktrees/<key>/{gitdir,HEAD,locked} and the ref files. Anything
// but the plain case is errEntryUnreadable.
func readTreeEntry(repo hostio.Repo, path, key string) (WorktreeEntry, error) {
	if key == "" || key != filepath.Base(key) || key == "." || key == ".." || !filepath.IsAbs(path) {
		return WorktreeEntry{}, errEntryUnreadable
	}
	admin := repo.AdminDir(key)
	if hostio.Lstat(filepath.Join(admin, "locked")).State != machine.PathAbsent {
		return WorktreeEntry{}, errEntryUnreadable // git reads the reason; locked trees are kept anyway
	}
	gitdir, err := safefile.Read(filepath.Join(admin, "gitdir"), SmallFileLimit)
	if err != nil || strings.TrimRight(string(gitdir), "\n") != filepath.Join(path, ".git") {
		return WorktreeEntry{}, errEntryUnreadable
	}
	if filepath.Clean(path) != path || AdminKeyOf(repo, path) != key {
		return WorktreeEntry{}, errEntryUnreadable // the .git file must name the entry back, exactly
	}
	ent, err := readHeadOf(filepath.Join(admin, "HEAD"))
	if err != nil {
		return WorktreeEntry{}, err
	}
	ent.Path = path
	if ent.Branch != "" {
		name := strings.TrimPrefix(ent.Branch, "refs/heads/")
		tips, err := readBranches(repo, []string{name})
		if err != nil || tips[name] == "" {
			return WorktreeEntry{}, errEntryUnreadable // unborn or unreadable: git says
		}
		ent.Head = tips[name]
	}
	return ent, nil
}
