package resource

import (
	"context"
	"errors"
	"fmt"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/store"
)

// EnsureResult is what ensure did with a worktree's resources.
type EnsureResult struct {
	ID        string                  `json:"id"`
	Resources []steps.ResourceOutcome `json:"resources"`
}

// Pending reports whether an ensure failed.
func (r EnsureResult) Pending() bool { return resourcesPending(r.Resources) }

// resourcesPending reports whether any resource was left refused or
// unfinished.
func resourcesPending(rs []steps.ResourceOutcome) bool {
	for _, o := range rs {
		if machine.ItemPending(o.Outcome, o.Refusal) {
			return true
		}
	}
	return false
}

// Ensure makes the resources of worktree id ready. For an active adopted
// tree it first creates every resource custody.toml declares that the
// ledger has never held for it (provisionAdopted: adoption makes none, so
// this is how a tree another tool made gets its resources). Then it runs
// the ensure command of every active resource not created by this very
// run (idempotent re-readiness, for session start) and records each run.
func Ensure(ctx context.Context, e *steps.Env, id string) ([]steps.ResourceOutcome, error) {
	rec, err := e.Store.Get(id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, machine.NoRecordRefusal(id)
	} else if err != nil {
		return nil, err
	}
	outs := []steps.ResourceOutcome{}
	made := map[string]bool{}
	if rec.Origin == machine.OriginAdopted && rec.State == machine.StateActive {
		prov, err := provisionAdopted(ctx, e, rec)
		outs = append(outs, prov...)
		if err != nil {
			return outs, err
		}
		for _, o := range prov {
			made[o.ID] = true
		}
	}
	rs, err := e.LiveResources(id)
	if err != nil {
		return nil, err
	}
	for _, r := range rs {
		if r.State != machine.StateActive || r.Ensure == "" || made[r.ID] {
			continue
		}
		if err := ctx.Err(); err != nil {
			return outs, err
		}
		code, attempts, out := runWithRetries(ctx, e, &r, r.Ensure)
		if err := interruptedResource(ctx, r, "ensure"); err != nil {
			return outs, err
		}
		r2, err := fireResource(ctx, e, r, machine.TriggerEnsure, machine.ResourceFiring{Ran: true, ExitCode: code, Attempts: attempts, Output: out},
			fmt.Sprintf("ensure (exit %d): %s", code, out))
		if err != nil {
			return outs, err
		}
		o := steps.ResourceOutcome{ID: r2.ID, Handle: r2.Handle, Outcome: machine.OutcomeEnsured, ExitCode: code}
		if code != 0 {
			o.Outcome = machine.OutcomeFailed
			o.Refusal = machine.EnsureFailedRefusal(id, r, code, out)
		}
		outs = append(outs, o)
	}
	return outs, nil
}
