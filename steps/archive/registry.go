package archive

import (
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/store"
)

// archivedRecords is the set of record ids some active archive is of, read
// once for a whole plan; nil when the store could not say, so that every
// tree looks for its own archive (and reports what that read says).
func archivedRecords(e *steps.Env) map[string]bool {
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
