package steps

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/store"
)

// ApplyResult is what apply did with each of the plan's actions.
type ApplyResult struct {
	PlanID string    `json:"plan_id"`
	Items  []Outcome `json:"items"`
	// Kept counts the plan's keep items, which apply does not touch.
	Kept int `json:"kept"`
	// Interrupted says apply stopped before the plan's end (an interrupt);
	// Items holds what it did until then.
	Interrupted string `json:"interrupted,omitempty"`
}

// Pending reports whether any action ended other than removed or
// already-done.
func (r ApplyResult) Pending() bool {
	if r.Interrupted != "" {
		return true
	}
	for _, it := range r.Items {
		if it.Outcome != "removed" && it.Outcome != "already-done" && it.Outcome != "destroyed" {
			return true
		}
		for _, res := range it.Resources {
			if res.Refusal != nil {
				return true
			}
		}
	}
	return false
}

// Apply runs exactly the plan's remove actions (or those named in only),
// item by item: load the record, observe fresh, require the plan's
// fingerprint (else stale, and the next item goes on), commit the removal
// intent, then carry it out from a repeated final observation. A plan for
// another repository is refused whole. Applying a plan again reports
// already-done for what it removed.
func Apply(ctx context.Context, e *Env, plan machine.Plan, only []string) (ApplyResult, error) {
	res := ApplyResult{PlanID: plan.PlanID, Items: []Outcome{}}
	repoID, err := e.Store.RepositoryID()
	if err != nil {
		return res, err
	}
	if plan.Repository.ID != repoID || plan.Repository.CommonDir != e.Repo.CommonDir {
		return res, &machine.Refusal{Code: machine.CodeWrongRepository, Path: plan.Repository.CommonDir, Retry: "custody plan -o FILE",
			Message: fmt.Sprintf("the plan is for repository %s (%s), not this one (%s, %s); nothing was done",
				plan.Repository.ID, plan.Repository.CommonDir, repoID, e.Repo.CommonDir)}
	}
	selected := map[string]bool{}
	for _, id := range only {
		if _, ok := plan.Item(id); !ok {
			return res, &machine.Refusal{Code: machine.CodeNotInPlan, Retry: "custody plan -o FILE",
				Message: fmt.Sprintf("--only %s: the plan has no item with that id; nothing was done", id)}
		}
		selected[id] = true
	}
	var view *observe.RemoteView
	for _, it := range plan.Items {
		if len(selected) > 0 && !selected[it.ID] {
			continue
		}
		if it.Action == machine.ActionDestroy {
			out, ref, err := reclaim(ctx, e, it.ID, it.Fingerprint)
			if err != nil {
				return res, fmt.Errorf("apply %s: %w", it.ID, err)
			}
			res.Items = append(res.Items, Outcome{ID: it.ID, Outcome: out, Refusal: ref})
			continue
		}
		if it.Action != machine.ActionRemove {
			res.Kept++
			continue
		}
		if err := ctx.Err(); err != nil {
			res.Interrupted = "interrupted before " + it.ID + "; the rest of the plan was not applied: " + err.Error()
			return res, nil
		}
		if view == nil {
			if view, err = observe.Advertise(ctx, e.Git, e.Repo); err != nil {
				return res, err
			}
			if len(view.Remotes) == 0 {
				return res, errNoRemote(e)
			}
		}
		o, err := applyItem(ctx, e, plan, it, view)
		if err != nil && ctx.Err() != nil {
			res.Interrupted = "interrupted at " + it.ID + "; custody resume settles it: " + err.Error()
			return res, nil
		}
		if err != nil {
			return res, fmt.Errorf("apply %s: %w", it.ID, err)
		}
		res.Items = append(res.Items, o)
		e.progress(len(res.Items), len(plan.Items), it.ID)
	}
	return res, nil
}

