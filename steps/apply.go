package steps

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/proof"
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

// Pending reports whether any action ended other than done, or apply was
// interrupted.
func (r ApplyResult) Pending() bool {
	if r.Interrupted != "" {
		return true
	}
	for _, it := range r.Items {
		if it.Pending() {
			return true
		}
	}
	return false
}

// applyAction carries out one kind of plan action on one item.
type applyAction func(ctx context.Context, e *Env, run *applyRun, it machine.PlanItem) (Outcome, error)

// applyActions is the table Apply dispatches plan items through. keep is
// absent: apply never touches a kept item.
func applyActions() map[machine.Action]applyAction {
	return map[machine.Action]applyAction{
		machine.ActionRemove:  applyRemove,
		machine.ActionSettle:  applyRemove,
		machine.ActionDestroy: applyDestroy,
	}
}

// ApplyOptions are what a person chose for one apply.
type ApplyOptions struct {
	// Only names the plan items to apply; empty means all.
	Only []string
	// AllowExternalRetirement lets apply remove adopted trees outside the
	// managed root; without it they are refused (CodeExternalTree).
	AllowExternalRetirement bool
	// PlanFile is the plan's path as the person named it, for retry lines.
	PlanFile string
}

// applyRun is what one apply shares between its items.
type applyRun struct {
	plan machine.Plan
	opts ApplyOptions
	// view is the remotes' advertisement, fetched once, when the first
	// removal needs it.
	view *proof.RemoteView
	// ancestors are the plan's heads known to be ancestors of view's first
	// tip, asked once with view (observe.Ancestors).
	ancestors map[string]bool
	// trees are the tree ids of the plan's removal heads, asked once with
	// view (commitTrees), against which each quarantine manifest may be
	// read from the tree's index (headTree).
	trees map[string]string
	// envLines and disposable are custody's own .env lines and the
	// approved disposable patterns, read once with view (applyScope).
	envLines   map[string]map[string]bool
	disposable machine.Patterns
}

// applyScope is what one item's observations look through: the
// advertisement, known ancestors, custody's .env lines and the disposable
// patterns this apply read once, and a process scan taken now. What is
// read once only ever keeps more: a line custody writes after that read
// counts as a person's (ignored content, kept), one it no longer writes is
// still one it wrote, and a tree changed since plan is stale whatever the
// scope. The tree itself is observed fresh, both times
// (carryOutRemovalIn).
func (run *applyRun) applyScope(e *Env) observe.Scope {
	return observe.Scope{Status: true, Hidden: true, Proof: true, View: run.view, Ancestors: run.ancestors,
		Procs: observe.ScanProcesses(), EnvLines: run.envLines, Disposable: run.disposable, Hashes: e.hashCache()}
}

// Apply runs exactly the plan's actions (or those named in only), item by
// item: load the record, observe fresh, require the plan's fingerprint
// (else stale, and the next item goes on), commit the intent, then carry it
// out from a repeated final observation. A plan for another repository is
// refused whole. Applying a plan again reports already-done for what it
// did.
func Apply(ctx context.Context, e *Env, plan machine.Plan, only []string) (ApplyResult, error) {
	return ApplyWith(ctx, e, plan, ApplyOptions{Only: only})
}

