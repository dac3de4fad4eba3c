package steps

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/store"
)

// The outcomes of adopt.
const (
	// AdoptedOutcome: the tree was put in custody by this run.
	AdoptedOutcome = "adopted"
	// AdoptAlreadyDone: the tree was in custody already (adopt
	// --if-needed); nothing was changed.
	AdoptAlreadyDone = string(machine.OutcomeAlreadyDone)
)

// AdoptResult is what adopt did: the tree's record, and whether this run
// adopted it or found it in custody already.
type AdoptResult struct {
	NewResult
	// Outcome is "adopted" or "already-done".
	Outcome string `json:"outcome"`
}

// Adopt enrolls an existing linked worktree of this repository, named by
// its exact path, as an adopted record. custody may later remove it
// through a reviewed plan, but never deletes its branch. The record's id
// is git's admin key, or, when a record of an earlier tree already holds
// that id (git reuses an admin key once its tree is gone), the key with
// six random hex digits after it: custody never reuses a record id.
//
// ifNeeded makes it idempotent: a tree already in custody under a live
// record (adopted or made by custody new) whose admin entry and ready
// marker still name that record is AdoptAlreadyDone and nothing changes.
// Everything else adopt refuses stays refused.
func Adopt(ctx context.Context, e *Env, path string, ifNeeded bool) (AdoptResult, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return AdoptResult{}, err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	inv, err := gitfiles.TakeInventory(ctx, e.Git, e.Repo)
	if err != nil {
		return AdoptResult{}, err
	}
	ent, ok := inv.Entry(abs)
	if !ok || abs == e.Repo.MainCheckout || ent.Bare {
		return AdoptResult{}, machine.AdoptNotLinkedRefusal(abs, e.Repo.MainCheckout)
	}
	key := gitfiles.AdminKeyOf(e.Repo, abs)
	if key == "" {
		return AdoptResult{}, machine.AdoptAdminUnknownRefusal(abs)
	}
	recs, err := e.Store.List()
	if err != nil {
		return AdoptResult{}, err
	}
	for _, r := range recs {
		if r.State == machine.StateTombstoned || r.Path != abs && r.ID != key && r.AdminKey != key {
			continue
		}
		if ifNeeded && r.Path == abs && inCustody(e, r, key) {
			return AdoptResult{NewResult: NewResult{ID: r.ID, Path: r.Path, Branch: r.Branch, Head: ent.Head, Port: r.Port},
				Outcome: AdoptAlreadyDone}, nil
		}
		if r.Path != abs && keyReused(e, r, key) {
			continue
		}
		if r.Path != abs {
			return AdoptResult{}, machine.AdoptKeyHeldRefusal(abs, key, r)
		}
		return AdoptResult{}, machine.AdoptRecordedRefusal(abs, key, r, ifNeeded)
	}
	id, err := adoptID(e, key)
	if err != nil {
		return AdoptResult{}, err
	}
	port, err := e.portFor(id)
	if err != nil {
		return AdoptResult{}, err
	}
	rec := machine.Record{ID: id, Kind: machine.KindWorktree, Origin: machine.OriginAdopted, Path: abs,
		Branch: strings.TrimPrefix(ent.Branch, "refs/heads/"), BaseCommit: ent.Head, AdminKey: key, Port: port}
	if err := writeMarker(e.Repo, key, id); err != nil {
		return AdoptResult{}, fmt.Errorf("write the ready marker of %s: %w", key, err)
	}
	obs, _, err := e.ObserveRecord(ctx, rec, observe.Scope{})
	if err != nil {
		return AdoptResult{}, err
	}
	if _, err := e.fire(ctx, rec, machine.TriggerAdopt, machine.Firing{Obs: obs}, "adopted"); err != nil {
		// Leave the foreign tree as it was: take back the marker just written.
		if m, _ := gitfiles.ReadMarker(e.Repo, key); m == id {
			_ = os.Remove(filepath.Join(e.Repo.AdminDir(key), gitfiles.MarkerName))
		}
		if errors.Is(err, store.ErrConflict) {
			return AdoptResult{}, machine.AdoptRaceRefusal(id, abs)
		}
		return AdoptResult{}, err
	}
	return AdoptResult{NewResult: NewResult{ID: id, Path: abs, Branch: rec.Branch, Head: ent.Head, Port: port}, Outcome: AdoptedOutcome}, nil
}

