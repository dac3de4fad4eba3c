package migrate

import (
	"context"

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
	// PlanFile is the migrate plan file holding the audit disposed of
	// (absolute), "" when no file holds it (migrate apply journaled it
	// when the candidate changed): then a fresh plan comes first.
	PlanFile string `json:"plan_file,omitempty"`
	// Next is the command that carries the disposition out
	// (machine.MigrateApplyNext).
	Next string `json:"next"`
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
		return MigrateDisposed{}, machine.MigrateNoCandidateRefusal(id)
	}
	if digest != obs.Digest {
		return MigrateDisposed{}, machine.MigrateDigestMismatchRefusal(id, obs.Path, digest, obs.Digest)
	}
	d := MigrateDisposed{ID: id, Digest: digest, Approved: approve, Reason: reason, PlanFile: obs.PlanFile, Next: machine.MigrateApplyNext(id, obs.PlanFile)}
	switch {
	case !approve:
		d.Disposition = machine.DispositionReject
	case disposition != "":
		d.Disposition = disposition
	default:
		d.Disposition = obs.Proposal.Disposition
	}
	if !obs.Proposal.Permits(d.Disposition) {
		return MigrateDisposed{}, machine.DispositionNotAllowedRefusal(id, obs.Path, digest, d.Disposition, *obs.Proposal)
	}
	if err := journalMigrate(e, machine.MigrateEvent{Event: machine.EventMigrateDisposition, Candidate: id, Path: obs.Path, Digest: digest,
		Disposition: d.Disposition, Approved: approve, Reason: reason}); err != nil {
		return MigrateDisposed{}, err
	}
	return d, nil
}
