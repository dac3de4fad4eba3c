package migrate

import (
	"context"
	"fmt"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
)

// MigrateDisposed is a person's recorded disposition of one candidate.
type MigrateDisposed struct {
	ID          string              `json:"id"`
	Digest      string              `json:"digest"`
	Approved    bool                `json:"approved"`
	Disposition machine.Disposition `json:"disposition"`
	Reason      string              `json:"reason,omitempty"`
}

// Pending is false: a recorded disposition is the command's result.
func (MigrateDisposed) Pending() bool { return false }

// latestObservation returns the newest audit event of candidate id.
func latestObservation(e *steps.Env, id string) (machine.MigrateEvent, bool, error) {
	evs, err := migrationEvents(e)
	if err != nil {
		return machine.MigrateEvent{}, false, err
	}
	var last machine.MigrateEvent
	found := false
	for _, ev := range evs {
		if ev.Candidate == id && ev.Event == machine.EventMigrateObservation {
			last, found = ev, true
		}
	}
	return last, found, nil
}

// MigrateDispose records a person's approval (of the proposed disposition,
// or of disposition when set) or rejection (with reason) of candidate id,
// bound to digest, which must be the candidate's newest audit.
func MigrateDispose(_ context.Context, e *steps.Env, id string, approve bool, disposition machine.Disposition, reason, digest string) (MigrateDisposed, error) {
	obs, ok, err := latestObservation(e, id)
	if err != nil {
		return MigrateDisposed{}, err
	}
	if !ok || obs.Proposal == nil {
		return MigrateDisposed{}, &machine.Refusal{Code: machine.CodeMigrateNotCandidate, Retry: "custody migrate status",
			Message: fmt.Sprintf("%s is no candidate any migrate plan audited; nothing was recorded", machine.QuoteArg(id))}
	}
	if digest != obs.Digest {
		return MigrateDisposed{}, &machine.Refusal{Code: machine.CodeMigrateDigestMismatch, Path: obs.Path, Retry: "custody migrate status",
			Message: fmt.Sprintf("--digest %s is not %s's newest audit (%s): a disposition binds the exact audit a person reviewed; read the newest one in the plan file and dispose again. Nothing was recorded", digest, id, obs.Digest)}
	}
	d := MigrateDisposed{ID: id, Digest: digest, Approved: approve, Reason: reason}
	switch {
	case !approve:
		d.Disposition = machine.DispositionReject
	case disposition != "":
		d.Disposition = disposition
	default:
		d.Disposition = obs.Proposal.Disposition
	}
	if !obs.Proposal.Permits(d.Disposition) {
		return MigrateDisposed{}, &machine.Refusal{Code: machine.CodeDispositionNotAllowed, Path: obs.Path,
			Retry:   machine.CommandOn([]string{"custody", "migrate", "dispose", "--approve", "--disposition", string(firstAllowed(obs.Proposal)), "--digest", digest}, id),
			Message: fmt.Sprintf("%s's audit does not permit disposition %q (it permits %v): %s. Nothing was recorded", id, d.Disposition, obs.Proposal.Allowed, obs.Proposal.Reason)}
	}
	if err := journalMigrate(e, machine.MigrateEvent{Event: machine.EventMigrateDisposition, Candidate: id, Path: obs.Path, Digest: digest,
		Disposition: d.Disposition, Approved: approve, Reason: reason}); err != nil {
		return MigrateDisposed{}, err
	}
	return d, nil
}

func firstAllowed(p *machine.MigrateProposal) machine.Disposition {
	if len(p.Allowed) == 0 {
		return machine.DispositionReject
	}
	return p.Allowed[0]
}
