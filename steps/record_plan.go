package steps

import (
	"context"
	"errors"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/proof"
	"github.com/custody-sh/custody/store"
)

// PlanRecord is Plan filtered to record id: a sealed plan whose one item
// is what Plan would say of that record, reached by observing that tree
// alone (its own registry entry, status and proof against one fresh
// advertisement of every remote), so its cost does not grow with the
// number of trees. It observes exactly what apply observes again (e.ObserveRecord),
// so the item's fingerprint is the one apply requires. It writes nothing. A
// tombstoned or unknown record gives a plan without items; a record Plan
// would not observe (active under a live lease, carrying an intent) is
// assessed as Plan assesses it, unobserved.
func PlanRecord(ctx context.Context, e *Env, id string) (machine.Plan, error) {
	repoID, err := e.Store.RepositoryID()
	if err != nil {
		return machine.Plan{}, err
	}
	now := e.Now().UTC()
	plan := machine.Plan{Repository: machine.PlanRepository{ID: repoID, CommonDir: e.Repo.CommonDir}, CreatedAt: now}
	rec, err := e.Store.Get(id)
	if errors.Is(err, store.ErrNotFound) {
		return machine.Seal(plan), nil
	}
	if err != nil {
		return machine.Plan{}, err
	}
	if rec.State == machine.StateTombstoned {
		return machine.Seal(plan), nil
	}
	leases, err := e.Store.Leases()
	if err != nil {
		return machine.Plan{}, err
	}
	lease := leases[rec.ID]
	if !assessable(rec, lease, now) {
		obs := machine.WorktreeObservation{Path: rec.Path, Lease: lease}
		plan.Items = []machine.PlanItem{PlanItemFor(rec, obs, machine.Assess(rec, obs, e.Policy, now), e.Policy, false)}
		return machine.Seal(plan), nil
	}
	view, err := proof.Advertise(ctx, e.Git, e.Repo)
	if err != nil {
		return machine.Plan{}, err
	}
	if len(view.Remotes) == 0 {
		return machine.Plan{}, NoRemoteError(e)
	}
	scope, err := e.AssessScope(view)
	if err != nil {
		return machine.Plan{}, err
	}
	obs, _, err := e.ObserveRecord(ctx, rec, scope)
	if err != nil {
		return machine.Plan{}, err
	}
	plan.Items = []machine.PlanItem{PlanItemFor(rec, obs, e.Assess(ctx, rec, obs, view, now), e.Policy, true)}
	return machine.Seal(plan), nil
}
