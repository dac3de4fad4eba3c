package agents

import (
	"context"
	"fmt"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/store"
)

// RetireRequest names the tree an agent's WorktreeRemove hook retires and
// who asks.
type RetireRequest struct {
	// Dir is the tree, or a directory inside it.
	Dir string
	// Session is the agent's session, whose lease on the tree is released
	// first; one machine.ValidSession refuses releases nothing.
	Session string
	// Hook, Agent and Actor are journaled with the lease's release.
	Hook, Agent, Actor string
}

// HookRetirement is what RetireHookTree did with the tree.
type HookRetirement struct {
	// ID and Path name the tree's record, once it was found.
	ID   string
	Path string
	// Kept says the tree stays (finished): Refusal is the first reason and
	// Refusals every reason.
	Kept     bool
	Refusal  *machine.Refusal
	Refusals []machine.Refusal
	// Removal is what apply did with the tree, when the plan removed it
	// (its Refusal set when apply's re-check kept it after all).
	Removal *steps.Outcome
}

// keep records that the tree stays, for reasons all (primary first, or
// the first of all when primary is nil).
func (r *HookRetirement) keep(primary *machine.Refusal, all []machine.Refusal) {
	if primary == nil && len(all) > 0 {
		primary = &all[0]
	}
	r.Kept, r.Refusal, r.Refusals = true, primary, all
}

// RetireHookTree retires the tree containing req.Dir for a WorktreeRemove
// hook: it releases req.Session's lease, finishes the record, plans that
// record alone (PlanRecord: no other tree is observed) and applies that
// one-item plan, so the tree is removed only with a proof, exactly as plan
// and apply would remove it. A tree that is not provably safe is kept,
// finished, with every reason. An error (a refusal among them: no managed
// tree at req.Dir, no remote) changes nothing more than was done before it;
// the result names the record once it was found, even then.
func RetireHookTree(ctx context.Context, e *steps.Env, req RetireRequest) (HookRetirement, error) {
	var res HookRetirement
	id, err := steps.CurrentID(e, req.Dir)
	if err != nil {
		return res, err
	}
	rec, err := e.Store.Get(id)
	if err != nil {
		return res, err
	}
	res.ID, res.Path = id, rec.Path
	if machine.ValidSession(req.Session) == nil {
		lr := machine.LeaseRequest{Op: machine.LeaseRelease, Session: req.Session, Now: e.Now().UTC()}
		if _, err := e.Store.ChangeLease(store.LeaseChange{Path: rec.Path, Key: rec.ID, Request: lr,
			Hook: req.Hook, Agent: req.Agent, Actor: req.Actor}); err != nil {
			return res, err
		}
	}
	fin, err := steps.Finish(ctx, e, []string{id})
	if err != nil {
		return res, err
	}
	if len(fin) == 1 && fin[0].Refusal != nil {
		res.keep(fin[0].Refusal, []machine.Refusal{*fin[0].Refusal})
		return res, nil
	}
	plan, err := steps.PlanRecord(ctx, e, id)
	if err != nil {
		return res, err
	}
	it, ok := plan.Item(id)
	if !ok {
		return res, fmt.Errorf("internal: the plan has no item %s", id)
	}
	if it.Action != machine.ActionRemove && it.Action != machine.ActionSettle {
		res.keep(it.Refusal, it.Refusals)
		return res, nil
	}
	applied, err := steps.ApplyWith(ctx, e, plan, steps.ApplyOptions{})
	if err != nil {
		return res, err
	}
	if len(applied.Items) != 1 {
		return res, fmt.Errorf("internal: apply of %s did %d items", id, len(applied.Items))
	}
	o := applied.Items[0]
	res.Removal = &o
	if o.Refusal != nil {
		res.keep(o.Refusal, []machine.Refusal{*o.Refusal})
	}
	return res, nil
}
