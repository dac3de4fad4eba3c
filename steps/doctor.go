package steps

import (
	"context"
	"fmt"
	"strings"

	"github.com/custody-sh/custody/machine"
	json "github.com/custody-sh/custody/machine/bytejson"
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
	// A journal that cannot be read is Check's problem, already reported;
	// the migration's standing is then unknown, and said nothing of.
	if mp, err := migrationProblem(e); err == nil {
		ps = append(ps, mp...)
	}
	if lp, err := landProblems(e); err == nil {
		ps = append(ps, lp...)
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

// MigrationEvents reads every migration event of the journal (but the
// discovery listings), in order.
func MigrationEvents(e *Env) ([]machine.MigrateEvent, error) {
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

// landProblems are the landings (custody land) the journal records as
// begun and not settled: an intent journaled before a push, with neither
// landed nor land-abandoned after it. Whether the push happened is the
// remote's to say; custody land settles it by what the remote advertises.
func landProblems(e *Env) ([]store.Problem, error) {
	recs, err := e.Store.ListLive()
	if err != nil {
		return nil, err
	}
	var ps []store.Problem
	for _, rec := range recs {
		events, intents, err := LandEvents(e, rec.ID)
		if err != nil {
			return nil, err
		}
		if in, ok := machine.PendingLand(events, intents); ok {
			ps = append(ps, store.Problem{Where: "worktree " + rec.ID, Fix: machine.CommandOn([]string{"custody", "land"}, rec.ID),
				What: fmt.Sprintf("a landing onto %s %s (%s, %s to %s) was cut short before custody knew whether it was pushed; land it again: custody asks the remote and records it landed, or integrates afresh",
					in.Remote, in.Ref, in.Method, machine.Abbrev(in.Old, machine.ShortCommit), machine.Abbrev(in.New, machine.ShortCommit))})
		}
	}
	return ps, nil
}

// LandEvents reads record id's land events (custody land) from the
// journal, oldest first, each with its intent.
func LandEvents(e *Env, id string) ([]string, []machine.LandIntent, error) {
	var events []string
	var intents []machine.LandIntent
	err := e.Store.Journal(id, func(_ []byte, en store.Entry) error {
		switch en.Event {
		case machine.EventLandIntent, machine.EventLanded, machine.EventLandAbandoned:
		default:
			return nil
		}
		var in machine.LandIntent
		if err := json.Unmarshal(en.Detail, &in); err != nil {
			return fmt.Errorf("journal entry %d (%s): %w", en.Seq, en.Event, err)
		}
		events, intents = append(events, en.Event), append(intents, in)
		return nil
	})
	return events, intents, err
}

// migrationProblem is the problem of a migration the journal records as
// begun and not complete: a candidate pending or refused, with the command
// that moves the first of them on.
func migrationProblem(e *Env) ([]store.Problem, error) {
	evs, err := MigrationEvents(e)
	if err != nil {
		return nil, err
	}
	st := machine.FoldMigration(evs)
	if machine.MigrationComplete(st) {
		return nil, nil
	}
	what, fix := machine.MigrationIncomplete(st)
	return []store.Problem{{Where: "migration", What: what, Fix: fix}}, nil
}
