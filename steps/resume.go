package steps

import (
	"context"
	"errors"
	"fmt"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/store"
)

// ResumeItem is what resume did with one record that carried an intent.
type ResumeItem struct {
	ID      string               `json:"id"`
	Action  machine.ResumeAction `json:"action,omitempty"`
	Outcome string               `json:"outcome"`
	Refusal *machine.Refusal     `json:"refusal,omitempty"`
}

// Resume drives every record that carries an intent to exactly one outcome
// (DESIGN §4). A record whose intent another live process holds is left
// alone and reported in-progress; an observation that fits no rule is a
// resume-unmatched refusal. Resume is idempotent.
func Resume(ctx context.Context, e *Env) ([]ResumeItem, error) {
	return ResumeTakingOver(ctx, e, nil)
}

// ResumeTakingOver is Resume that also takes over the intents of the
// records named in takeOver whatever their holder: an operator's word that
// the holder (on another host, or in a container that is gone) is dead,
// since custody can observe liveness only on its own host.
func ResumeTakingOver(ctx context.Context, e *Env, takeOver []string) ([]ResumeItem, error) {
	recs, err := e.Store.WithIntents()
	if err != nil {
		return nil, err
	}
	forced := map[string]bool{}
	for _, id := range takeOver {
		forced[id] = true
	}
	var out []ResumeItem
	for _, rec := range recs {
		if !forced[rec.ID] && holderAlive(rec.Intent.Holder, e.Holder) {
			out = append(out, ResumeItem{ID: rec.ID, Outcome: "in-progress", Refusal: inProgress(rec)})
			continue
		}
		out = append(out, resumeOne(ctx, e, rec))
	}
	res, err := resumeResources(ctx, e)
	return append(out, res...), err
}

func inProgress(rec machine.Record) *machine.Refusal {
	h := rec.Intent.Holder
	return &machine.Refusal{Code: machine.CodeInProgress, Path: rec.Path, Retry: "custody resume (or, once that process is surely gone: custody resume --take-over " + rec.ID + ")",
		Message: fmt.Sprintf("%s has a %s intent held by live process %d on %s", rec.ID, rec.Intent.Kind, h.PID, h.Host)}
}

// resumeOne applies the resume rule that fits rec now.
func resumeOne(ctx context.Context, e *Env, rec machine.Record) ResumeItem {
	item := ResumeItem{ID: rec.ID}
	fail := func(err error) ResumeItem {
		item.Outcome = "refused"
		var r *machine.Refusal
		if errors.As(err, &r) {
			item.Refusal = r
		} else {
			item.Refusal = &machine.Refusal{Code: machine.CodeResumeUnmatched, Path: rec.Path, Retry: "custody resume", Message: err.Error()}
		}
		return item
	}
	if rec.Intent.Holder != e.Holder {
		// Take the intent over first: of two processes resuming it, only
		// the one whose compare-and-swap wins goes on.
		in := *rec.Intent
		in.Holder = e.Holder
		taken, err := e.fire(ctx, rec, machine.TriggerTakeOver, machine.Firing{Intent: &in}, "resumed")
		if errors.Is(err, store.ErrConflict) {
			item.Outcome = "in-progress"
			return item
		}
		if err != nil {
			return fail(err)
		}
		rec = taken
	}
	obs, _, err := e.observe(ctx, rec, observe.Scope{})
	if err != nil {
		return fail(err)
	}
	action, ref := machine.DecideResume(rec, obs)
	item.Action = action
	if ref != nil {
		item.Outcome, item.Refusal = "refused", ref
		return item
	}
	switch action {
	case machine.ResumeActivate:
		if _, _, err := complete(ctx, e, rec, false); err != nil {
			var r *machine.Refusal
			if errors.As(err, &r) && r.Code == machine.CodeCreateFailed {
				item.Outcome, item.Refusal = "rolled-back", r
				return item
			}
			return fail(err)
		}
		item.Outcome = "activated"
	case machine.ResumeDiscard:
		bo, reason := machine.BranchAbsent, ""
		if obs.BranchTip != "" {
			bo, reason = casDeleteBranch(ctx, e, rec.Branch, rec.Intent.Commit)
		}
		if obs, _, err = e.observe(ctx, rec, observe.Scope{}); err != nil {
			return fail(err)
		}
		if _, err := e.fire(ctx, rec, machine.TriggerDiscard, machine.Firing{Obs: obs,
			Evidence: machine.Evidence{BranchOutcome: bo, BranchReason: reason}}, "discarded: nothing was made"); err != nil {
			return fail(err)
		}
		item.Outcome = "discarded"
	case machine.ResumeRetryRemoval:
		o, err := carryOutRemoval(ctx, e, rec)
		if err != nil {
			return fail(err)
		}
		item.Outcome, item.Refusal = o.Outcome, o.Refusal
	case machine.ResumeDropAdmin, machine.ResumeCompleteRemoval:
		o, err := settleRemoval(ctx, e, rec)
		if err != nil {
			return fail(err)
		}
		item.Outcome, item.Refusal = o.Outcome, o.Refusal
	}
	return item
}
