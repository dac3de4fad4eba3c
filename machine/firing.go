package machine

import "time"

// Firing is the argument of every trigger: the record as loaded, a fresh
// observation, the injected time and whatever the trigger needs. Guards read
// only a Firing.
type Firing struct {
	Record Record
	Obs    WorktreeObservation
	Now    time.Time
	Policy Policy
	// Intent is committed with create, relocate and remove.
	Intent *Intent
	// Fingerprint is the fingerprint plan reviewed; remove requires the
	// fresh observation to equal it.
	Fingerprint string
	// Dest is the observation of a relocation's destination.
	Dest *WorktreeObservation
	// Acknowledged is the commit a person named with
	// --acknowledge-unrecoverable; AckConfirmed says git confirmed that
	// nothing holds it.
	Acknowledged string
	AckConfirmed bool
	// Evidence is merged into the record by completing transitions.
	Evidence Evidence
}

func firingOf(args []any) (Firing, bool) {
	if len(args) != 1 {
		return Firing{}, false
	}
	f, ok := args[0].(Firing)
	return f, ok
}
