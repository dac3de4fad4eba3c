package machine_test

import (
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/machine"
)

func TestFoldMigrateLedger(t *testing.T) {
	t.Parallel()
	ev := func(kind, cand, digest string, o machine.Outcome) machine.MigrateEvent {
		return machine.MigrateEvent{Event: kind, Candidate: cand, Digest: digest, Outcome: o}
	}
	approve := func(cand, digest string) machine.MigrateEvent {
		e := ev(machine.EventMigrateDisposition, cand, digest, "")
		e.Approved, e.Disposition = true, machine.DispositionRetire
		return e
	}
	for _, c := range []struct {
		name             string
		events           []machine.MigrateEvent
		decided, settled []string
	}{
		{"nothing journaled", nil, nil, nil},
		{"approved, not applied", []machine.MigrateEvent{approve("a", "d1")}, []string{"a d1"}, nil},
		{"applied and removed", []machine.MigrateEvent{
			approve("a", "d1"), ev(machine.EventMigrateAct, "a", "d1", ""), ev(machine.EventMigrateOutcome, "a", "d1", machine.OutcomeRemoved),
		}, []string{"a d1"}, []string{"a d1"}},
		{"killed between act and outcome", []machine.MigrateEvent{
			approve("a", "d1"), ev(machine.EventMigrateAct, "a", "d1", ""),
		}, []string{"a d1"}, nil},
		{"refused is not settled", []machine.MigrateEvent{
			approve("a", "d1"), ev(machine.EventMigrateAct, "a", "d1", ""), ev(machine.EventMigrateOutcome, "a", "d1", machine.OutcomeRefused),
		}, []string{"a d1"}, nil},
		{"an act after a settled outcome reopens it", []machine.MigrateEvent{
			approve("a", "d1"), ev(machine.EventMigrateAct, "a", "d1", ""), ev(machine.EventMigrateOutcome, "a", "d1", machine.OutcomeLanded),
			ev(machine.EventMigrateAct, "a", "d1", ""),
		}, []string{"a d1"}, nil},
		{"a new audit is its own key", []machine.MigrateEvent{
			approve("a", "d1"), ev(machine.EventMigrateAct, "a", "d1", ""), ev(machine.EventMigrateOutcome, "a", "d1", machine.OutcomeAdopted),
			approve("a", "d2"), approve("b", "d9"),
		}, []string{"a d1", "a d2", "b d9"}, []string{"a d1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			l := machine.FoldMigrateLedger(c.events)
			keys := func(m map[string]machine.MigrateEvent) []string { return slices.Sorted(maps.Keys(m)) }
			if d := cmp.Diff(c.decided, keys(l.Decided)); d != "" {
				t.Errorf("decided (-want +got):\n%s", d)
			}
			if d := cmp.Diff(c.settled, keys(l.Settled)); d != "" {
				t.Errorf("settled (-want +got):\n%s", d)
			}
		})
	}
}

// TestMigrateSettledAgreesWithStatus: what apply takes as settled, status
// reports as settled (removed or retained), and the other way round.
func TestMigrateSettledAgreesWithStatus(t *testing.T) {
	t.Parallel()
	for _, o := range []machine.Outcome{
		machine.OutcomeRemoved, machine.OutcomeLanded, machine.OutcomeRejected, machine.OutcomeAdopted,
		machine.OutcomeRelocated, machine.OutcomeAbandoned, machine.OutcomeAlreadyDone,
		machine.OutcomeRefused, machine.OutcomeStale, machine.OutcomeKept, machine.Outcome("unheard-of"),
	} {
		st := machine.FoldMigration([]machine.MigrateEvent{
			{Event: machine.EventMigrateAct, Candidate: "a", Digest: "d"},
			{Event: machine.EventMigrateOutcome, Candidate: "a", Digest: "d", Outcome: o},
		})
		settledInStatus := st[0].State == machine.MigrateRemoved || st[0].State == machine.MigrateRetained
		if settledInStatus != machine.MigrateSettled(o) {
			t.Errorf("outcome %s: status says %s, MigrateSettled says %v", o, st[0].State, machine.MigrateSettled(o))
		}
	}
}
