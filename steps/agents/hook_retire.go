package agents

import (
	"context"
	"fmt"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
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
	// ExcuseRequesters says the processes that ran this hook (its shell
	// and the agent above it, observe.RequesterChain) asked for the
	// removal: where they stand inside the tree is not a use of it.
	ExcuseRequesters bool
}

// HookRetirement is what RetireHookTree did with the tree.
type HookRetirement struct {
	// ID and Path name the tree's record, once it was found.
	ID   string
	Path string
	// Kept says the tree stays: Refusal is the first reason and Refusals
	// every reason.
	Kept bool
	// State is the state a kept tree is left in: active again when it was
	// active before the hook (a later session can lease it and go on),
	// finished when it already was.
	State    machine.State
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
// with every reason, in the state it had before the hook: a tree that was
// active is reopened (journaled), so the next session in it takes a lease
// as before instead of being refused one. An error (a refusal among them:
// no managed tree at req.Dir, no remote) changes nothing more than was done
// before it; the result names the record once it was found, even then.
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
	res.ID, res.Path, res.State = id, rec.Path, rec.State
	if req.ExcuseRequesters {
		e.Requesters = observe.RequesterChain(rec.Path)
	}
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
	wasActive := rec.State == machine.StateActive
	plan, err := steps.PlanRecord(ctx, e, id)
	if err != nil {
		return res, restore(ctx, e, &res, wasActive, err)
	}
	it, ok := plan.Item(id)
	if !ok {
		return res, restore(ctx, e, &res, wasActive, fmt.Errorf("internal: the plan has no item %s", id))
	}
	if it.Action != machine.ActionRemove && it.Action != machine.ActionSettle {
		res.keep(it.Refusal, it.Refusals)
		return res, restore(ctx, e, &res, wasActive, nil)
	}
	applied, err := steps.ApplyWith(ctx, e, plan, steps.ApplyOptions{})
	if err != nil {
		return res, restore(ctx, e, &res, wasActive, err)
	}
	if len(applied.Items) != 1 {
		return res, fmt.Errorf("internal: apply of %s did %d items", id, len(applied.Items))
	}
	o := applied.Items[0]
	res.Removal = &o
	if o.Refusal != nil {
		res.keep(o.Refusal, []machine.Refusal{*o.Refusal})
		return res, restore(ctx, e, &res, wasActive, nil)
	}
	res.State = ""
	return res, nil
}

// restore takes a tree the hook finished, and did not remove, back to
// active when it was active before the hook, and returns cause (or the
// reopening's error when cause is nil). A tree whose record is no longer
// finished (an apply's intent left it removing: resume settles it) is left
// as it is.
func restore(ctx context.Context, e *steps.Env, res *HookRetirement, wasActive bool, cause error) error {
	res.State = machine.StateFinished
	if !wasActive {
		return cause
	}
	rec, err := e.Store.Get(res.ID)
	if err != nil || rec.State != machine.StateFinished || rec.Intent != nil {
		if cause == nil && err != nil {
			return err
		}
		if err == nil {
			res.State = rec.State
		}
		return cause
	}
	out, err := steps.Reopen(ctx, e, []string{res.ID})
	switch {
	case err != nil && cause == nil:
		return err
	case err == nil && len(out) == 1 && out[0].Refusal == nil:
		res.State = machine.StateActive
	}
	return cause
}
