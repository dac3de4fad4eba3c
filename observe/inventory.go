package observe

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
)

// Inventory is one read of the repository's worktree registry and local
// branches, shared by all the observations of one command.
type Inventory struct {
	Entries []WorktreeEntry
	// Branches maps a local branch's short name to its commit.
	Branches map[string]string
	byPath   map[string]int
}

// TakeInventory reads `git worktree list --porcelain -z` and the local
// branches once.
func TakeInventory(ctx context.Context, g *Git, repo Repo) (Inventory, error) {
	out, err := WorktreeList(ctx, g, repo, repo.MainCheckout)
	if err != nil {
		return Inventory{}, fmt.Errorf("read the worktree registry: %w", err)
	}
	entries, err := ParseWorktreeList(out)
	if err != nil {
		return Inventory{}, fmt.Errorf("read the worktree registry: %w", err)
	}
	refs, err := g.Observe(ctx, repo.MainCheckout, "for-each-ref", "--format=%(objectname) %(refname)", "refs/heads/")
	if err != nil {
		return Inventory{}, fmt.Errorf("read local branches: %w", err)
	}
	inv := Inventory{Entries: entries, Branches: map[string]string{}, byPath: map[string]int{}}
	sc := bufio.NewScanner(bytes.NewReader(refs))
	for sc.Scan() {
		oid, ref, ok := strings.Cut(sc.Text(), " ")
		if ok {
			inv.Branches[strings.TrimPrefix(ref, "refs/heads/")] = oid
		}
	}
	for i, e := range entries {
		inv.byPath[filepath.Clean(e.Path)] = i
	}
	return inv, nil
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
// out.
func (inv Inventory) CheckedOut(branch string) bool {
	for _, e := range inv.Entries {
		if e.Branch == "refs/heads/"+branch {
			return true
		}
	}
	return false
}
