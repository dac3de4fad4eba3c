package steps

import (
	"context"
	"errors"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
)

// worktreeWorkflow is the worktree kind's part in resume: the rules of
// machine.DecideResume and what carries each out.
func worktreeWorkflow() Workflow[machine.Record] {
	return Workflow[machine.Record]{
		Kind: machine.KindWorktree,
		TakeOver: func(ctx context.Context, e *Env, rec machine.Record) (machine.Record, error) {
			in := *rec.Intent
			in.Holder = e.Holder
			return e.fire(ctx, rec, machine.TriggerTakeOver, machine.Firing{Intent: &in}, "resumed")
		},
		Decide: func(ctx context.Context, e *Env, rec machine.Record) (string, *machine.Refusal, error) {
			obs, dest, err := e.observeResume(ctx, rec)
			if err != nil {
				return "", nil, err
			}
			action, ref := machine.DecideResume(rec, obs, dest)
			return string(action), ref, nil
		},
		Continue: map[string]func(context.Context, *Env, machine.Record) ([]ResumeItem, error){
			string(machine.ResumeActivate):           resumeActivate,
			string(machine.ResumeDiscard):            resumeDiscard,
			string(machine.ResumeRetryRemoval):       removalStep(carryOutRemoval),
			string(machine.ResumeDropAdmin):          removalStep(settleRemoval),
			string(machine.ResumeCompleteRemoval):    removalStep(settleRemoval),
			string(machine.ResumeCompleteRelocation): relocationStep(machine.TriggerRelocated, machine.OutcomeRelocated),
			string(machine.ResumeStepBack):           relocationStep(machine.TriggerStepBack, machine.OutcomeSteppedBack),
			string(machine.ResumeRepairRelocation):   repairRelocation,
		},
	}
}

// observeResume observes rec, and for a relocation its destination too.
func (e *Env) observeResume(ctx context.Context, rec machine.Record) (machine.WorktreeObservation, *machine.WorktreeObservation, error) {
	obs, _, err := e.ObserveRecord(ctx, rec, observe.Scope{})
	if err != nil || rec.Intent == nil || rec.Intent.Kind != machine.IntentRelocation {
		return obs, nil, err
	}
	at := rec
	at.Path = rec.Intent.Destination
	dest, _, err := e.ObserveRecord(ctx, at, observe.Scope{})
	return obs, &dest, err
}

func one(rec machine.Record, o machine.Outcome, r *machine.Refusal) []ResumeItem {
	return []ResumeItem{{ID: rec.ID, Outcome: o, Refusal: r}}
}

// resumeActivate finishes a creation whose exact tree exists.
func resumeActivate(ctx context.Context, e *Env, rec machine.Record) ([]ResumeItem, error) {
	if _, _, err := complete(ctx, e, rec, false); err != nil {
		var r *machine.Refusal
		if errors.As(err, &r) && r.Code == machine.CodeCreateFailed {
			return one(rec, machine.OutcomeRolledBack, r), nil
		}
		return nil, err
	}
	return one(rec, machine.OutcomeActivated, nil), nil
}

// resumeDiscard tombstones a creation that made nothing, deleting the
// untouched branch by compare-and-swap when custody was to create it; a
// branch that existed before (new --checkout) is kept.
func resumeDiscard(ctx context.Context, e *Env, rec machine.Record) ([]ResumeItem, error) {
	obs, _, err := e.ObserveRecord(ctx, rec, observe.Scope{})
	if err != nil {
		return nil, err
	}
	bo, reason := machine.BranchAbsent, ""
	switch {
	case obs.BranchTip != "" && !machine.BranchOwned(rec, e.Policy):
		bo, reason = machine.BranchKept, machine.BranchNotCreated
	case obs.BranchTip != "":
		bo, reason = casDeleteBranch(ctx, e, rec.Branch, rec.Intent.Commit)
		if obs, _, err = e.ObserveRecord(ctx, rec, observe.Scope{}); err != nil {
			return nil, err
		}
	}
	if _, err := e.fire(ctx, rec, machine.TriggerDiscard, machine.Firing{Obs: obs,
		Evidence: machine.Evidence{BranchOutcome: bo, BranchReason: reason}}, "discarded: nothing was made"); err != nil {
		return nil, err
	}
	return one(rec, machine.OutcomeDiscarded, nil), nil
}

// removalStep carries out or settles an interrupted removal.
func removalStep(step func(context.Context, *Env, machine.Record) (Outcome, error)) func(context.Context, *Env, machine.Record) ([]ResumeItem, error) {
	return func(ctx context.Context, e *Env, rec machine.Record) ([]ResumeItem, error) {
		o, err := step(ctx, e, rec)
		if err != nil {
			return nil, err
		}
		return one(rec, o.Outcome, o.Refusal), nil
	}
}

// relocationStep fires t over fresh observations of a relocation's source
// and destination.
func relocationStep(t machine.Trigger, o machine.Outcome) func(context.Context, *Env, machine.Record) ([]ResumeItem, error) {
	return func(ctx context.Context, e *Env, rec machine.Record) ([]ResumeItem, error) {
		obs, dest, err := e.observeResume(ctx, rec)
		if err != nil {
			return nil, err
		}
		if _, err := e.fire(ctx, rec, t, machine.Firing{Obs: obs, Dest: dest}, string(o)); err != nil {
			return nil, err
		}
		return one(rec, o, nil), nil
	}
}

// resumeRecord resumes one worktree record that carries an intent (a
// command converging on its own interrupted step) and reports its item.
func resumeRecord(ctx context.Context, e *Env, rec machine.Record) ResumeItem {
	items, err := worktreeWorkflow().resumeOne(ctx, e, rec, false)
	if err != nil {
		return refusedItem(ResumeItem{ID: rec.ID, Kind: machine.KindWorktree}, rec, err)
	}
	for _, it := range items {
		if it.ID == rec.ID {
			return it
		}
	}
	return ResumeItem{ID: rec.ID, Kind: machine.KindWorktree}
}
