package migrate

import (
	"context"
	"fmt"
	"strings"

	"github.com/custody-sh/custody/machine"
	json "github.com/custody-sh/custody/machine/bytejson"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/store"
)

// MigrateStatusResult is where every candidate of the migration stands.
type MigrateStatusResult struct {
	Candidates []machine.MigrateCandidateStatus `json:"candidates"`
	Counts     map[machine.MigrateState]int     `json:"counts"`
	// Complete is true only when every candidate is settled; a run killed
	// between an act and its outcome leaves it false.
	Complete bool `json:"complete"`
}

// Pending reports whether some candidate is pending or refused.
func (r MigrateStatusResult) Pending() bool { return !r.Complete }

// migrationEvents reads every migration event of the journal, in order.
func migrationEvents(e *steps.Env) ([]machine.MigrateEvent, error) {
	var out []machine.MigrateEvent
	err := e.Store.Journal("", func(_ []byte, en store.Entry) error {
		if !strings.HasPrefix(en.Event, "migrate-") || en.Event == machine.EventMigrateDiscovery {
			return nil
		}
		var ev machine.MigrateEvent
		if err := json.Unmarshal(en.Detail, &ev); err != nil {
			return fmt.Errorf("journal entry %d (%s): %w", en.Seq, en.Event, err)
		}
		out = append(out, ev)
		return nil
	})
	return out, err
}

// MigrateStatus folds the journal's migration events into each
// candidate's standing.
func MigrateStatus(_ context.Context, e *steps.Env) (MigrateStatusResult, error) {
	evs, err := migrationEvents(e)
	if err != nil {
		return MigrateStatusResult{}, err
	}
	st := machine.FoldMigration(evs)
	res := MigrateStatusResult{Candidates: st, Counts: map[machine.MigrateState]int{}, Complete: machine.MigrationComplete(st)}
	for _, s := range st {
		res.Counts[s.State]++
	}
	return res, nil
}

// journalMigrate appends one migration event.
func journalMigrate(e *steps.Env, ev machine.MigrateEvent) error {
	return e.Store.AppendEvent(store.Event{Record: ev.Candidate, Kind: machine.KindWorktree, Event: ev.Event, At: e.Now().UTC(), Actor: e.Actor, Detail: ev})
}
