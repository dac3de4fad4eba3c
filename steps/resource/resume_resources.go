package resource

import (
	"context"
	"errors"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/store"
)

// resourceWorkflow is the resource kind's part in resume: the rules of
// machine.DecideResourceResume and what carries each out.
func resourceWorkflow() steps.Workflow[machine.Resource] {
	return steps.Workflow[machine.Resource]{
		Kind: machine.KindResource,
		Skip: func(ctx context.Context, e *steps.Env, r machine.Resource) (bool, error) {
			a, _, err := decideResource(ctx, e, r, false)
			return a == machine.ResourceResumeDeferred, err
		},
		TakeOver: func(ctx context.Context, e *steps.Env, r machine.Resource) (machine.Resource, error) {
			in := *r.Intent
			in.Holder = e.Holder
			return fireResource(ctx, e, r, machine.TriggerTakeOver, machine.ResourceFiring{Intent: &in}, "resumed")
		},
		Decide: func(ctx context.Context, e *steps.Env, r machine.Resource) (string, *machine.Refusal, error) {
			a, ref, err := decideResource(ctx, e, r, false)
			return string(a), ref, err
		},
		Continue: map[string]func(context.Context, *steps.Env, machine.Resource) ([]steps.ResumeItem, error){
			string(machine.ResourceResumeRecreate): func(ctx context.Context, e *steps.Env, r machine.Resource) ([]steps.ResumeItem, error) {
				if err := endGroup(e, r); err != nil {
					return []steps.ResumeItem{{ID: r.ID, Kind: machine.KindResource, Outcome: machine.OutcomeInProgress,
						Refusal: machine.GroupRunningRefusal(r.Path, err)}}, nil
				}
				runResourceCommand(ctx, e, r, r.Destroy, nil)
				next, err := createResource(ctx, e, r)
				if err != nil {
					return nil, err
				}
				return resourceResumed(r, next), nil
			},
			string(machine.ResourceResumeDestroy): resumeDestroy,
		},
	}
}

// decideResource gathers the facts of r's resume decision and takes it.
// The runner has already judged the holder when it asks for the decision.
func decideResource(ctx context.Context, e *steps.Env, r machine.Resource, HolderAlive bool) (machine.ResourceResumeAction, *machine.Refusal, error) {
	f := machine.ResourceResumeFacts{HolderAlive: HolderAlive}
	wt, err := e.Store.Get(r.Worktree)
	switch {
	case err == nil:
		f.Worktree = &wt
	case !errors.Is(err, store.ErrNotFound):
		return "", nil, err
	}
	if f.Worktree != nil && r.State == machine.StateProvisioning && wt.Intent == nil &&
		(wt.State == machine.StateActive || wt.State == machine.StateFinished) {
		// An interrupted create of a tree that has vanished since is not
		// made again: its record settles, and the resource with it.
		obs, _, err := e.ObserveRecord(ctx, wt, observe.Scope{})
		if err != nil {
			return "", nil, err
		}
		f.WorktreeVanished = machine.Vanished(obs)
	}
	a, ref := machine.DecideResourceResume(r, f)
	return a, ref, nil
}

// resumeDestroy runs an interrupted destroy (or the destroy of a create
// whose worktree is gone) again; when that leaves the worktree's last trace,
// the worktree's other resources are torn down too.
func resumeDestroy(ctx context.Context, e *steps.Env, r machine.Resource) ([]steps.ResumeItem, error) {
	next, err := destroyResource(ctx, e, r)
	if err != nil {
		return nil, err
	}
	out := resourceResumed(r, next)
	if next.State != machine.StateTombstoned {
		return out, nil
	}
	wt, err := e.Store.Get(r.Worktree)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return out, err
	}
	if err == nil && wt.State != machine.StateTombstoned {
		return out, nil
	}
	// A teardown interrupted in the middle left the worktree's other
	// resources without intents: finish tearing them down.
	rest, err := teardownResources(ctx, e, r.Worktree)
	for _, o := range rest {
		out = append(out, steps.ResumeItem{ID: o.ID, Kind: machine.KindResource, Outcome: o.Outcome, Refusal: o.Refusal})
	}
	return out, err
}

// resourceResumed reports a resumed command's outcome.
func resourceResumed(r, next machine.Resource) []steps.ResumeItem {
	it := steps.ResumeItem{ID: r.ID, Outcome: machine.Outcome(next.Evidence.Outcome)}
	if next.State != machine.StateActive && next.State != machine.StateTombstoned {
		it.Refusal = machine.ResumedResourceFailedRefusal(r, next)
	}
	return []steps.ResumeItem{it}
}
