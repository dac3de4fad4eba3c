package steps

import (
	"context"
	"errors"
	"fmt"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/store"
)

// RetireOptions says who asks for a tree's retirement (Retire) and how.
type RetireOptions struct {
	// Session is an agent's session, whose lease on the tree is released
	// first; one machine.ValidSession refuses releases nothing.
	Session string
	// Hook, Agent and Actor are journaled with the lease's release.
	Hook, Agent, Actor string
	// ExcuseRequesters says the processes that asked for the removal
	// (custody's parent and each ancestor above it standing in the tree,
	// observe.RequesterChain: an agent's hook shell and the agent, a
	// person's shell) asked for it: where they stand inside the tree is
	// not a use of it.
	ExcuseRequesters bool
	// Archive captures an archive of the tree first (Archives.Capture)
	// when the plan keeps it only for reasons an archive answers
	// (machine.CaptureCovers), so that the archive proves it.
	Archive bool
}

// Retirement is what Retire did with a tree.
type Retirement struct {
	// ID and Path name the tree's record, once it was found, and Branch
	// the branch it was on.
	ID     string
	Path   string
	Branch string
	// Kept says the tree stays: Refusal is the first reason and Refusals
	// every reason.
	Kept bool
	// State is the state a kept tree is left in: active again when it was
	// active before (a later session can lease it and go on), finished
	// when it already was.
	State    machine.State
	Refusal  *machine.Refusal
	Refusals []machine.Refusal
	// Removal is what apply did with the tree, when the plan removed it
	// (its Refusal set when apply's re-check kept it after all), or
	// already-done for a record that was tombstoned before.
	Removal *Outcome
	// Action is what the plan of the tree said (remove, settle or keep),
	// and Proof and Settlement what a removal or a settlement stood on.
	Action     machine.Action
	Proof      *machine.Proof
	Settlement *machine.Settlement
	// Archive is the archive captured first (RetireOptions.Archive), when
	// one was.
	Archive *CapturedArchive
}

// Gone reports whether the tree is gone: removed or settled now, or its
// record already tombstoned.
func (r Retirement) Gone() bool {
	return !r.Kept && r.Removal != nil && r.Removal.Refusal == nil && r.Removal.Outcome.Settled()
}

// keep records that the tree stays, for reasons all (primary first, or
// the first of all when primary is nil).
func (r *Retirement) keep(primary *machine.Refusal, all []machine.Refusal) {
	if primary == nil && len(all) > 0 {
		primary = &all[0]
	}
	r.Kept, r.Refusal, r.Refusals = true, primary, all
}

// Retire is the one-shot removal of record id's tree, for an agent's
// WorktreeRemove hook and for custody remove alike: it releases
// opts.Session's lease, finishes the record, plans that record alone
// (PlanRecord: no other tree is observed), with opts.Archive captures an
// archive first when the plan keeps the tree only for reasons an archive
// answers (and plans it again), and applies that one-item plan, so the
// tree is removed only with a proof, exactly as plan and apply would
// remove it. A tree that is not provably safe is kept, with every reason,
// in the state it had before: a tree that was active is reopened
// (journaled), so the next session in it takes a lease as before instead
// of being refused one. A record already tombstoned is already-done. An
// error (a refusal among them: no remote) changes nothing more than was
// done before it; the result names the record once it was found, even
// then. It is idempotent: run again, a removed tree is already-done.
func Retire(ctx context.Context, e *Env, id string, opts RetireOptions) (Retirement, error) {
	var res Retirement
	rec, err := e.Store.Get(id)
	if errors.Is(err, store.ErrNotFound) {
		return res, machine.NoRecordRefusal(id)
	}
	if err != nil {
		return res, err
	}
	res.ID, res.Path, res.Branch, res.State = id, rec.Path, rec.Branch, rec.State
	if rec.State == machine.StateTombstoned {
		res.State = ""
		res.Removal = &Outcome{ID: id, Outcome: machine.OutcomeAlreadyDone, State: rec.State}
		return res, nil
	}
	if opts.ExcuseRequesters {
		prev := e.Requesters
		e.Requesters = observe.RequesterChain(rec.Path)
		defer func() { e.Requesters = prev }()
	}
	if machine.ValidSession(opts.Session) == nil {
		lr := machine.LeaseRequest{Op: machine.LeaseRelease, Session: opts.Session, Now: e.Now().UTC()}
		if _, err := e.Store.ChangeLease(store.LeaseChange{Path: rec.Path, Key: rec.ID, Request: lr,
			Hook: opts.Hook, Agent: opts.Agent, Actor: opts.Actor}); err != nil {
			return res, err
		}
	}
	fin, err := Finish(ctx, e, []string{id})
	if err != nil {
		return res, err
	}
	if len(fin) == 1 && fin[0].Refusal != nil {
		res.keep(fin[0].Refusal, []machine.Refusal{*fin[0].Refusal})
		return res, nil
	}
	wasActive := rec.State == machine.StateActive
	it, plan, err := planOne(ctx, e, id)
	if err != nil {
		return res, restore(ctx, e, &res, wasActive, err)
	}
	if opts.Archive && it.Action == machine.ActionKeep && machine.CaptureCovers(it.Refusals) {
		a, err := e.archives().Capture(ctx, e, id)
		var r *machine.Refusal
		switch {
		case err != nil && errors.As(err, &r) && ctx.Err() == nil:
			// The tree cannot be archived (a wrong state, an entry no
			// archive restores): that keeps it, with the plan's reasons.
			res.Action = it.Action
			res.keep(r, machine.AddRefusals([]machine.Refusal{*r}, it.Refusals...))
			return res, restore(ctx, e, &res, wasActive, nil)
		case err != nil:
			return res, restore(ctx, e, &res, wasActive, err)
		}
		res.Archive = &a
		if it, plan, err = planOne(ctx, e, id); err != nil {
			return res, restore(ctx, e, &res, wasActive, err)
		}
	}
	res.Action, res.Proof, res.Settlement = it.Action, it.Proof, it.Settlement
	if it.Action != machine.ActionRemove && it.Action != machine.ActionSettle {
		res.keep(it.Refusal, it.Refusals)
		return res, restore(ctx, e, &res, wasActive, nil)
	}
	applied, err := ApplyWith(ctx, e, plan, ApplyOptions{})
	if err != nil {
		return res, restore(ctx, e, &res, wasActive, err)
	}
	if applied.Interrupted != "" {
		return res, restore(ctx, e, &res, wasActive, fmt.Errorf("%s: %w", applied.Interrupted, context.Cause(ctx)))
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

// planOne is PlanRecord of id and its one item.
func planOne(ctx context.Context, e *Env, id string) (machine.PlanItem, machine.Plan, error) {
	plan, err := PlanRecord(ctx, e, id)
	if err != nil {
		return machine.PlanItem{}, plan, err
	}
	it, ok := plan.Item(id)
	if !ok {
		return it, plan, fmt.Errorf("internal: the plan has no item %s", id)
	}
	return it, plan, nil
}

// restore takes a tree Retire finished, and did not remove, back to
// active when it was active before, and returns cause (or the reopening's
// error when cause is nil). A tree whose record is no longer finished (an
// apply's intent left it removing: resume settles it) is left as it is.
func restore(ctx context.Context, e *Env, res *Retirement, wasActive bool, cause error) error {
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
	out, err := Reopen(ctx, e, []string{res.ID})
	switch {
	case err != nil && cause == nil:
		return err
	case err == nil && len(out) == 1 && out[0].Refusal == nil:
		res.State = machine.StateActive
	}
	return cause
}
