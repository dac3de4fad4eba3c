package steps

import (
	"context"
	"fmt"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/store"
)

// Doctor checks the state file (store.Check: every bucket of its schema,
// the resource ledger's entries and their intents included) and what the
// ledger's entries left outside it: orphaned entries GC cannot reclaim
// (gc = false, a frozen command still carrying a token, an unobservable
// admin entry) and destroys that failed. The configuration was already checked when the Env was built.
func Doctor(ctx context.Context, e *Env) ([]store.Problem, error) {
	ps, err := e.Store.Check()
	if err != nil {
		return nil, err
	}
	rs, vs, err := e.resources().Orphans(ctx, e)
	if err != nil {
		return ps, err
	}
	for i, r := range rs {
		if r.Evidence.Outcome == string(machine.TriggerDestroyFailed) {
			ps = append(ps, store.Problem{Where: "resource " + r.ID, Fix: "custody resource gc",
				What: fmt.Sprintf("its destroy failed (exit %d): %s", r.Evidence.ExitCode, r.Evidence.Output)})
		}
		if v := vs[i]; !v.Reclaim && v.Refusal != nil {
			switch v.Refusal.Code {
			case machine.CodeGCDisabled, machine.CodeUnexpandedToken, machine.CodeObservationFailed:
				ps = append(ps, store.Problem{Where: "resource " + r.ID, What: "cannot be reclaimed: " + v.Refusal.Message,
					Fix: "destroy " + r.Handle + " by hand"})
			}
		}
	}
	return ps, nil
}
