package land

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/proof"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/steps/failpoint"
	"github.com/custody-sh/custody/store"
)

// Options say how to land a tree.
type Options struct {
	// Method is how to integrate; "" fast-forwards only.
	Method machine.LandMethod
	// Onto names the target branch; "" is the proving remote's HEAD.
	Onto string
	// Yes removes the tree at once once it landed (steps.Retire);
	// otherwise its removal is planned (Result.Plan) for custody apply.
	Yes bool
	// Retry is the land command as the person ran it, for refusals, and
	// RetryWith the same with another method.
	Retry     string
	RetryWith func(machine.LandMethod) string
}

// Landing says whether the tree's work is on the target.
type Landing string

// What became of the landing.
const (
	// Landed: pushed now, or found pushed by a run cut short (Resumed).
	Landed Landing = "landed"
	// AlreadyLanded: the target already held the tree's work; nothing
	// was pushed.
	AlreadyLanded Landing = "already-landed"
	// NotLanded: refused; nothing was pushed.
	NotLanded Landing = "not-landed"
)

// Result is what custody land did with one tree.
type Result struct {
	ID     string `json:"id"`
	Path   string `json:"path"`
	Branch string `json:"branch,omitempty"`
	// Head is the tree's HEAD that was landed.
	Head    string  `json:"head,omitempty"`
	Landing Landing `json:"landing"`
	// Method is how it was integrated.
	Method machine.LandMethod `json:"method,omitempty"`
	// Target is the branch integrated into; Old and New its tip before
	// and after.
	Target *machine.LandTarget `json:"target,omitempty"`
	Old    string              `json:"old,omitempty"`
	New    string              `json:"new,omitempty"`
	// Resumed says an interrupted run's push was found landed.
	Resumed bool `json:"resumed,omitempty"`
	// Refusals say why it did not land, or why the tree stays.
	Refusals []machine.Refusal `json:"refusals,omitempty"`
	// Removed says the tree is gone (with --yes); Removal is what apply
	// did with it, Proof what it stood on.
	Removed bool           `json:"removed"`
	Removal *steps.Outcome `json:"removal,omitempty"`
	Proof   *machine.Proof `json:"proof,omitempty"`
	// Action is what the plan of the landed tree said (remove, or keep
	// with Refusals); State is the state a kept tree is left in.
	Action machine.Action `json:"action,omitempty"`
	State  machine.State  `json:"state,omitempty"`
	// Plan is the removal's plan (--plan), which the caller writes to
	// PlanFile; nil when the tree was removed at once or nothing landed.
	Plan *machine.Plan `json:"-"`
	// PlanFile is where the removal's plan was written (--plan).
	PlanFile string `json:"plan_file,omitempty"`
	// Next is the command to run next.
	Next string `json:"next,omitempty"`
}

// Pending reports whether the tree did not land, or stays when it should
// have gone (or its plan keeps it).
func (r Result) Pending() bool {
	if r.Landing == NotLanded || len(r.Refusals) > 0 {
		return true
	}
	if r.Plan != nil {
		return r.Action != machine.ActionRemove && r.Action != machine.ActionSettle
	}
	return !r.Removed
}

// keep records that the tree stays for rs.
func (r *Result) keep(next string, rs ...machine.Refusal) {
	r.Refusals = append(r.Refusals, rs...)
	r.Next = next
}

