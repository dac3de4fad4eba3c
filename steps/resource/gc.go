package resource

import (
	"context"
	"errors"
	"path/filepath"
	"sort"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/store"
)

// GCItem is orphan GC's outcome for one ledger entry.
type GCItem struct {
	ID       string           `json:"id"`
	Handle   string           `json:"handle"`
	Worktree string           `json:"worktree"`
	Outcome  machine.Outcome  `json:"outcome"`
	Refusal  *machine.Refusal `json:"refusal,omitempty"`
}

// GCResult is what orphan GC did, entry by entry.
type GCResult struct {
	DryRun bool     `json:"dry_run"`
	Items  []GCItem `json:"items"`
}

// Pending reports whether a destroy failed or an orphan cannot be
// reclaimed (gc = false, a token): a resource whose worktree lives is not
// an orphan and is not pending.
func (r GCResult) Pending() bool {
	for _, it := range r.Items {
		if machine.ItemPending(it.Outcome, it.Refusal) {
			return true
		}
	}
	return false
}

// gcFacts observes, for one ledger entry, what orphan GC decides on: is the
// worktree's git admin key still present, is its worktree record still
// live, is anything on disk at its exact path, does a live worktree hold
// the entry's path, does a live entry hold its handle, does a live process
// hold its intent.
func gcFacts(ctx context.Context, e *steps.Env, r machine.Resource, inv gitfiles.Inventory, all []machine.Resource, leases map[string]*machine.Lease) machine.GCFacts {
	var f machine.GCFacts
	switch hostio.Lstat(e.Repo.AdminDir(r.AdminKey)).State {
	case machine.PathPresent:
		f.AdminPresent = true
	case machine.PathUnknown:
		f.AdminUnknown = true
	}
	if r.AdminKey == "" || r.AdminKey != filepath.Base(r.AdminKey) {
		f.AdminUnknown = true
	}
	if _, ok := inv.Entry(r.Path); ok {
		f.PathLive = true
	}
	switch hostio.Lstat(r.Path).State {
	case machine.PathPresent:
		f.TreePresent = true
	case machine.PathUnknown:
		f.TreeUnknown = true
	}
	if r.Path == "" || !filepath.IsAbs(r.Path) {
		f.TreeUnknown = true
	}
	switch wt, err := e.Store.Get(r.Worktree); {
	case err == nil && wt.State == machine.StateTombstoned:
	case err == nil && wt.Intent != nil:
		f.RecordBusy = true
	case err == nil:
		// A live record whose tree vanished (deleted outside custody, and
		// pruned) holds its resources no more: custody observes the tree
		// as plan does (machine.Vanished).
		obs := observe.Worktree(ctx, e.Git, e.Repo, inv, wt, observe.Scope{})
		lease := leases[wt.ID]
		switch {
		case !machine.Vanished(obs):
			f.RecordLive = true
		case lease.Live(e.Now()):
			f.Lease = lease
		}
	case !errors.Is(err, store.ErrNotFound):
		f.RecordUnknown = true
	}
	for _, o := range all {
		if o.ID != r.ID && o.Handle == r.Handle && o.State != machine.StateTombstoned &&
			hostio.Lstat(e.Repo.AdminDir(o.AdminKey)).State != machine.PathAbsent {
			f.HandleLive = true
		}
	}
	f.HolderAlive = r.Intent != nil && steps.HolderAlive(r.Intent.Holder, e.Holder)
	return f
}

// orphans returns every live ledger entry with its GC verdict.
func orphans(ctx context.Context, e *steps.Env) ([]machine.Resource, []machine.GCVerdict, error) {
	all, err := e.Store.Resources()
	if err != nil || len(all) == 0 {
		return nil, nil, err // no resource: nothing to ask git about
	}
	inv, err := gitfiles.TakeInventory(ctx, e.Git, e.Repo)
	if err != nil {
		return nil, nil, err
	}
	leases, err := e.Store.Leases()
	if err != nil {
		return nil, nil, err
	}
	// A worktree's resources go in reverse creation order.
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].Worktree != all[j].Worktree {
			return all[i].Worktree < all[j].Worktree
		}
		return all[i].CreatedAt.After(all[j].CreatedAt)
	})
	var rs []machine.Resource
	var vs []machine.GCVerdict
	for _, r := range all {
		if r.State == machine.StateTombstoned {
			continue
		}
		rs = append(rs, r)
		vs = append(vs, machine.DecideGC(r, gcFacts(ctx, e, r, inv, all, leases)))
	}
	return rs, vs, nil
}