// ApplyWith is Apply with every option a person can choose.
func ApplyWith(ctx context.Context, e *Env, plan machine.Plan, opts ApplyOptions) (ApplyResult, error) {
	only := opts.Only
	res := ApplyResult{PlanID: plan.PlanID, Items: []Outcome{}}
	repoID, err := e.Store.RepositoryID()
	if err != nil {
		return res, err
	}
	if plan.Repository.ID != repoID || plan.Repository.CommonDir != e.Repo.CommonDir {
		return res, &machine.Refusal{Code: machine.CodeWrongRepository, Path: plan.Repository.CommonDir, Retry: "custody plan -o plan.json",
			Message: fmt.Sprintf("the plan is for repository %s (%s), not this one (%s, %s); nothing was done",
				plan.Repository.ID, plan.Repository.CommonDir, repoID, e.Repo.CommonDir)}
	}
	selected := map[string]bool{}
	for _, id := range only {
		if _, ok := plan.Item(id); !ok {
			return res, &machine.Refusal{Code: machine.CodeNotInPlan, Retry: "custody plan -o plan.json",
				Message: fmt.Sprintf("--only %s: the plan has no item with that id; nothing was done", id)}
		}
		selected[id] = true
	}
	actions := applyActions()
	run := &applyRun{plan: plan, opts: opts}
	for _, it := range plan.Items {
		if len(selected) > 0 && !selected[it.ID] {
			continue
		}
		act, ok := actions[it.Action]
		if !ok {
			res.Kept++
			continue
		}
		if err := ctx.Err(); err != nil {
			res.Interrupted = "interrupted before " + it.ID + "; the rest of the plan was not applied: " + err.Error()
			return res, nil
		}
		o, err := act(ctx, e, run, it)
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

// applyDestroy destroys an orphaned resource the plan reviewed. A resource
// the re-check keeps (its worktree is live again, another custody acts on
// it) is the plan's action refused, not an assessment's keep: apply reports
// it refused, and exits 3.
func applyDestroy(ctx context.Context, e *Env, _ *applyRun, it machine.PlanItem) (Outcome, error) {
	out, ref, err := reclaim(ctx, e, it.ID, it.Fingerprint)
	if out == machine.OutcomeKept {
		out = machine.OutcomeRefused
	}
	return Outcome{ID: it.ID, Outcome: out, Refusal: ref}, err
}

// applyRemove removes one worktree the plan proved removable.
func applyRemove(ctx context.Context, e *Env, run *applyRun, it machine.PlanItem) (Outcome, error) {
	if run.view == nil {
		view, err := proof.Advertise(ctx, e.Git, e.Repo)
		if err != nil {
			return Outcome{}, err
		}
		if len(view.Remotes) == 0 {
			return Outcome{}, errNoRemote(e)
		}
		run.view = view
		var heads []string
		for _, p := range run.plan.Items {
			if p.Action == machine.ActionRemove || p.Action == machine.ActionSettle {
				heads = append(heads, p.Head)
			}
		}
		run.ancestors = knownAncestors(ctx, e, view, heads)
		run.trees = commitTrees(ctx, e, heads)
		if run.envLines, err = e.envLines(); err != nil {
			return Outcome{}, err
		}
		if run.disposable, err = e.disposable(); err != nil {
			return Outcome{}, err
		}
	}
	return applyItem(ctx, e, run, it, run.view)
}

func applyItem(ctx context.Context, e *Env, run *applyRun, it machine.PlanItem, view *proof.RemoteView) (Outcome, error) {
	plan := run.plan
	deadline := time.Now().Add(e.Wait)
	for attempt := 0; attempt < 1000; attempt++ {
		rec, err := e.Store.Get(it.ID)
		if errors.Is(err, store.ErrNotFound) {
			return refusedOutcome(it.ID, &machine.Refusal{Code: machine.CodeUnknownRecord, Retry: "custody plan",
				Message: fmt.Sprintf("the plan names %s, which this repository's store does not hold", it.ID)}, ""), nil
		}
		if err != nil {
			return Outcome{}, err
		}
		// refuse reports a negative verdict reached over rec, unless
		// another invocation moved the record meanwhile: then the verdict
		// is about a tree that invocation is acting on, and apply looks
		// again instead (it ends already-done, or with that invocation's
		// refusal).
		refuse := func(r *machine.Refusal, state machine.State) (Outcome, bool, error) {
			now, err := e.Store.Get(it.ID)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return Outcome{}, false, err
			}
			if err == nil && (now.Rev != rec.Rev || now.State != rec.State) {
				return Outcome{}, false, nil
			}
			return refusedOutcome(it.ID, r, state), true, nil
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
				return refusedOutcome(it.ID, inProgress(rec), rec.State), nil
			}
			if ri := resumeRecord(ctx, e, rec); ri.Refusal != nil {
				if o, done, err := refuse(ri.Refusal, rec.State); done || err != nil {
					return o, err
				}
			}
			continue
		}
		switch rec.State {
		case machine.StateTombstoned:
			if rec.Evidence.Outcome == string(machine.OutcomeRemoved) || rec.Evidence.Outcome == string(machine.OutcomeSettled) {
				// A run interrupted after the tree went may have left its
				// resources: tear them down now.
				res, err := teardownResources(ctx, e, rec.ID)
				return Outcome{ID: it.ID, Outcome: machine.OutcomeAlreadyDone, State: rec.State, Resources: res}, err
			}
			return refusedOutcome(it.ID, &machine.Refusal{Code: machine.CodeWrongState, Path: rec.Path, Retry: machine.CommandOn([]string{"custody", "show"}, rec.ID),
				Message: fmt.Sprintf("%s was tombstoned without removal (%s)", rec.ID, rec.Evidence.Outcome)}, rec.State), nil
		case machine.StateFinished, machine.StateActive:
		default:
			if o, done, err := refuse(&machine.Refusal{Code: machine.CodeWrongState, Path: rec.Path, Retry: machine.CommandOn([]string{"custody", "show"}, rec.ID),
				Message: fmt.Sprintf("%s is %s, not finished", rec.ID, rec.State)}, rec.State); done || err != nil {
				return o, err
			}
			continue
		}
		scope := run.applyScope(e)
		pause("apply/before-observe")
		obs, _, err := e.observe(ctx, rec, scope)
		if err != nil {
			return Outcome{}, err
		}
		if rec.State == machine.StateActive && !machine.Vanished(obs) {
			// A lease expired since plan: the tree counts as finished. (A
			// tree that vanished is settled from active as it is.)
			next, err := e.fire(ctx, rec, machine.TriggerExpire, machine.Firing{Obs: obs}, "lease expired")
			if errors.Is(err, store.ErrConflict) {
				continue
			}
			var r *machine.Refusal
			if errors.As(err, &r) {
				if o, done, err := refuse(&machine.Refusal{Code: machine.CodeNotFinished, Path: rec.Path, Retry: machine.CommandOn([]string{"custody", "finish"}, rec.ID),
					Message: fmt.Sprintf("%s is active again since plan", rec.ID)}, rec.State); done || err != nil {
					return o, err
				}
				continue
			}
			if err != nil {
				return Outcome{}, err
			}
			rec = next
		}
		var verdict *machine.Refusal
		v := e.assess(ctx, rec, obs, scope.View, e.Now())
		switch {
		case len(obs.TimedOut) > 0:
			// Part of the tree is unknown, not changed: the command that
			// ran out of time is the reason (Assess names it first).
			verdict = v.Primary()
		case machine.Fingerprint(obs) != it.Fingerprint:
			verdict = staleRefusal(rec, obs, it.Head)
		case v.Action == machine.ActionSettle && it.Action == machine.ActionSettle:
			// What was proven and what becomes of the branch must be what
			// plan showed; the proof itself is found fresh (a remote that
			// advanced since plan does not make the settlement another).
			was, now := *it.Settlement, *v.Settlement
			was.Summary, now.Summary = "", ""
			if was != now {
				verdict = settlementChanged(rec, *it.Settlement, *v.Settlement)
			}
		case v.Action != machine.ActionRemove || it.Action != machine.ActionRemove:
			verdict = v.Primary()
			if verdict == nil {
				verdict = &machine.Refusal{Code: machine.CodeStale, Path: rec.Path, Retry: "custody plan",
					Message: fmt.Sprintf("%s changed since plan: plan said %s, now it is %s", rec.ID, it.Action, v.Action)}
			}
		case !run.opts.AllowExternalRetirement:
			verdict = externalRefusal(e, rec, run.opts.PlanFile)
		}
		if verdict != nil {
			if o, done, err := refuse(verdict, rec.State); done || err != nil {
				return o, err
			}
			continue
		}
		if v.Action == machine.ActionSettle {
			intent := &machine.Intent{Kind: machine.IntentRemoval, Path: rec.Path, Branch: rec.Branch, Commit: v.Settlement.Head,
				AdminKey: rec.AdminKey, Proof: v.Proof, Settlement: v.Settlement, Fingerprint: it.Fingerprint,
				PlanID: plan.PlanID, Holder: e.Holder, At: e.Now().UTC()}
			settling, err := e.fire(ctx, rec, machine.TriggerSettle, machine.Firing{Obs: obs, Intent: intent, Fingerprint: it.Fingerprint}, "settlement intent: "+v.Settlement.Summary)
			if errors.Is(err, store.ErrConflict) {
				continue // another invocation moved the record; look again
			}
			var r *machine.Refusal
			if errors.As(err, &r) {
				if o, done, err := refuse(r, rec.State); done || err != nil {
					return o, err
				}
				continue
			}
			if err != nil {
				return Outcome{}, err
			}
			failpoint("apply/after-intent")
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), gitfiles.RegistryTimeout)
			defer cancel()
			return settleRemoval(ctx, e, settling)
		}
		head := obs.Head
		if obs.PathState == machine.PathAbsent {
			head = rec.EffectiveHead()
		}
		intent := &machine.Intent{Kind: machine.IntentRemoval, Path: rec.Path, Branch: rec.Branch, Commit: head,
			Dev: obs.Dev, Ino: obs.Ino, AdminKey: obs.AdminKey, Quarantine: quarantinePath(rec), Proof: v.Proof, Fingerprint: it.Fingerprint,
			PlanID: plan.PlanID, Holder: e.Holder, At: e.Now().UTC()}
		removing, err := e.fire(ctx, rec, machine.TriggerRemove, machine.Firing{Obs: obs, Intent: intent, Fingerprint: it.Fingerprint}, "removal intent")
		if errors.Is(err, store.ErrConflict) {
			continue // another invocation moved the record; look again
		}
		var r *machine.Refusal
		if errors.As(err, &r) {
			if o, done, err := refuse(r, rec.State); done || err != nil {
				return o, err
			}
			continue
		}
		if err != nil {
			return Outcome{}, err
		}
		failpoint("apply/after-intent")
		pause("apply/after-intent")
		return carryOutRemovalIn(ctx, e, removing, scope, run.trees, true)
	}
	return Outcome{}, fmt.Errorf("%s kept changing under concurrent invocations", it.ID)
}

