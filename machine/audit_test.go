package machine_test

import (
	"context"
	"errors"
	"testing"

	"github.com/custody-sh/custody/machine"
)

// TestAuditBugRetreatOverPartlyRemovedTree: the retreat guard treeIntact is
// documented as "a removing record's tree is exactly as its intent
// recorded: nothing has been removed, so custody may step back", but it
// compares only path, registration, device+inode and HEAD. A tree that an
// interrupted `git worktree remove` had already partly deleted (status
// shows a tracked file deleted, so the observation no longer has the
// intent's fingerprint) still satisfies it, and steps/remove.go retreats
// the record to finished over the half-deleted tree (see
// cmd/custody TestAuditBugResumeAfterPartialGitRemove). Expected: retreat
// is refused when the observed tree differs from the one the intent
// recorded.
func TestAuditBugRetreatOverPartlyRemovedTree(t *testing.T) {
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

// TestAuditRetreatOverChangedTree: a person's change since the intent (a
// modified file, an untracked one) removes nothing, so custody may step
// back over it.
func TestAuditRetreatOverChangedTree(t *testing.T) {
	t.Parallel()
	f := retreatFiring()
	f.Obs.Status.Changed = []string{"f1.txt"}
	f.Obs.Status.Untracked = []string{"notes.txt"}
	w := machine.NewWorktree(f.Record, func(context.Context, machine.State, machine.State, machine.Trigger, machine.Firing) error { return nil })
	if err := w.Fire(context.Background(), machine.TriggerRetreat, f); err != nil {
		t.Fatalf("retreat over a tree a person changed: %v", err)
	}
}

// TestAuditRetreatOverIntactTree is the control: the unchanged tree the
// intent recorded may retreat.
func TestAuditRetreatOverIntactTree(t *testing.T) {
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
