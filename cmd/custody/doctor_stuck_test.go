package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/store"
)

// TestWithStuck: a stuck record's problem replaces the state check's
// unfinished-intent problem of that record (matched on its Intent, of the
// same kind and id, whatever its text), and every other problem stays: the
// unfinished intent of a record that is not stuck, of another kind with the
// same id, and a problem about the stuck record that is no unfinished
// intent, even one whose text reads like one.
func TestWithStuck(t *testing.T) {
	t.Parallel()
	intent := func(kind machine.Kind, id, what string) store.Problem {
		return store.Problem{Where: "somewhere " + id, What: what, Fix: "custody resume",
			Intent: &store.ProblemIntent{Kind: kind, Record: id, Intent: machine.IntentRelocation}}
	}
	stuckTree := steps.StuckRecord{ID: "a-000001", Kind: machine.KindWorktree, Why: "resume refuses it", Settle: "custody relocate a-000001"}
	stuckRes := steps.StuckRecord{ID: "a-000001/db", Kind: machine.KindResource, Why: "resume refuses it", Settle: "custody resource gc"}
	tests := []struct {
		name     string
		problems []store.Problem
		stuck    []steps.StuckRecord
		want     []store.Problem
	}{
		{name: "nothing", want: nil},
		{
			name:     "the stuck record's unfinished intent is replaced",
			problems: []store.Problem{intent(machine.KindWorktree, "a-000001", "reworded entirely")},
			stuck:    []steps.StuckRecord{stuckTree},
			want: []store.Problem{{Where: "worktree a-000001", What: "can never progress on its own: resume refuses it",
				Fix: "custody relocate a-000001"}},
		},
		{
			name: "others stay",
			problems: []store.Problem{
				intent(machine.KindWorktree, "b-000002", "carries an unfinished removal intent"),
				intent(machine.KindResource, "a-000001", "carries an unfinished destroy intent"),
				{Where: "record a-000001", What: "carries an unfinished relocation intent", Fix: "custody resume"},
				{Where: "record a-000001", What: "intent index disagrees with the record", Fix: "custody resume"},
				intent(machine.KindResource, "a-000001/db", "carries an unfinished destroy intent"),
			},
			stuck: []steps.StuckRecord{stuckTree, stuckRes},
			want: []store.Problem{
				intent(machine.KindWorktree, "b-000002", "carries an unfinished removal intent"),
				intent(machine.KindResource, "a-000001", "carries an unfinished destroy intent"),
				{Where: "record a-000001", What: "carries an unfinished relocation intent", Fix: "custody resume"},
				{Where: "record a-000001", What: "intent index disagrees with the record", Fix: "custody resume"},
				{Where: "worktree a-000001", What: "can never progress on its own: resume refuses it", Fix: "custody relocate a-000001"},
				{Where: "resource a-000001/db", What: "can never progress on its own: resume refuses it", Fix: "custody resource gc"},
			},
		},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, withStuck(tt.problems, tt.stuck)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}
