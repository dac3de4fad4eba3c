package steps

import (
	"context"
	"time"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/proof"
	"github.com/custody-sh/custody/store"
)

// archivedRecords is the set of record ids some active archive is of, read
// once for a whole plan; nil when the store could not say, so that every
// tree looks for its own archive (and reports what that read says).
func archivedRecords(e *Env) map[string]bool {
	all, err := store.ListKind[machine.Archive](e.Store, machine.KindArchive)
	if err != nil {
		return nil
	}
	out := make(map[string]bool, len(all))
	for _, a := range all {
		if a.State == machine.StateActive {
			out[a.Record] = true
		}
	}
	return out
}

// assessKnowing is e.assess for a plan that already knows which records
// have an archive (archivedRecords): a tree without one is assessed
// without asking the store again, which is what e.assess gives when it
// finds no covering archive (machine.CoverByArchive of no proof and no
// refusal).
func (e *Env) assessKnowing(ctx context.Context, archived map[string]bool, rec machine.Record, obs machine.WorktreeObservation, view *proof.RemoteView, now time.Time) machine.Verdict {
	if archived != nil && !archived[rec.ID] {
		return machine.Assess(rec, obs, e.Policy, now)
	}
	return e.assess(ctx, rec, obs, view, now)
}