// settlementChanged refuses a settlement whose proof or branch changed
// since plan (a remote now proves the branch tip, the branch moved): the
// next plan shows the settlement as it is now.
func settlementChanged(rec machine.Record, was, now machine.Settlement) *machine.Refusal {
	return &machine.Refusal{Code: machine.CodeStale, Path: rec.Path, Retry: "custody plan",
		Message: fmt.Sprintf("%s changed since plan: its settlement was on %s (proven %v, branch %s) and is now on %s (proven %v, branch %s)",
			rec.ID, shortID(was.Head), was.Proven, was.Branch, shortID(now.Head), now.Proven, now.Branch)}
}

// refusedOutcome reports refusal r of item id.
func refusedOutcome(id string, r *machine.Refusal, state machine.State) Outcome {
	return Outcome{ID: id, Outcome: machine.ForRefusal(r), State: state, Refusal: r}
}

// externalRefusal refuses removing an adopted tree outside the managed
// root unless the person confirmed it (--allow-external-retirement); nil
// when the tree is custody's own or inside the root.
func externalRefusal(e *Env, rec machine.Record, planFile string) *machine.Refusal {
	if rec.Origin != machine.OriginAdopted {
		return nil
	}
	p := filepath.Clean(rec.Path)
	if real, err := filepath.EvalSymlinks(p); err == nil {
		p = real
	}
	if e.Root != "" && within(p, e.Root) {
		return nil
	}
	if planFile == "" {
		planFile = "plan.json"
	}
	return &machine.Refusal{Code: machine.CodeExternalTree, Path: rec.Path,
		Retry:   "custody apply --allow-external-retirement --only " + machine.QuoteArg(rec.ID) + " " + machine.QuoteArg(planFile),
		Message: fmt.Sprintf("%s is an adopted tree outside the managed root %s; custody removes it only when you confirm with --allow-external-retirement", rec.Path, e.Root)}
}
