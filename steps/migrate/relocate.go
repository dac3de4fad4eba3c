package migrate

import (
	"context"
	"errors"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/steps/failpoint"
)

// relocated reports whether rec is candidate c after an earlier run of
// this migration adopted and moved it: adopted under c's admin key, active,
// and no longer at c's path.
func relocated(rec machine.Record, c machine.MigrateCandidate) bool {
	return rec.Origin == machine.OriginAdopted && rec.AdminKey == c.Audit.AdminKey && rec.State == machine.StateActive &&
		rec.Intent == nil && rec.Path != c.Audit.Path
}

// adoptRelocate puts c in custody (unless an earlier run did) and moves it
// into the managed root through the worktree machine's relocating state
// (Relocate: relocation intent, non-forced git worktree move, exact
// registration of the destination with HEAD unchanged). The tree stays in
// custody, active, at <root>/<id>.
func (run *migrateRun) adoptRelocate(ctx context.Context, e *steps.Env, c machine.MigrateCandidate, out MigrateOutcome) (MigrateOutcome, error) {
	rec, have, err := run.candidateRecord(e, c)
	if err != nil {
		return out, err
	}
	if !have {
		made, err := steps.Adopt(ctx, e, c.Audit.Path, false)
		if err != nil {
			var r *machine.Refusal
			if errors.As(err, &r) {
				out.Refusal = r
				return out, nil
			}
			return out, err
		}
		failpoint.At("migrate/after-adopt")
		rec.ID = made.ID
	}
	id := rec.ID
	res, err := steps.Relocate(ctx, e, id, "")
	if err != nil {
		return out, err
	}
	if res.Refusal != nil {
		out.Refusal = res.Refusal
		if res.Refusal.Retry == machine.CommandOn([]string{"custody", "relocate"}, id) {
			res.Refusal.Retry = machine.MigrateApplyRetry(id, run.opts.PlanFile)
		}
		return out, nil
	}
	out.Outcome, out.Moved = machine.OutcomeRelocated, res.To
	return out, nil
}
