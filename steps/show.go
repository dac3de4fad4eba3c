package steps

import (
	"context"
	"errors"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/store"
)

// ShowResult is one record with what it rests on.
type ShowResult struct {
	Record      machine.Record
	Observation *machine.WorktreeObservation
	Verdict     *machine.Verdict
	Journal     []store.Entry
	// Resources are the worktree's ledger entries, destroyed ones too.
	Resources []machine.Resource
}

// Show loads a record and its journal and, unless it is tombstoned, observes
// it fresh (status, proof against the remotes) and assesses it as plan
// would. It writes nothing.
func Show(ctx context.Context, e *Env, id string) (ShowResult, error) {
	rec, err := e.Store.Get(id)
	if errors.Is(err, store.ErrNotFound) {
		return ShowResult{}, machine.NoRecordToShowRefusal(id)
	}
	if err != nil {
		return ShowResult{}, err
	}
	res := ShowResult{Record: rec}
	err = e.Store.Journal(id, func(_ []byte, en store.Entry) error {
		res.Journal = append(res.Journal, en)
		return nil
	})
	if err != nil {
		return res, err
	}
	if res.Resources, err = e.Store.ResourcesOf(id); err != nil {
		return res, err
	}
	if rec.State == machine.StateTombstoned {
		return res, nil
	}
	scope, err := e.fullScope(ctx)
	if err != nil {
		return res, err
	}
	obs, _, err := e.ObserveRecord(ctx, rec, scope)
	if err != nil {
		return res, err
	}
	v := e.Assess(ctx, rec, obs, scope.View, e.Now()) // names a covering archive (Env.Archives)
	if rec.State == machine.StateActive && !machine.Removable(rec, obs.Lease, e.Now()) {
		// Say what plan would say once it is finished, too: what both
		// assessments find (a live lease, a pending intent) is named once.
		fin := rec
		fin.State = machine.StateFinished
		v2 := e.Assess(ctx, fin, obs, scope.View, e.Now())
		v.Refusals = machine.AddRefusals(v.Refusals, v2.Refusals...)
	}
	res.Observation, res.Verdict = &obs, &v
	return res, nil
}
