package gitfiles

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/safefile"
)

// registryLimit bounds how many admin entries custody reads itself; a
// larger registry is left to git.
const registryLimit = 100000

// TakeRegistryInventory is TakeInventoryOf(branches...) read from git's
// files instead of `git worktree list`, when every entry is the plain case:
// the main checkout first (its HEAD is <common>/HEAD), then each admin
// entry <common>/worktrees/<key> by key, whose gitdir names an absolute
// clean PATH/.git, that is not locked, and whose HEAD is a commit id or a
// branch whose tip the ref files give. An entry is prunable, as git says,
// when PATH/.git is gone. Anything else (a locked or half-made entry, a
// relative or unreadable gitdir, a PATH/.git that is a symlink, an unborn
// or symbolic HEAD, a reftable store, an entry that is not a directory) is
// TakeInventoryOf: git's own listing, as before. The answer lists every
// tree, so CheckedOut knows them all.
func TakeRegistryInventory(ctx context.Context, g *hostio.Git, repo hostio.Repo, branches ...string) (Inventory, error) {
	unlock, err := RegistryLock(ctx, repo, false)
	if err != nil {
		return Inventory{}, err
	}
	inv, err := readRegistry(repo, branches)
	unlock()
	if err != nil {
		return TakeInventoryOf(ctx, g, repo, branches...)
	}
	return inv, nil
}

// readRegistry reads the registry and the named branches from git's
// files; errEntryUnreadable or errRefsUnreadable when they are not the
// plain case.
func readRegistry(repo hostio.Repo, branches []string) (Inventory, error) {
	if repo.MainCheckout == "" || repo.CommonDir == "" {
		return Inventory{}, errEntryUnreadable
	}
	main, err := readHeadOf(filepath.Join(repo.CommonDir, "HEAD"))
	if err != nil {
		return Inventory{}, err
	}
	main.Path = repo.MainCheckout
	entries := []WorktreeEntry{main}
	keys, err := adminKeys(repo)
	if err != nil {
		return Inventory{}, err
	}
	for _, key := range keys {
		ent, err := readAdminEntry(repo, key)
		if err != nil {
			return Inventory{}, err
		}
		entries = append(entries, ent)
	}
	// Every branch a HEAD names and every branch asked for, read in one
	// pass over the ref files.
	names := slices.Clone(branches)
	for _, e := range entries {
		if e.Branch != "" {
			names = append(names, strings.TrimPrefix(e.Branch, "refs/heads/"))
		}
	}
	names = slices.DeleteFunc(names, func(n string) bool { return n == "" })
	slices.Sort(names)
	tips, err := readBranches(repo, slices.Compact(names))
	if err != nil {
		return Inventory{}, err
	}
	inv := Inventory{Entries: entries, Branches: map[string]string{}, byPath: map[string]int{}, names: newAdminNames(repo)}
	for i := range entries {
		if b := entries[i].Branch; b != "" {
			tip := tips[strings.TrimPrefix(b, "refs/heads/")]
			if tip == "" {
				return Inventory{}, errEntryUnreadable // unborn: git says
			}
			entries[i].Head = tip
		}
		inv.byPath[filepath.Clean(entries[i].Path)] = i
	}
	for _, b := range branches {
		if oid, ok := tips[b]; ok && b != "" {
			inv.Branches[b] = oid
		}
	}
	return inv, nil
}

// adminKeys lists <common>/worktrees, sorted; none when it does not exist.
func adminKeys(repo hostio.Repo) ([]string, error) {
	f, err := os.Open(filepath.Join(repo.CommonDir, "worktrees"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, errEntryUnreadable
	}
	defer f.Close()
	keys, err := f.Readdirnames(-1)
	if err != nil || len(keys) > registryLimit {
		return nil, errEntryUnreadable
	}
	slices.Sort(keys)
	return keys, nil
}

// readAdminEntry reads the entry git lists for <common>/worktrees/key,
// its HEAD's branch not yet resolved.
func readAdminEntry(repo hostio.Repo, key string) (WorktreeEntry, error) {
	admin := repo.AdminDir(key)
	if fi, err := os.Lstat(admin); err != nil || !fi.IsDir() {
		return WorktreeEntry{}, errEntryUnreadable
	}
	if hostio.Lstat(filepath.Join(admin, "locked")).State != machine.PathAbsent {
		return WorktreeEntry{}, errEntryUnreadable // git reads the reason
	}
	if b, err := safefile.Read(filepath.Join(admin, "commondir"), SmallFileLimit); err != nil || string(b) != "../..\n" {
		return WorktreeEntry{}, errEntryUnreadable // not what git writes: git says what it makes of it
	}
	gitdir, err := safefile.Read(filepath.Join(admin, "gitdir"), SmallFileLimit)
	if err != nil {
		return WorktreeEntry{}, errEntryUnreadable
	}
	link := strings.TrimSuffix(string(gitdir), "\n")
	path, ok := strings.CutSuffix(link, string(filepath.Separator)+".git")
	if !ok || !filepath.IsAbs(path) || filepath.Clean(path) != path || strings.ContainsAny(link, "\n\r\x00") {
		return WorktreeEntry{}, errEntryUnreadable
	}
	ent, err := readHeadOf(filepath.Join(admin, "HEAD"))
	if err != nil {
		return WorktreeEntry{}, err
	}
	ent.Path = path
	switch pi := hostio.Lstat(link); {
	case pi.State == machine.PathAbsent:
		ent.Prunable, ent.PrunableReason = true, "gitdir file points to non-existent location"
	case pi.State != machine.PathPresent || pi.IsSymlink:
		return WorktreeEntry{}, errEntryUnreadable // git follows a link; custody leaves it to git
	}
	return ent, nil
}

// readHeadOf reads a HEAD file: a commit id (detached) or a local branch
// (Branch set, Head left for the caller to resolve).
func readHeadOf(file string) (WorktreeEntry, error) {
	head, err := safefile.Read(file, SmallFileLimit)
	if err != nil {
		return WorktreeEntry{}, errEntryUnreadable
	}
	line := strings.TrimSuffix(string(head), "\n")
	if ref, ok := strings.CutPrefix(line, "ref: "); ok {
		name, ok := strings.CutPrefix(ref, "refs/heads/")
		if !ok || !plainRefName(name) {
			return WorktreeEntry{}, errEntryUnreadable
		}
		return WorktreeEntry{Branch: ref}, nil
	}
	if !hostio.IsHexOID(line) {
		return WorktreeEntry{}, errEntryUnreadable
	}
	return WorktreeEntry{Head: line, Detached: true}, nil
}
