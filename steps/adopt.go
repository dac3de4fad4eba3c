package steps

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/store"
)

// Adopt enrolls an existing linked worktree of this repository, named by
// its exact path, as an adopted record (id = git's admin key). custody may
// later remove it through a reviewed plan, but never deletes its branch.
func Adopt(ctx context.Context, e *Env, path string) (NewResult, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return NewResult{}, err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	refuse := func(format string, args ...any) error {
		return &machine.Refusal{Code: machine.CodeNotOwned, Path: abs, Retry: "git worktree list",
			Message: fmt.Sprintf(format, args...)}
	}
	inv, err := observe.TakeInventory(ctx, e.Git, e.Repo)
	if err != nil {
		return NewResult{}, err
	}
	ent, ok := inv.Entry(abs)
	if !ok || abs == e.Repo.MainCheckout || ent.Bare {
		return NewResult{}, refuse("%s is not a linked worktree of the repository at %s", abs, e.Repo.MainCheckout)
	}
	key := observe.AdminKeyOf(e.Repo, abs)
	if key == "" {
		return NewResult{}, refuse("git's admin entry for %s cannot be identified exactly (its .git file and the entry's gitdir must name each other)", abs)
	}
	recs, err := e.Store.List()
	if err != nil {
		return NewResult{}, err
	}
	for _, r := range recs {
		if r.State != machine.StateTombstoned && (r.Path == abs || r.ID == key) {
			return NewResult{}, &machine.Refusal{Code: machine.CodeWrongState, Path: abs, Retry: "custody show " + r.ID,
				Message: fmt.Sprintf("%s is already in custody as %s (%s)", abs, r.ID, r.State)}
		}
	}
	if old, err := e.Store.Get(key); err == nil {
		return NewResult{}, &machine.Refusal{Code: machine.CodeWrongState, Path: abs, Retry: "custody list --all",
			Message: fmt.Sprintf("a record %s already exists (%s); custody does not reuse record ids", key, old.State)}
	} else if !errors.Is(err, store.ErrNotFound) {
		return NewResult{}, err
	}
	rec := machine.Record{ID: key, Kind: machine.KindWorktree, Origin: machine.OriginAdopted, Path: abs,
		Branch: strings.TrimPrefix(ent.Branch, "refs/heads/"), BaseCommit: ent.Head, AdminKey: key}
	if err := writeMarker(e.Repo, key); err != nil {
		return NewResult{}, fmt.Errorf("write the ready marker of %s: %w", key, err)
	}
	obs, _, err := e.observe(ctx, rec, observe.Scope{})
	if err != nil {
		return NewResult{}, err
	}
	if _, err := e.fire(ctx, rec, machine.TriggerAdopt, machine.Firing{Obs: obs}, "adopted"); err != nil {
		// Leave the foreign tree as it was: take back the marker just written.
		if m, _ := observe.ReadMarker(e.Repo, key); m == key {
			_ = os.Remove(filepath.Join(e.Repo.AdminDir(key), observe.MarkerName))
		}
		if errors.Is(err, store.ErrConflict) {
			return NewResult{}, &machine.Refusal{Code: machine.CodeWrongState, Path: abs, Retry: "custody list --all",
				Message: fmt.Sprintf("a record %s already exists (tombstoned); custody does not reuse record ids", key)}
		}
		return NewResult{}, err
	}
	return NewResult{ID: key, Path: abs, Branch: rec.Branch, Head: ent.Head}, nil
}

// foreignItems lists the registered linked worktrees custody holds no live
// record of. They are kept, never planned for removal.
func foreignItems(e *Env, inv observe.Inventory, recs []machine.Record, taken map[string]bool) []machine.PlanItem {
	known := map[string]bool{}
	keys := map[string]bool{}
	for _, r := range recs {
		if r.State != machine.StateTombstoned {
			known[filepath.Clean(r.Path)] = true
			keys[r.AdminKey] = true
		}
	}
	var items []machine.PlanItem
	for i, ent := range inv.Entries {
		if i == 0 || ent.Bare || known[filepath.Clean(ent.Path)] {
			continue
		}
		id := observe.AdminKeyOf(e.Repo, ent.Path)
		if id != "" && keys[id] {
			continue // a custody tree git moved: its record's item says so
		}
		if id == "" {
			id = filepath.Base(ent.Path)
		}
		for taken[id] {
			id = "foreign-" + id
		}
		taken[id] = true
		r := machine.Refusal{Code: machine.CodeForeign, Path: ent.Path, Retry: "custody adopt " + machine.QuoteArg(ent.Path),
			Message: fmt.Sprintf("%s is a worktree custody did not make; it is never removed automatically (adopt it to put it in custody)", ent.Path)}
		items = append(items, machine.PlanItem{ID: id, Kind: machine.KindWorktree, Action: machine.ActionKeep, Path: ent.Path,
			Branch: strings.TrimPrefix(ent.Branch, "refs/heads/"), Head: ent.Head, Refusal: &r, Refusals: []machine.Refusal{r}})
	}
	return items
}