func applyItem(ctx context.Context, e *Env, plan machine.Plan, it machine.PlanItem, view *observe.RemoteView) (Outcome, error) {
	refused := func(r *machine.Refusal, state machine.State) Outcome {
		out := "refused"
		if r.Code == machine.CodeStale {
			out = "stale"
		}
		return Outcome{ID: it.ID, Outcome: out, State: state, Refusal: r}
	}
	deadline := time.Now().Add(e.Wait)
	for attempt := 0; attempt < 1000; attempt++ {
		rec, err := e.Store.Get(it.ID)
		if errors.Is(err, store.ErrNotFound) {
			return refused(&machine.Refusal{Code: machine.CodeUnknownRecord, Retry: "custody plan",
				Message: fmt.Sprintf("the plan names %s, which this repository's store does not hold", it.ID)}, ""), nil
		}
		if err != nil {
			return Outcome{}, err
		}
		if rec.Intent != nil {
			if holderAlive(rec.Intent.Holder, e.Holder) {
				if time.Now().Before(deadline) {
					select {
					case <-ctx.Done():
						return Outcome{}, ctx.Err()
					case <-time.After(50 * time.Millisecond):
					}
					continue
				}
				return refused(inProgress(rec), rec.State), nil
			}
			if ri := resumeOne(ctx, e, rec); ri.Refusal != nil {
				return refused(ri.Refusal, rec.State), nil
			}
			continue
		}
		switch rec.State {
		case machine.StateTombstoned:
			if rec.Evidence.Outcome == "removed" {
				// A run interrupted after the tree went may have left its
				// resources: tear them down now.
				res, err := teardownResources(ctx, e, rec.ID)
				return Outcome{ID: it.ID, Outcome: "already-done", State: rec.State, Resources: res}, err
			}
			return refused(&machine.Refusal{Code: machine.CodeWrongState, Path: rec.Path, Retry: "custody show " + rec.ID,
				Message: fmt.Sprintf("%s was tombstoned without removal (%s)", rec.ID, rec.Evidence.Outcome)}, rec.State), nil
		case machine.StateFinished, machine.StateActive:
		default:
			return refused(&machine.Refusal{Code: machine.CodeWrongState, Path: rec.Path, Retry: "custody show " + rec.ID,
				Message: fmt.Sprintf("%s is %s, not finished", rec.ID, rec.State)}, rec.State), nil
		}
		scope, err := e.assessScope(view)
		if err != nil {
			return Outcome{}, err
		}
		obs, _, err := e.observe(ctx, rec, scope)
		if err != nil {
			return Outcome{}, err
		}
		if rec.State == machine.StateActive {
			// A lease expired since plan: the tree counts as finished.
			next, err := e.fire(ctx, rec, machine.TriggerExpire, machine.Firing{Obs: obs}, "lease expired")
			if errors.Is(err, store.ErrConflict) {
				continue
			}
			var r *machine.Refusal
			if errors.As(err, &r) {
				return refused(&machine.Refusal{Code: machine.CodeNotFinished, Path: rec.Path, Retry: "custody finish " + rec.ID,
					Message: fmt.Sprintf("%s is active again since plan", rec.ID)}, rec.State), nil
			}
			if err != nil {
				return Outcome{}, err
			}
			rec = next
		}
		if machine.Fingerprint(obs) != it.Fingerprint {
			return refused(staleRefusal(rec, obs, it.Head), rec.State), nil
		}
		v := machine.Assess(rec, obs, e.Policy, e.Now())
		if v.Action != machine.ActionRemove {
			return refused(v.Primary(), rec.State), nil
		}
		head := obs.Head
		if obs.PathState == machine.PathAbsent {
			head = rec.EffectiveHead()
		}
		intent := &machine.Intent{Kind: machine.IntentRemoval, Path: rec.Path, Branch: rec.Branch, Commit: head,
			Dev: obs.Dev, Ino: obs.Ino, AdminKey: obs.AdminKey, Proof: v.Proof, Fingerprint: it.Fingerprint,
			PlanID: plan.PlanID, Holder: e.Holder, At: e.Now().UTC()}
		rec, err = e.fire(ctx, rec, machine.TriggerRemove, machine.Firing{Obs: obs, Intent: intent, Fingerprint: it.Fingerprint}, "removal intent")
		if errors.Is(err, store.ErrConflict) {
			continue // another invocation moved the record; look again
		}
		var r *machine.Refusal
		if errors.As(err, &r) {
			return refused(r, rec.State), nil
		}
		if err != nil {
			return Outcome{}, err
		}
		failpoint("apply/after-intent")
		return carryOutRemoval(ctx, e, rec)
	}
	return Outcome{}, fmt.Errorf("%s kept changing under concurrent invocations", it.ID)
}
