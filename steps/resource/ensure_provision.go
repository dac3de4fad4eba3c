package resource

import (
	"context"
	"errors"
	"fmt"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/steps/failpoint"
)

// provisionAdopted creates, in document order, each resource custody.toml
// declares that the ledger has never held for the adopted tree rec (no
// entry in any state: one destroyed by teardown is not made again), each
// under its own create intent exactly as custody new makes them, so an
// interrupted run is undone and redone by resume. It runs nothing unless
// custody.toml's content is approved (CodeConfigUntrusted).
//
// The tree is not custody's to roll back: a required resource that fails
// stops the provisioning with a refusal whose retry tears down what was
// made, and the tree stays as it is. A create that failed in an earlier
// run is reported again, so the failure is never silent.
func provisionAdopted(ctx context.Context, e *steps.Env, rec machine.Record) ([]steps.ResourceOutcome, error) {
	if len(e.Config.Resources) == 0 {
		return nil, nil
	}
	all, err := e.Store.ResourcesOf(rec.ID)
	if err != nil {
		return nil, err
	}
	held := map[string]machine.Resource{}
	for _, r := range all {
		held[r.Name] = r
	}
	var missing []machine.ResourceSpec
	var outs []steps.ResourceOutcome
	for _, spec := range e.Config.Resources {
		r, ok := held[spec.Name]
		if !ok {
			missing = append(missing, spec)
			continue
		}
		if r.State == machine.StateFinished && r.Evidence.Outcome == string(machine.TriggerCreateFailed) {
			outs = append(outs, steps.ResourceOutcome{ID: r.ID, Handle: r.Handle, Outcome: machine.OutcomeFailed, ExitCode: r.Evidence.ExitCode,
				Refusal: machine.AdoptedResourceNotMadeRefusal(rec, spec.Name, r)})
			if spec.Required {
				break // what comes after a failed required resource is not made
			}
		}
	}
	if len(missing) == 0 {
		return outs, nil
	}
	if err := e.RequireTrusted(); err != nil {
		return outs, err
	}
	for _, spec := range missing {
		if err := ctx.Err(); err != nil {
			return outs, fmt.Errorf("interrupted before resource %s of %s; custody resource ensure in the tree makes the rest: %w", spec.Name, rec.ID, err)
		}
		r, err := declareResource(ctx, e, rec, spec)
		var ref *machine.Refusal
		if errors.As(err, &ref) {
			outs = append(outs, steps.ResourceOutcome{ID: r.ID, Handle: r.Handle, Outcome: machine.OutcomeRefused, Refusal: ref})
			if spec.Required {
				break
			}
			continue
		}
		if err != nil {
			return outs, err
		}
		failpoint.At("resource/after-create-intent")
		if r, err = createResource(ctx, e, r); err != nil {
			return outs, err
		}
		o := steps.ResourceOutcome{ID: r.ID, Handle: r.Handle, Outcome: machine.Outcome(r.Evidence.Outcome), ExitCode: r.Evidence.ExitCode}
		if r.State != machine.StateActive {
			o.Outcome = machine.OutcomeFailed
			o.Refusal = machine.AdoptedResourceFailedRefusal(rec, spec.Name, r)
			outs = append(outs, o)
			if spec.Required {
				break
			}
			continue
		}
		outs = append(outs, o)
	}
	if hostio.Lstat(rec.Path).State != machine.PathPresent {
		return outs, nil
	}
	return outs, writeEnv(ctx, e, rec)
}