// Land integrates record id's branch into the default branch of the
// remote that proves it and removes the tree on the fresh proof. In order:
// an intent an interrupted run left is settled (landed when the remote
// shows its new tip, abandoned otherwise); the tree must be what a plan
// would remove but for its work not being published (clean, no live
// lease, no process, nothing hidden); the pre-land check runs in the tree
// and the tree is observed again; the branch is integrated against the
// target's advertised tip without a checkout; a land-intent is journaled;
// the push goes under a lease on that tip; the remote is asked again and
// the landing journaled (landed, or land-abandoned); then the tree is
// removed as custody remove does (Yes), or its removal is planned for
// custody apply. It is idempotent: run again after any interruption it
// goes on from where the journal says it stood, and a landed tree that
// was removed reports already-done.
func Land(ctx context.Context, e *steps.Env, id string, opts Options) (Result, error) {
	rec, err := e.Store.Get(id)
	if errors.Is(err, store.ErrNotFound) {
		return Result{}, machine.NoRecordRefusal(id)
	}
	if err != nil {
		return Result{}, err
	}
	res := Result{ID: id, Path: rec.Path, Branch: rec.Branch, Landing: NotLanded}
	switch rec.State {
	case machine.StateTombstoned:
		// Landed, then removed (by this command, or by the resume of
		// its interrupted removal): already done. Removed without a
		// landing: nothing is left to land.
		events, _, err := steps.LandEvents(e, id)
		if err != nil {
			return res, err
		}
		if !slices.Contains(events, machine.EventLanded) {
			return res, machine.LandRemovedRefusal(rec)
		}
		res.Landing, res.Removed = AlreadyLanded, true
		res.Removal = &steps.Outcome{ID: id, Outcome: machine.OutcomeAlreadyDone, State: rec.State}
		return res, nil
	case machine.StateActive, machine.StateFinished:
	default:
		return res, machine.LandWrongStateRefusal(rec)
	}
	prev := e.Requesters
	e.Requesters = observe.RequesterChain(rec.Path)
	defer func() { e.Requesters = prev }()

	view, err := proof.Advertise(ctx, e.Git, e.Repo)
	if err != nil {
		return res, err
	}
	if len(view.Remotes) == 0 {
		return res, steps.NoRemoteError(e)
	}
	events, intents, err := steps.LandEvents(e, id)
	if err != nil {
		return res, err
	}
	var landed *machine.LandIntent
	if in, ok := machine.PendingLand(events, intents); ok {
		verdict, _, why, err := settle(ctx, e, view, id, in)
		if err != nil {
			return res, err
		}
		switch verdict {
		case machine.LandResumeLanded:
			landed, res.Resumed = &in, true
		case machine.LandResumeUnknown:
			t := machine.LandTarget{Push: in.Push, Remote: in.Remote, Ref: in.Ref, Tip: in.Old}
			res.keep(opts.Retry, *machine.LandPushRefusal(rec.Path, t, in.New, why+"; whether an earlier run's push landed is not known", opts.Retry))
			return res, nil
		}
	}
	if landed == nil {
		obs, blocking, err := observeTree(ctx, e, rec, view)
		if err != nil {
			return res, err
		}
		if len(blocking) > 0 {
			res.keep(opts.Retry, retrying(blocking, opts.Retry)...)
			return res, nil
		}
		res.Head = obs.Head
		if in, ok := machine.LastLanded(events, intents, obs.Head); ok {
			landed = &in
		} else {
			var r *machine.Refusal
			if landed, r, err = integrateAndPush(ctx, e, rec, obs, view, opts, &res); err != nil || r != nil {
				if r != nil {
					res.keep(opts.Retry, *r)
				}
				return res, err
			}
		}
	}
	if landed != nil {
		res.Landing, res.Method, res.Head = Landed, landed.Method, landed.Head
		res.Target = &machine.LandTarget{Push: landed.Push, Remote: landed.Remote, Ref: landed.Ref, Tip: landed.Old}
		res.Old, res.New = landed.Old, landed.New
	}
	failpoint.At("land/after-landed")
	return res, remove(ctx, e, id, opts, &res)
}

// observeTree observes rec's tree against view and assesses it as if
// finished: the reasons that would keep it other than its work not being
// on a remote (machine.LandBlocking) refuse the landing.
func observeTree(ctx context.Context, e *steps.Env, rec machine.Record, view *proof.RemoteView) (machine.WorktreeObservation, []machine.Refusal, error) {
	scope, err := e.AssessScope(view)
	if err != nil {
		return machine.WorktreeObservation{}, nil, err
	}
	obs, _, err := e.ObserveRecord(ctx, rec, scope)
	if err != nil {
		return obs, nil, err
	}
	fin := rec
	fin.State = machine.StateFinished
	v := e.Assess(ctx, fin, obs, view, e.Now())
	return obs, machine.LandBlocking(v.Refusals), nil
}

// retrying is rs with each retry that is custody plan (the person deals
// with the reason, then plan looks again) replaced by the land command.
func retrying(rs []machine.Refusal, retry string) []machine.Refusal {
	out := make([]machine.Refusal, len(rs))
	for i, r := range rs {
		if r.Retry == "custody plan" {
			r.Retry = retry
		}
		out[i] = r
	}
	return out
}

