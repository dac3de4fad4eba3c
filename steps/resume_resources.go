package steps

import (
	"context"
	"errors"
	"fmt"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/store"
)

// resumeResources drives ledger entries an interrupted run left with an
// intent whose holder is gone: an interrupted destroy runs again; an
// interrupted create of a live worktree is undone and done once more; one
// whose worktree is gone is destroyed.
func resumeResources(ctx context.Context, e *Env) ([]ResumeItem, error) {
	all, err := e.Store.Resources()
	if err != nil {
		return nil, err
	}
	var out []ResumeItem
	tornDown := map[string]bool{}
	for _, r := range all {
		if r.Intent == nil || r.State == machine.StateTombstoned {
			continue
		}
		if holderAlive(r.Intent.Holder, e.Holder) {
			out = append(out, ResumeItem{ID: r.ID, Outcome: "in-progress"})
			continue
		}
		wt, err := e.Store.Get(r.Worktree)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return out, err
		}
		if r.State == machine.StateProvisioning && err == nil && wt.State == machine.StateProvisioning {
			continue // the worktree's own resume re-drives its resources
		}
		wtErr := err
		// Take the intent over first: only the process whose
		// compare-and-swap wins runs the command again.
		in := *r.Intent
		in.Holder = e.Holder
		taken, terr := e.fireResource(ctx, r, machine.TriggerTakeOver, machine.ResourceFiring{Intent: &in}, "resumed")
		if errors.Is(terr, store.ErrConflict) {
			out = append(out, ResumeItem{ID: r.ID, Outcome: "in-progress"})
			continue
		}
		if terr != nil {
			return out, terr
		}
		r = taken
		var next machine.Resource
		if r.State == machine.StateProvisioning && err == nil && (wt.State == machine.StateActive || wt.State == machine.StateFinished) {
			e.runResourceCommand(ctx, r, r.Destroy)
			next, err = e.createResource(ctx, r)
		} else {
			next, err = e.destroyResource(ctx, r)
		}
		if err != nil {
			return out, err
		}
		if next.State == machine.StateTombstoned && (wtErr != nil || wt.State == machine.StateTombstoned) {
			tornDown[r.Worktree] = true
		}
		it := ResumeItem{ID: r.ID, Outcome: next.Evidence.Outcome}
		if next.State != machine.StateActive && next.State != machine.StateTombstoned {
			it.Refusal = &machine.Refusal{Code: machine.CodeResourceFailed, Path: r.Path, Retry: "custody resource gc",
				Message: fmt.Sprintf("%s of %s exited %d: %s", next.Evidence.Outcome, r.ID, next.Evidence.ExitCode, next.Evidence.Output)}
		}
		out = append(out, it)
	}
	// A teardown interrupted in the middle left the worktree's other
	// resources without intents: finish tearing them down.
	for id := range tornDown {
		res, err := teardownResources(ctx, e, id)
		if err != nil {
			return out, err
		}
		for _, o := range res {
			out = append(out, ResumeItem{ID: o.ID, Outcome: o.Outcome, Refusal: o.Refusal})
		}
	}
	return out, nil
}
