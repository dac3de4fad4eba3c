package machine_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/custody-sh/custody/machine"
	"github.com/google/go-cmp/cmp"
)

// relocatable is an active record, a clean registered tree and a free
// destination: what a relocation may start from.
func relocatable() (machine.Record, machine.WorktreeObservation, machine.WorktreeObservation) {
	obs := removableObs()
	obs.Proof = nil
	dest := absentObs()
	dest.Path = destPath
	return activeRecord(), obs, dest
}

// TestRelocationBlock: each thing that must keep a tree where it is gives
// its own code, path and retry, and says nothing was moved; a relocatable
// tree gives none. Where the block is about the tree or the destination
// (not the record's state), relocationSafe must refuse the same firing, so
// the refusal and the guard never disagree.
func TestRelocationBlock(t *testing.T) {
	t.Parallel()
	const retry = "custody relocate " + testID
	type want struct {
		Code  machine.Code
		Path  string
		Retry string
	}
	tests := []struct {
		name   string
		mutate func(r *machine.Record, o, d *machine.WorktreeObservation)
		want   *want
		msg    string
		guard  bool // relocationSafe must refuse it too
	}{
		{name: "relocatable", mutate: func(*machine.Record, *machine.WorktreeObservation, *machine.WorktreeObservation) {}},
		{name: "intent", mutate: func(r *machine.Record, _, _ *machine.WorktreeObservation) { r.Intent = relocationIntent() },
			want: &want{machine.CodeIntentPending, testPath, "custody resume"}, msg: "unfinished relocation intent"},
		{name: "finished", mutate: func(r *machine.Record, _, _ *machine.WorktreeObservation) { r.State = machine.StateFinished },
			want: &want{machine.CodeWrongState, testPath, "custody reopen " + testID}, msg: "is finished"},
		{name: "provisioning", mutate: func(r *machine.Record, _, _ *machine.WorktreeObservation) { r.State = machine.StateProvisioning },
			want: &want{machine.CodeWrongState, testPath, "custody show " + testID}, msg: "is provisioning"},
		{name: "gone", mutate: func(_ *machine.Record, o, _ *machine.WorktreeObservation) { *o = absentObs() },
			want: &want{machine.CodeWorktreeMissing, testPath, "custody plan"}, msg: "nothing to move", guard: true},
		{name: "unregistered", mutate: func(_ *machine.Record, o, _ *machine.WorktreeObservation) { o.Registered = false },
			want: &want{machine.CodeNotRegistered, testPath, "git worktree list"}, msg: "does not register", guard: true},
		{name: "locked", mutate: func(_ *machine.Record, o, _ *machine.WorktreeObservation) { o.Locked, o.LockReason = true, "usb" },
			want: &want{machine.CodeLocked, testPath, "git worktree unlock " + testPath}, msg: "is locked: usb", guard: true},
		{name: "leased", mutate: func(_ *machine.Record, o, _ *machine.WorktreeObservation) { o.Lease = lease(testNow.Add(time.Hour)) },
			want: &want{machine.CodeLeaseLive, testPath, retry}, msg: "leased by agent-7", guard: true},
		{name: "lease-expired", mutate: func(_ *machine.Record, o, _ *machine.WorktreeObservation) { o.Lease = lease(testNow.Add(-time.Hour)) }},
		{name: "status-failed", mutate: func(_ *machine.Record, o, _ *machine.WorktreeObservation) { o.StatusErr = "index broken" },
			want: &want{machine.CodeStatusFailed, testPath, "git -C " + testPath + " status"}, msg: "index broken", guard: true},
		{name: "conflicts", mutate: func(_ *machine.Record, o, _ *machine.WorktreeObservation) { o.Status.Unmerged = []string{"a.go"} },
			want: &want{machine.CodeUnmerged, testPath, "git -C " + testPath + " status"}, msg: "1 unresolved conflicts: a.go", guard: true},
		{name: "changed", mutate: func(_ *machine.Record, o, _ *machine.WorktreeObservation) { o.Status.Changed = []string{"a.go"} },
			want: &want{machine.CodeTrackedChanges, testPath, "git -C " + testPath + " status"}, msg: "1 changed tracked files: a.go", guard: true},
		{name: "untracked", mutate: func(_ *machine.Record, o, _ *machine.WorktreeObservation) { o.Status.Untracked = []string{"n.txt"} },
			want: &want{machine.CodeUntrackedFiles, testPath, "git -C " + testPath + " status"}, msg: "1 untracked files: n.txt", guard: true},
		{name: "ignored", mutate: func(_ *machine.Record, o, _ *machine.WorktreeObservation) { o.Status.Ignored = []string{"bin/"} },
			want: &want{machine.CodeIgnoredFiles, testPath, "git -C " + testPath + " status"}, msg: "1 ignored files: bin/", guard: true},
		{name: "hidden", mutate: func(_ *machine.Record, o, _ *machine.WorktreeObservation) {
			o.Hidden = []machine.Hidden{{Code: machine.CodeNestedGit, Path: testPath + "/vendor", Detail: "a nested repository"}}
		}, want: &want{machine.CodeNestedGit, testPath + "/vendor", "git -C " + testPath + " status"}, msg: "a nested repository", guard: true},
		{name: "in-use", mutate: func(_ *machine.Record, o, _ *machine.WorktreeObservation) {
			o.InUse = []machine.Process{{PID: 42, Command: "vim", Via: "cwd"}}
		}, want: &want{machine.CodeInUse, testPath, retry}, msg: "process 42 (vim)", guard: true},
		{name: "destination-exists", mutate: func(_ *machine.Record, _, d *machine.WorktreeObservation) { d.PathState = machine.PathPresent },
			want: &want{machine.CodeUnsafeTarget, destPath, "ls -la " + destPath}, msg: "already exists", guard: true},
		{name: "destination-registered", mutate: func(_ *machine.Record, _, d *machine.WorktreeObservation) { d.Registered = true },
			want: &want{machine.CodeUnsafeTarget, destPath, "git worktree list"}, msg: "already registers", guard: true},
		{name: "destination-unknown", mutate: func(_ *machine.Record, _, d *machine.WorktreeObservation) {
			d.PathState, d.PathError = machine.PathUnknown, "permission denied"
		}, want: &want{machine.CodePathUnknown, destPath, "custody show " + testID}, msg: "permission denied", guard: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec, obs, dest := relocatable()
			tt.mutate(&rec, &obs, &dest)
			got := machine.RelocationBlock(rec, obs, dest, testNow, retry)
			var gotWant *want
			if got != nil {
				gotWant = &want{got.Code, got.Path, got.Retry}
				if !strings.Contains(got.Message, tt.msg) || !strings.HasSuffix(got.Message, "; nothing was moved") {
					t.Errorf("message %q: want it to say %q and end with that nothing was moved", got.Message, tt.msg)
				}
			}
			if d := cmp.Diff(tt.want, gotWant); d != "" {
				t.Fatalf("RelocationBlock (-want +got):\n%s", d)
			}
			if tt.want != nil && !tt.guard {
				return
			}
			// The guard agrees: it permits exactly the trees with no block.
			in := relocationIntent()
			in.Commit = obs.Head
			f := machine.Firing{Record: rec, Obs: obs, Dest: &dest, Intent: in, Now: testNow}
			w := machine.NewWorktree(rec, func(context.Context, machine.State, machine.State, machine.Trigger, machine.Firing) error { return nil })
			permitted := slices.Contains(w.Permitted(context.Background(), f), machine.TriggerRelocate)
			if permitted != (tt.want == nil) {
				t.Errorf("relocationSafe permits = %v, but RelocationBlock = %+v", permitted, got)
			}
		})
	}
}