// integrateAndPush runs the pre-land check, integrates the tree's HEAD
// into the target and pushes it: the landing that landed (nil with
// nothing to land), or the refusal of one that did not.
func integrateAndPush(ctx context.Context, e *steps.Env, rec machine.Record, obs machine.WorktreeObservation, view *proof.RemoteView, opts Options, res *Result) (*machine.LandIntent, *machine.Refusal, error) {
	var tips []machine.LandTip
	for _, t := range view.Tips {
		tips = append(tips, machine.LandTip{Remote: t.Remote, Ref: t.Ref, Commit: t.Commit, Default: t.Default})
	}
	t, r := machine.DecideLandTarget(view.Push, tips, view.Failures, opts.Onto, rec.Path, opts.Retry)
	if r != nil {
		return nil, r, nil
	}
	res.Target, res.Old = &t, t.Tip
	if cmd := e.Config.LandCheck; cmd != "" {
		if err := e.RequireLandCheckTrusted(); err != nil {
			var ref *machine.Refusal
			if errors.As(err, &ref) {
				return nil, ref, nil
			}
			return nil, nil, err
		}
		if code, out := runCheck(ctx, rec.Path, cmd); code != 0 {
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			return nil, machine.LandCheckFailedRefusal(rec.Path, cmd, code, out, opts.Retry), nil
		}
		again, blocking, err := observeTree(ctx, e, rec, view)
		if err != nil {
			return nil, nil, err
		}
		if len(blocking) > 0 {
			return nil, &retrying(blocking, opts.Retry)[0], nil
		}
		if again.Head != obs.Head {
			return nil, machine.LandHeadMovedRefusal(rec.Path, obs.Head, again.Head, opts.Retry), nil
		}
	}
	g := integrator{e: e, path: rec.Path}
	facts, err := g.facts(ctx, obs.Head, t.Tip)
	if err != nil {
		return nil, nil, err
	}
	method, r := machine.DecideLand(opts.Method, facts, t, rec.Path, opts.RetryWith)
	if r != nil {
		return nil, r, nil
	}
	res.Method = method
	if method == machine.LandNothing {
		res.Landing = AlreadyLanded
		return nil, nil, nil
	}
	newTip, conflicts, err := g.integrate(ctx, method, obs.Head, rec.Branch, t)
	var ie *identityError
	if errors.As(err, &ie) {
		return nil, machine.LandNoIdentityRefusal(rec.Path, ie.err), nil
	}
	if err != nil {
		return nil, nil, err
	}
	if len(conflicts) > 0 {
		return nil, machine.LandConflictRefusal(rec.Path, method, obs.Head, t, conflicts, opts.Retry), nil
	}
	if newTip == t.Tip {
		res.Landing = AlreadyLanded
		return nil, nil, nil
	}
	in := machine.LandIntent{Method: method, Push: t.Push, Remote: t.Remote, Ref: t.Ref, Old: t.Tip, New: newTip, Head: obs.Head, Branch: rec.Branch}
	if err := journal(e, rec.ID, machine.EventLandIntent, in); err != nil {
		return nil, nil, fmt.Errorf("journal the landing of %s: %w", rec.ID, err)
	}
	failpoint.At("land/after-intent")
	failpoint.Pause("land/before-push")
	if r, err := push(ctx, e, view, rec.ID, rec.Path, t, in, opts.Retry); err != nil || r != nil {
		return nil, r, err
	}
	return &in, nil, nil
}

// remove lets the landed tree go on the fresh proof: at once, as custody
// remove does (opts.Yes), or by finishing it and planning its removal
// alone for custody apply.
func remove(ctx context.Context, e *steps.Env, id string, opts Options, res *Result) error {
	if opts.Yes {
		r, err := steps.Retire(ctx, e, id, steps.RetireOptions{Actor: e.Actor, ExcuseRequesters: true})
		if err != nil {
			return err
		}
		res.Removal, res.Proof, res.Action, res.State = r.Removal, r.Proof, r.Action, r.State
		res.Removed = r.Gone()
		if r.Kept {
			res.keep(opts.Retry, r.Refusals...)
		}
		return nil
	}
	rec, err := e.Store.Get(id)
	if err != nil {
		return err
	}
	wasActive := rec.State == machine.StateActive
	fin, err := steps.Finish(ctx, e, []string{id})
	if err != nil {
		return err
	}
	if len(fin) == 1 && fin[0].Refusal != nil {
		res.keep(opts.Retry, *fin[0].Refusal)
		return nil
	}
	plan, err := steps.PlanRecord(ctx, e, id)
	if err != nil {
		return err
	}
	res.Plan = &plan
	it, ok := plan.Item(id)
	if !ok {
		return fmt.Errorf("internal: the plan of %s has no item", id)
	}
	res.Action, res.Proof, res.State = it.Action, it.Proof, machine.StateFinished
	if it.Action == machine.ActionRemove || it.Action == machine.ActionSettle {
		return nil
	}
	res.keep(opts.Retry, it.Refusals...)
	if wasActive {
		if out, err := steps.Reopen(ctx, e, []string{id}); err == nil && len(out) == 1 && out[0].Refusal == nil {
			res.State = machine.StateActive
		}
	}
	return nil
}
