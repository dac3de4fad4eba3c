package machine_test

import (
	"context"
	"errors"
	"testing"

	"github.com/custody-sh/custody/machine"
)

// The retreat guard (treeIntact) lets a removing record step back to
// finished only over the tree its intent recorded: a tree from which
// something has been removed is no longer that tree, while a change that
// removes nothing (an edit, a new file) is.

// TestRetreatOverPartlyRemovedTree: a tracked file of the tree is deleted
// since the intent (status shows " D", as an interrupted `git worktree
// remove` leaves it), so the observation no longer has the intent's
// fingerprint. Retreat is refused with a guard-failed refusal and commits
// nothing.
func TestRetreatOverPartlyRemovedTree(t *testing.T) {
	t.Parallel()
	f := retreatFiring()
	// " D" in status: deleted from the working copy.
	f.Obs.Status.Changed = []string{"f1.txt"}
	f.Obs.Status.Deleted = []string{"f1.txt"}
	if machine.Fingerprint(f.Obs) == f.Record.Intent.Fingerprint {
		t.Fatal("fixture: the changed observation still has the intent's fingerprint")
	}
	calls := 0
	w := machine.NewWorktree(f.Record, func(context.Context, machine.State, machine.State, machine.Trigger, machine.Firing) error {
		calls++
		return nil
	})
	err := w.Fire(context.Background(), machine.TriggerRetreat, f)
	var r *machine.Refusal
	if !errors.As(err, &r) || calls != 0 {
		t.Errorf("retreat over a tree whose tracked file is gone since the intent: err %v, %d commits; want a guard-failed refusal and no commit", err, calls)
	}
}

// TestRetreatOverChangedTree: a person's change since the intent (a
// modified file, an untracked one) removes nothing, so custody may step
// back over it.
func TestRetreatOverChangedTree(t *testing.T) {
	t.Parallel()
	f := retreatFiring()
	f.Obs.Status.Changed = []string{"f1.txt"}
	f.Obs.Status.Untracked = []string{"notes.txt"}
	w := machine.NewWorktree(f.Record, func(context.Context, machine.State, machine.State, machine.Trigger, machine.Firing) error { return nil })
	if err := w.Fire(context.Background(), machine.TriggerRetreat, f); err != nil {
		t.Fatalf("retreat over a tree a person changed: %v", err)
	}
}

// TestRetreatOverIntactTree: the unchanged tree the intent recorded may
// retreat, and the record is finished again.
func TestRetreatOverIntactTree(t *testing.T) {
	t.Parallel()
	f := retreatFiring()
	w := machine.NewWorktree(f.Record, func(context.Context, machine.State, machine.State, machine.Trigger, machine.Firing) error { return nil })
	if err := w.Fire(context.Background(), machine.TriggerRetreat, f); err != nil {
		t.Fatalf("retreat over the intact tree: %v", err)
	}
	if w.State() != machine.StateFinished {
		t.Errorf("state %s, want finished", w.State())
	}
}
