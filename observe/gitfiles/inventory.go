package gitfiles

import (
	"context"
	"errors"
	"fmt"
	"github.com/custody-sh/custody/observe/hostio"
	"path/filepath"
	"slices"
	"strings"
)

// Inventory is one read of the repository's worktree registry and local
// branches, shared by all the observations of one command.
type Inventory struct {
	Entries []WorktreeEntry
	// Branches maps a local branch's short name to its commit.
	Branches map[string]string
	byPath   map[string]int
	// partial marks an inventory of one tree (TakeTreeInventory): the
	// registry's other entries are unknown.
	partial bool
	// names reads every admin entry's gitdir when an observation asks
	// which other entries name its tree (OtherEntries).
	names *adminNames
}

// TakeInventory reads `git worktree list --porcelain -z` and the local
// branches once.
func TakeInventory(ctx context.Context, g *hostio.Git, repo hostio.Repo) (Inventory, error) {
	inv, err := registry(ctx, g, repo)
	if err != nil {
		return inv, err
	}
	if inv.Branches, err = allBranches(ctx, g, repo); err != nil {
		return Inventory{}, err
	}
	return inv, nil
}

// TakeInventoryOf is TakeInventory for one item's observation: the whole
// registry, but only the named branches (empty names are skipped), read
// from git's ref files directly (git is asked only when they are not plain
// files custody reads exactly). Branches holds those of them that exist.
func TakeInventoryOf(ctx context.Context, g *hostio.Git, repo hostio.Repo, branches ...string) (Inventory, error) {
	inv, err := registry(ctx, g, repo)
	if err != nil {
		return inv, err
	}
	var names []string
	for _, b := range branches {
		if b != "" {
			names = append(names, b)
		}
	}
	inv.Branches, err = readBranches(repo, names)
	if errors.Is(err, errRefsUnreadable) {
		all, err := allBranches(ctx, g, repo)
		if err != nil {
			return Inventory{}, err
		}
		inv.Branches = map[string]string{}
		for _, n := range names {
			if oid, ok := all[n]; ok {
				inv.Branches[n] = oid
			}
		}
		return inv, nil
	}
	return inv, err
}

// registry reads `git worktree list --porcelain -z` into an inventory
// without branches.
func registry(ctx context.Context, g *hostio.Git, repo hostio.Repo) (Inventory, error) {
	out, err := WorktreeList(ctx, g, repo, repo.MainCheckout)
	if err != nil {
		return Inventory{}, fmt.Errorf("read the worktree registry: %w", err)
	}
	entries, err := ParseWorktreeList(out)
	if err != nil {
		return Inventory{}, fmt.Errorf("read the worktree registry: %w", err)
	}
	inv := Inventory{Entries: entries, Branches: map[string]string{}, byPath: map[string]int{}, names: newAdminNames(repo)}
	inv.indexListed(repo)
	return inv, nil
}

// LocalBranches returns the short names of the repository's local
// branches (refs/heads/), sorted: what a person may name where a branch
// or revision goes (shell completion offers them).
func LocalBranches(ctx context.Context, g *hostio.Git, repo hostio.Repo) ([]string, error) {
	all, err := allBranches(ctx, g, repo)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	slices.Sort(names)
	return names, nil
}

// allBranches reads every local branch's tip with git for-each-ref.
func allBranches(ctx context.Context, g *hostio.Git, repo hostio.Repo) (map[string]string, error) {
	refs, err := g.Observe(ctx, repo.MainCheckout, "for-each-ref", "--format=%(objectname) %(refname)", "refs/heads/")
	if err != nil {
		return nil, fmt.Errorf("read local branches: %w", err)
	}
	lines, err := ParseRefLines(refs)
	if err != nil {
		return nil, fmt.Errorf("read local branches: %w", err)
	}
	out := map[string]string{}
	for _, l := range lines {
		out[strings.TrimPrefix(l.Name, "refs/heads/")] = l.Object
	}
	return out, nil
}

// Entry returns the registry entry for path.
func (inv Inventory) Entry(path string) (WorktreeEntry, bool) {
	i, ok := inv.byPath[filepath.Clean(path)]
	if !ok {
		return WorktreeEntry{}, false
	}
	return inv.Entries[i], true
}

// CheckedOut reports whether any worktree has branch (short name) checked
// out. An inventory of one tree knows no other, so there it is always true:
// unknown keeps a branch.
func (inv Inventory) CheckedOut(branch string) bool {
	if inv.partial {
		return true
	}
	for _, e := range inv.Entries {
		if e.Branch == "refs/heads/"+branch {
			return true
		}
	}
	return false
}
