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
	"github.com/custody-sh/custody/steps/failpoint"
	"github.com/custody-sh/custody/steps/quarantine"
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
	// StoppedAt is the item apply was carrying out when it was
	// interrupted: the intent it may have committed is custody resume's to
	// settle.
	StoppedAt string `json:"stopped_at,omitempty"`
	// NotStarted are the plan's actions an interrupt kept apply from
	// beginning; applying the plan again does them.
	NotStarted []string `json:"not_started,omitempty"`
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
	// proofs are the proofs against view of the plan's other heads, asked
	// once for all of them with view (proof.StartProofs): both
	// observations of every item read the proof of its head there, and a
	// head not in it (one that moved since plan) is proved alone.
	proofs *proof.ProofSet
	// trees are the tree ids of the plan's removal heads, asked once with
	// view (quarantine.CommitTrees), against which each quarantine manifest may be
	// read from the tree's index (quarantine.HeadTree).
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
// (carryOutRemovalIn); the second content walk reuses, unread, the blob id
// of each file the first read whose identity lstat still gives exactly
// and whose stamps were earlier than a moment of the tree's filesystem
// clock taken before that read (observe.HashCache.Shared).
func (run *applyRun) applyScope(e *Env) observe.Scope {
	hashes := e.hashCache()
	hashes.Shared = true
	return observe.Scope{Status: true, Hidden: true, Proof: true, View: run.view, Ancestors: run.ancestors, Proofs: run.proofs,
		Procs: e.ScanProcesses(), EnvLines: run.envLines, Disposable: run.disposable, Hashes: hashes}
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
		return res, machine.WrongRepositoryRefusal(plan.Repository.ID, plan.Repository.CommonDir, repoID, e.Repo.CommonDir)
	}
	selected := map[string]bool{}
	for _, id := range only {
		if _, ok := plan.Item(id); !ok {
			return res, machine.NotInPlanRefusal(id)
		}
		selected[id] = true
	}
	actions := applyActions()
	run := &applyRun{plan: plan, opts: opts}
	var todo []machine.PlanItem
	for _, it := range plan.Items {
		if len(selected) > 0 && !selected[it.ID] {
			continue
		}
		if _, ok := actions[it.Action]; !ok {
			res.Kept++
			continue
		}
		todo = append(todo, it)
	}
	for i, it := range todo {
		if ctx.Err() != nil {
			res.Interrupted = "interrupted before " + it.ID + "; the rest of the plan was not applied"
			res.NotStarted = itemIDs(todo[i:])
			return res, nil
		}
		o, err := actions[it.Action](ctx, e, run, it)
		if ctx.Err() != nil && (err != nil || machine.ItemPending(o.Outcome, o.Refusal)) {
			// What failed or was refused was so because of the interrupt
			// (a git command it ended, an observation it cut short, which
			// no longer equals the plan's); the record, and its intent if
			// one was committed, say where the item stands.
			res.Interrupted = "interrupted at " + it.ID + " (custody resume settles what it left); the rest of the plan was not applied"
			res.StoppedAt = it.ID
			res.NotStarted = itemIDs(todo[i+1:])
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

// itemIDs are the ids of items, in order.
func itemIDs(items []machine.PlanItem) []string {
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.ID
	}
	return ids
}

// applyDestroy destroys an orphaned resource the plan reviewed. A resource
// the re-check keeps (its worktree is live again, another custody acts on
// it) is the plan's action refused, not an assessment's keep: apply reports
// it refused, and exits 3.
func applyDestroy(ctx context.Context, e *Env, _ *applyRun, it machine.PlanItem) (Outcome, error) {
	out, ref, err := e.resources().Reclaim(ctx, e, it.ID, it.Fingerprint)
	if out == machine.OutcomeKept {
		out = machine.OutcomeRefused
	}
	return Outcome{ID: it.ID, Outcome: out, Refusal: ref}, err
}

// applyRemove removes one worktree the plan proved removable.
func applyRemove(ctx context.Context, e *Env, run *applyRun, it machine.PlanItem) (Outcome, error) {
	if run.view == nil {
		// Only the remotes the plan's proofs name are asked: a remote no
		// item needs costs apply nothing, however long it takes.
		view, err := proof.AdvertiseNamed(ctx, e.Git, e.Repo, machine.ProvingRemotes(run.plan))
		if err != nil {
			return Outcome{}, err
		}
		if len(view.Remotes) == 0 {
			return Outcome{}, NoRemoteError(e)
		}
		run.view = view
		var heads []string
		for _, p := range run.plan.Items {
			if p.Action == machine.ActionRemove || p.Action == machine.ActionSettle {
				heads = append(heads, p.Head)
			}
		}
		run.ancestors = KnownAncestors(ctx, e, view, heads)
		var unproved []string
		for _, h := range heads {
			if !run.ancestors[h] {
				unproved = append(unproved, h)
			}
		}
		if len(unproved) > 0 {
			// The advertisement is this apply's one view of the remotes:
			// a head's proof against it is the same for every item and
			// both its observations, so it is asked once, in one batch
			// (as plan does), while HEAD's trees are asked.
			run.proofs = proof.StartProofs(ctx, e.Git, e.Repo, unproved, view)
		}
		run.trees = quarantine.CommitTrees(ctx, e.quarantineEnv(), heads)
		if run.envLines, err = e.envLines(); err != nil {
			return Outcome{}, err
		}
		if run.disposable, err = e.Disposable(); err != nil {
			return Outcome{}, err
		}
	}
	return applyItem(ctx, e, run, it)
}

func applyItem(ctx context.Context, e *Env, run *applyRun, it machine.PlanItem) (Outcome, error) {
	deadline := time.Now().Add(e.Wait)
	for attempt := 0; attempt < 1000; attempt++ {
		rec, err := e.Store.Get(it.ID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return Outcome{}, err
		}
		var stored *machine.Record
		if err == nil {
			stored = &rec
		}
		live := machine.HolderGone
		if stored != nil && rec.Intent != nil {
			live = Liveness(rec.Intent.Holder, e.Holder)
		}
		step := machine.DecideApplyRecord(it, stored, live, time.Now().Before(deadline))
		switch step.Move {
		case machine.ApplyWait:
			select {
			case <-ctx.Done():
				return Outcome{}, ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
			continue
		case machine.ApplyResume:
			ri := resumeRecord(ctx, e, rec)
			if ri.Refusal == nil {
				continue
			}
			step = machine.ApplyStep{Move: machine.ApplyRefuse, Refusal: ri.Refusal, Recheck: true}
		case machine.ApplyAlreadyDone:
			// A run interrupted after the tree went may have left its
			// resources: tear them down now.
			res, err := e.resources().Teardown(ctx, e, rec.ID)
			return Outcome{ID: it.ID, Outcome: machine.OutcomeAlreadyDone, State: rec.State, Resources: res}, err
		case machine.ApplyObserve:
			look, again, err := applyLookAt(ctx, e, run, it, rec)
			if err != nil {
				return Outcome{}, err
			}
			if again {
				continue
			}
			rec, step = look.rec, look.step
			if step.Move == machine.ApplyRemove || step.Move == machine.ApplySettle {
				o, refusal, again, err := applyIntent(ctx, e, run, it, look)
				if err != nil || refusal == nil && !again {
					return o, err
				}
				if again {
					continue
				}
				step = machine.ApplyStep{Move: machine.ApplyRefuse, Refusal: refusal, Recheck: true}
			}
		}
		if o, done, err := applyRefusal(e, it, rec, step); done || err != nil {
			return o, err
		}
	}
	return Outcome{}, fmt.Errorf("%s kept changing under concurrent invocations", it.ID)
}

// applyRefusal performs a refusing step over rec. A refusal that is to be
// rechecked ends the item only if the record did not move meanwhile;
// otherwise done is false and apply looks again (it ends already-done, or
// with the other invocation's refusal).
func applyRefusal(e *Env, it machine.PlanItem, rec machine.Record, step machine.ApplyStep) (o Outcome, done bool, err error) {
	if step.Recheck {
		now, err := e.Store.Get(it.ID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return Outcome{}, false, err
		}
		if err == nil && (now.Rev != rec.Rev || now.State != rec.State) {
			return Outcome{}, false, nil
		}
	}
	return refusedOutcome(it.ID, step.Refusal, rec.State), true, nil
}

// applyLook is one fresh look at an item's tree and what apply decided
// over it.
type applyLook struct {
	rec     machine.Record
	obs     machine.WorktreeObservation
	verdict machine.Verdict
	scope   observe.Scope
	step    machine.ApplyStep
}

// applyLookAt observes rec's tree fresh, expires an active record, and
// decides over the assessment of the record as it then is
// (machine.DecideApplyVerdict). again says another invocation moved the
// record meanwhile: look again.
func applyLookAt(ctx context.Context, e *Env, run *applyRun, it machine.PlanItem, rec machine.Record) (look applyLook, again bool, err error) {
	look.scope = run.applyScope(e)
	failpoint.Pause("apply/before-observe")
	if look.obs, _, err = e.ObserveRecord(ctx, rec, look.scope); err != nil {
		return look, false, err
	}
	if machine.ApplyExpires(rec, look.obs) {
		// A lease expired since plan: the tree counts as finished.
		next, err := e.fire(ctx, rec, machine.TriggerExpire, machine.Firing{Obs: look.obs}, "lease expired")
		var r *machine.Refusal
		switch {
		case errors.Is(err, store.ErrConflict):
			return look, true, nil
		case errors.As(err, &r):
			look.rec = rec
			look.step = machine.ApplyStep{Move: machine.ApplyRefuse, Refusal: machine.ActiveAgainRefusal(rec), Recheck: true}
			return look, false, nil
		case err != nil:
			return look, false, err
		}
		rec = next
	}
	look.rec = rec
	look.verdict = e.Assess(ctx, rec, look.obs, look.scope.View, e.Now())
	var external *machine.Refusal
	if !run.opts.AllowExternalRetirement {
		external = ExternalRefusal(e, rec, run.opts.PlanFile)
	}
	look.step = machine.DecideApplyVerdict(it, rec, look.obs, look.verdict, external)
	return look, false, nil
}

// applyIntent commits the removal or settlement intent look decided on
// and carries it out. A refusal from the record's machine is returned for
// apply to recheck; again says another invocation moved the record.
func applyIntent(ctx context.Context, e *Env, run *applyRun, it machine.PlanItem, look applyLook) (o Outcome, refusal *machine.Refusal, again bool, err error) {
	rec, obs, v := look.rec, look.obs, look.verdict
	trigger, what := machine.TriggerRemove, "removal intent"
	var intent *machine.Intent
	if look.step.Move == machine.ApplySettle {
		trigger, what = machine.TriggerSettle, "settlement intent: "+v.Settlement.Summary
		intent = &machine.Intent{Kind: machine.IntentRemoval, Path: rec.Path, Branch: rec.Branch, Commit: v.Settlement.Head,
			AdminKey: rec.AdminKey, Proof: v.Proof, Settlement: v.Settlement, Fingerprint: it.Fingerprint,
			PlanID: run.plan.PlanID, Holder: e.Holder, At: e.Now().UTC()}
	} else {
		head := obs.Head
		if obs.PathState == machine.PathAbsent {
			head = rec.EffectiveHead()
		}
		intent = &machine.Intent{Kind: machine.IntentRemoval, Path: rec.Path, Branch: rec.Branch, Commit: head,
			Dev: obs.Dev, Ino: obs.Ino, AdminKey: obs.AdminKey, Quarantine: quarantine.Path(rec), Proof: v.Proof, Fingerprint: it.Fingerprint,
			PlanID: run.plan.PlanID, Discarded: obs.Discarded, Holder: e.Holder, At: e.Now().UTC()}
	}
	next, err := e.fire(ctx, rec, trigger, machine.Firing{Obs: obs, Intent: intent, Fingerprint: it.Fingerprint}, what)
	if errors.Is(err, store.ErrConflict) {
		return Outcome{}, nil, true, nil // another invocation moved the record; look again
	}
	var r *machine.Refusal
	if errors.As(err, &r) {
		return Outcome{}, r, false, nil
	}
	if err != nil {
		return Outcome{}, nil, false, err
	}
	failpoint.At("apply/after-intent")
	if look.step.Move == machine.ApplySettle {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), gitfiles.RegistryTimeout)
		defer cancel()
		o, err := settleRemoval(ctx, e, next)
		return o, nil, false, err
	}
	failpoint.Pause("apply/after-intent")
	o, err = carryOutRemovalIn(ctx, e, next, look.scope, run.trees, true)
	return o, nil, false, err
}

// refusedOutcome reports refusal r of item id.
func refusedOutcome(id string, r *machine.Refusal, state machine.State) Outcome {
	return Outcome{ID: id, Outcome: machine.ForRefusal(r), State: state, Refusal: r}
}

// ExternalRefusal refuses removing an adopted tree outside the managed
// root unless the person confirmed it (--allow-external-retirement); nil
// when the tree is custody's own or inside the root.
func ExternalRefusal(e *Env, rec machine.Record, planFile string) *machine.Refusal {
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
	return machine.ExternalTreeRefusal(rec, e.Root, planFile)
}