// GC destroys exactly the ledger entries whose worktree is provably gone
// (machine.DecideGC), re-checking each one immediately before its destroy
// and committing the destroy by compare-and-swap on the entry. It never
// enumerates external resources and runs only this repository's frozen
// commands. With dryRun it reports what it would reclaim and why the rest
// is kept, and changes nothing.
func GC(ctx context.Context, e *steps.Env, dryRun bool) ([]GCItem, error) {
	rs, vs, err := orphans(ctx, e)
	if err != nil {
		return nil, err
	}
	items := []GCItem{}
	for i, r := range rs {
		it := GCItem{ID: r.ID, Handle: r.Handle, Worktree: r.Worktree}
		if !vs[i].Reclaim {
			it.Outcome, it.Refusal = machine.OutcomeKept, vs[i].Refusal
			items = append(items, it)
			continue
		}
		if dryRun {
			it.Outcome = machine.OutcomeWouldReclaim
			items = append(items, it)
			continue
		}
		out, ref, err := reclaim(ctx, e, r.ID, "")
		if err != nil {
			return items, err
		}
		it.Outcome, it.Refusal = out, ref
		items = append(items, it)
	}
	if dryRun {
		return items, nil
	}
	// The user-level ledger follows this repository's (decision 0256):
	// entries made before it existed are mirrored, mirrors a kill left of
	// settled or never-committed entries go.
	return items, syncMirrors(ctx, e)
}

// reclaim re-reads one ledger entry, re-decides, and destroys it. With a
// non-empty fingerprint the entry must still be what a plan reviewed.
func reclaim(ctx context.Context, e *steps.Env, id, fingerprint string) (machine.Outcome, *machine.Refusal, error) {
	r, err := e.Store.GetResource(id)
	if errors.Is(err, store.ErrNotFound) {
		return machine.OutcomeRefused, machine.NoLedgerEntryRefusal(id), nil
	}
	if err != nil {
		return "", nil, err
	}
	if r.State == machine.StateTombstoned {
		return machine.OutcomeAlreadyDone, nil, nil
	}
	if fingerprint != "" && machine.ResourceFingerprint(r) != fingerprint {
		return machine.OutcomeStale, machine.LedgerEntryChangedRefusal(id, r.Path), nil
	}
	all, err := e.Store.Resources()
	if err != nil {
		return "", nil, err
	}
	inv, err := gitfiles.TakeInventory(ctx, e.Git, e.Repo)
	if err != nil {
		return "", nil, err
	}
	leases, err := e.Store.Leases()
	if err != nil {
		return "", nil, err
	}
	if v := machine.DecideGC(r, gcFacts(ctx, e, r, inv, all, leases)); !v.Reclaim {
		return machine.OutcomeKept, v.Refusal, nil
	}
	r, err = destroyResource(ctx, e, r)
	var ref *machine.Refusal
	switch {
	case errors.Is(err, store.ErrConflict):
		return machine.OutcomeKept, machine.LedgerEntryBusyRefusal(id, r.Path), nil
	case errors.As(err, &ref):
		return machine.OutcomeRefused, ref, nil
	case err != nil:
		return "", nil, err
	case r.State != machine.StateTombstoned:
		return machine.OutcomeFailed, machine.DestroyFailedRefusal(r), nil
	}
	return machine.OutcomeDestroyed, nil, nil
}

// resourceItems lists orphaned resources as plan items: destroy when GC
// may reclaim them, keep (with the reason) when their worktree is gone but
// GC may not.
func resourceItems(ctx context.Context, e *steps.Env) ([]machine.PlanItem, error) {
	rs, vs, err := orphans(ctx, e)
	if err != nil {
		return nil, err
	}
	var items []machine.PlanItem
	for i, r := range rs {
		it := machine.PlanItem{ID: r.ID, Kind: machine.KindResource, State: r.State, Path: r.Path, Fingerprint: machine.ResourceFingerprint(r)}
		switch {
		case vs[i].Reclaim:
			it.Action = machine.ActionDestroy
		case vs[i].Refusal.Code.Benign():
			continue // not an orphan (yet): its worktree lives, is leased, or is being acted on
		default:
			it.Action, it.Refusal, it.Refusals = machine.ActionKeep, vs[i].Refusal, []machine.Refusal{*vs[i].Refusal}
		}
		items = append(items, it)
	}
	return items, nil
}