// keyReused reports whether git gave admin key key, which live record r
// held, to another tree: r's tree is gone from its path and the admin entry
// no longer holds r's ready marker (git makes a new entry, without it, when
// it reuses a removed tree's key; git worktree move keeps the entry and the
// marker in it). The new tree is then not r's, and adopting it changes
// nothing of r, which plan settles as a tree that is gone.
func keyReused(e *Env, r machine.Record, key string) bool {
	if hostio.Lstat(r.Path).State != machine.PathAbsent {
		return false
	}
	m, err := gitfiles.ReadMarker(e.Repo, key)
	return err == nil && m != r.ID
}

// inCustody reports whether live record r still holds the tree whose admin
// key is key: the same key, and the ready marker there names r.
func inCustody(e *Env, r machine.Record, key string) bool {
	want := r.AdminKeyOrID()
	m, err := gitfiles.ReadMarker(e.Repo, key)
	return err == nil && want == key && m == r.ID
}

// adoptID is the record id of a tree adopted under admin key key: key
// itself when no record ever had that id, else key-<6 random hex>.
func adoptID(e *Env, key string) (string, error) {
	id := key
	for attempt := 0; ; attempt++ {
		if _, err := e.Store.Get(id); errors.Is(err, store.ErrNotFound) {
			return id, nil
		} else if err != nil {
			return "", err
		}
		if attempt == 8 {
			return "", fmt.Errorf("no free record id for admin key %s after %d tries", key, attempt)
		}
		var rnd [3]byte
		if _, err := rand.Read(rnd[:]); err != nil {
			return "", err
		}
		id = key + "-" + hex.EncodeToString(rnd[:])
	}
}

// TreeAt returns the path of the linked worktree of this repository that
// holds dir (dir itself or a directory inside it; the innermost when trees
// nest), or dir unchanged when none does, for adopt's refusal to name.
func TreeAt(ctx context.Context, e *Env, dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	inv, err := gitfiles.TakeInventory(ctx, e.Git, e.Repo)
	if err != nil {
		return "", err
	}
	best := ""
	for i, ent := range inv.Entries {
		if i == 0 || ent.Bare {
			continue
		}
		p := filepath.Clean(ent.Path)
		if (abs == p || strings.HasPrefix(abs, p+string(os.PathSeparator))) && len(p) > len(best) {
			best = p
		}
	}
	if best == "" {
		return abs, nil
	}
	return best, nil
}

// foreignItems lists the registered linked worktrees custody holds no live
// record of. They are kept, never planned for removal.
func foreignItems(e *Env, inv gitfiles.Inventory, recs []machine.Record, taken map[string]bool) []machine.PlanItem {
	known := map[string]bool{}
	keys := map[string]bool{}
	dirs := map[hostio.Identity]bool{}
	for _, r := range recs {
		if r.State != machine.StateTombstoned {
			known[filepath.Clean(r.Path)] = true
			keys[r.AdminKey] = true
			dirs[hostio.Identity{Dev: r.Dev, Ino: r.Ino}] = r.Ino != 0
		}
	}
	var items []machine.PlanItem
	for i, ent := range inv.Entries {
		if i == 0 || ent.Bare || known[filepath.Clean(ent.Path)] {
			continue
		}
		if tree := inv.TreeOf(ent.Path); known[tree] || identityIn(tree, dirs) {
			continue // another entry naming a record's tree: its item says so (duplicate-admin-entry)
		}
		id := gitfiles.AdminKeyOf(e.Repo, ent.Path)
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
		r := machine.ForeignRefusal(ent.Path)
		items = append(items, machine.PlanItem{ID: id, Kind: machine.KindWorktree, Action: machine.ActionKeep, Path: ent.Path,
			Branch: strings.TrimPrefix(ent.Branch, "refs/heads/"), Head: ent.Head, Refusal: r, Refusals: []machine.Refusal{*r}})
	}
	return items
}

// identityIn reports whether path exists and is one of dirs by device and
// inode.
func identityIn(path string, dirs map[hostio.Identity]bool) bool {
	id, err := hostio.IdentityOf(path)
	return err == nil && dirs[id]
}
