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
		{name: "observation-timed-out", mutate: func(_ *machine.Record, o, _ *machine.WorktreeObservation) {
			// Even where status read nothing amiss: what timed out is unknown.
			o.TimedOut = []machine.TimedOut{{Command: "git ls-files -v -s -z", Dir: testPath, Deadline: "1m"}}
		}, want: &want{machine.CodeObservationTimedOut, testPath, "custody --observe-timeout 4m " + strings.TrimPrefix(retry, "custody ")}, msg: "git ls-files -v -s -z did not finish within 1m", guard: true},
		{name: "status-failed", mutate: func(_ *machine.Record, o, _ *machine.WorktreeObservation) { o.StatusErr = "index broken" },
			want: &want{machine.CodeStatusFailed, testPath, "git -C " + testPath + " status"}, msg: "index broken", guard: true},
		{name: "conflicts", mutate: func(_ *machine.Record, o, _ *machine.WorktreeObservation) { o.Status.Unmerged = []string{"a.go"} },
			want: &want{machine.CodeUnmerged, testPath, "git -C " + testPath + " status"}, msg: "1 unresolved conflicts: a.go", guard: true},
		{name: "changed", mutate: func(_ *machine.Record, o, _ *machine.WorktreeObservation) { o.Status.Changed = []string{"a.go"} },
			want: &want{machine.CodeTrackedChanges, testPath, "git -C " + testPath + " status"}, msg: "1 changed tracked files: a.go", guard: true},
		{name: "untracked", mutate: func(_ *machine.Record, o, _ *machine.WorktreeObservation) { o.Status.Untracked = []string{"n.txt"} },
			want: &want{machine.CodeUntrackedFiles, testPath, "git -C " + testPath + " status"}, msg: "1 untracked files: n.txt", guard: true},
		{name: "ignored", mutate: func(_ *machine.Record, o, _ *machine.WorktreeObservation) { o.Status.Ignored = []string{"bin/"} },
			want: &want{machine.CodeIgnoredFiles, testPath, "git -C " + testPath + " status --ignored"}, msg: "1 ignored files: bin/", guard: true},
		{name: "hidden", mutate: func(_ *machine.Record, o, _ *machine.WorktreeObservation) {
			o.Hidden = []machine.Hidden{{Code: machine.CodeNestedGit, Path: testPath + "/vendor", Detail: "a nested repository"}}
		}, want: &want{machine.CodeNestedGit, testPath + "/vendor", "git -C " + testPath + " status"}, msg: "a nested repository", guard: true},
		{name: "submodules", mutate: func(_ *machine.Record, o, _ *machine.WorktreeObservation) {
			o.Hidden = []machine.Hidden{{Code: machine.CodeSubmodules, Path: "/repo/.git/worktrees/" + testID + "/modules", Detail: "git removes it only by force"}}
		}, want: &want{machine.CodeSubmodules, "/repo/.git/worktrees/" + testID + "/modules", "git -C " + testPath + " submodule status"}, msg: "git worktree move does not move a tree holding submodules", guard: true},
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

// TestRelocatedTree: the tree a relocation intent was made for is the one
// at HEAD still the intent's commit, or the very directory (device and
// inode) the intent observed, whatever was committed in it since; a
// directory with another identity and another HEAD is not, nor is one
// observed through a symlink, nor is anything for an intent that recorded
// no identity unless HEAD is unchanged.
func TestRelocatedTree(t *testing.T) {
	t.Parallel()
	withID := func() *machine.Intent {
		in := relocationIntent()
		in.Dev, in.Ino = testDev, testIno
		return in
	}
	tests := []struct {
		name string
		in   *machine.Intent
		obs  func(o *machine.WorktreeObservation)
		want bool
	}{
		{"head-unchanged", withID(), func(*machine.WorktreeObservation) {}, true},
		{"head-unchanged-other-dir", withID(), func(o *machine.WorktreeObservation) { o.Ino++ }, true},
		{"committed-same-dir", withID(), func(o *machine.WorktreeObservation) { o.Head = baseCommit }, true},
		{"committed-other-dir", withID(), func(o *machine.WorktreeObservation) { o.Head, o.Ino = baseCommit, testIno+1 }, false},
		{"committed-other-device", withID(), func(o *machine.WorktreeObservation) { o.Head, o.Dev = baseCommit, testDev+1 }, false},
		{"committed-through-symlink", withID(), func(o *machine.WorktreeObservation) { o.Head, o.IsSymlink = baseCommit, true }, false},
		{"committed-no-identity", relocationIntent(), func(o *machine.WorktreeObservation) { o.Head = baseCommit }, false},
		{"no-intent", nil, func(*machine.WorktreeObservation) {}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := removableObs()
			tt.obs(&o)
			if got := machine.RelocatedTree(tt.in, o); got != tt.want {
				t.Errorf("RelocatedTree = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestResumeRelocationCommittedMeanwhile: a commit made in the very
// directory the intent observed, at the destination after the move or at
// the source before it, still lets resume settle the relocation, and the
// relocated/step-back guard agrees; in a directory of another identity it
// fits no rule.
func TestResumeRelocationCommittedMeanwhile(t *testing.T) {
	t.Parallel()
	rec := relocatingRecord()
	rec.Intent.Dev, rec.Intent.Ino = testDev, testIno
	moved := removableObs()
	moved.Path, moved.Head = destPath, baseCommit
	gone := absentObs()
	free := absentObs()
	free.Path = destPath
	stayed := removableObs()
	stayed.Head = baseCommit
	other := moved
	other.Ino = testIno + 1
	tests := []struct {
		name     string
		src, dst machine.WorktreeObservation
		want     machine.ResumeAction
		trigger  machine.Trigger
	}{
		{"moved-then-committed", gone, moved, machine.ResumeCompleteRelocation, machine.TriggerRelocated},
		{"committed-before-the-move", stayed, free, machine.ResumeStepBack, machine.TriggerStepBack},
		{"another-directory", gone, other, "", ""},
		{"destination-appeared", removableObs(), withObs(removableObs(), func(o *machine.WorktreeObservation) { o.Path, o.Registered, o.Ino = destPath, false, testIno+7 }),
			machine.ResumeStepBack, machine.TriggerStepBack},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dst := tt.dst
			got, ref := machine.DecideResume(rec, tt.src, &dst)
			if tt.want == "" {
				if ref == nil || ref.Code != machine.CodeResumeUnmatched {
					t.Fatalf("DecideResume = %q, %v; want resume-unmatched", got, ref)
				}
				return
			}
			if ref != nil || got != tt.want {
				t.Fatalf("DecideResume = %q, %v; want %q", got, ref, tt.want)
			}
			f := machine.Firing{Record: rec, Obs: tt.src, Dest: &dst, Now: testNow}
			w := machine.NewWorktree(rec, func(context.Context, machine.State, machine.State, machine.Trigger, machine.Firing) error { return nil })
			if !slices.Contains(w.Permitted(context.Background(), f), tt.trigger) {
				t.Errorf("%s is not permitted over the firing resume decided %s on", tt.trigger, got)
			}
		})
	}
}

// TestResourcesBlockRelocation: no resources, no block; any entry not
// tombstoned (live, or finished with its destroy still owed) keeps the
// tree where it is, naming each with its state and the ledger as retry.
func TestResourcesBlockRelocation(t *testing.T) {
	t.Parallel()
	rec := activeRecord()
	if r := machine.ResourcesBlockRelocation(rec, nil); r != nil {
		t.Fatalf("no resources: want no block, got %+v", r)
	}
	rs := []machine.Resource{{Name: "db", State: machine.StateActive}, {Name: "cache", State: machine.StateFinished}}
	r := machine.ResourcesBlockRelocation(rec, rs)
	if r == nil {
		t.Fatal("resources: want a block, got none")
	}
	if d := cmp.Diff(machine.Refusal{Code: machine.CodeResourcesFrozen, Path: testPath, Retry: "custody resource list"},
		machine.Refusal{Code: r.Code, Path: r.Path, Retry: r.Retry}); d != "" {
		t.Errorf("refusal (-want +got):\n%s", d)
	}
	for _, w := range []string{"db (active)", "cache (finished)", testPath, "nothing was moved"} {
		if !strings.Contains(r.Message, w) {
			t.Errorf("message %q does not say %q", r.Message, w)
		}
	}
}

// TestRelocationRepair: where resume finds no rule for a relocation but
// the observations show where the tree is, its refusal's retry is the git
// command that puts it where a rule fits, and the step-back rule never
// fires while something is at the destination.
func TestRelocationRepair(t *testing.T) {
	t.Parallel()
	rec := relocatingRecord()
	rec.Intent.Dev, rec.Intent.Ino = testDev, testIno
	here := removableObs() // the very directory the intent observed
	byHand := here
	byHand.Registered, byHand.Head, byHand.AdminKey = false, "", ""
	gone := absentObs()
	registeredGone := absentObs()
	registeredGone.Registered, registeredGone.Head = true, headCommit
	movedOn := absentObs()
	movedOn.MovedTo = "/elsewhere/tree"
	copied := byHand
	copied.Ino = testIno + 1
	tests := []struct {
		name     string
		src, dst machine.WorktreeObservation
		retry    string
		path     string
		msg      string
	}{
		{"back-at-source-by-hand", byHand, registeredGone, "git worktree repair " + testPath, testPath, "steps the relocation back"},
		{"moved-on-with-git", movedOn, withObs(movedOn, func(o *machine.WorktreeObservation) { o.Path = destPath }),
			"git worktree move /elsewhere/tree " + destPath, "/elsewhere/tree", "puts it at the destination"},
		{"a-copy-is-not-the-tree", copied, registeredGone, "custody show " + testID, testPath, "custody will not guess"},
		{"gone-from-both", gone, gone, "custody show " + testID, testPath, "custody will not guess"},
		{"copy-at-destination", registeredGone, withObs(copied, func(o *machine.WorktreeObservation) { o.Path = destPath }),
			"custody show " + testID, testPath, "custody will not guess"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dst := tt.dst
			if machine.RelocationNotMoved(rec.Intent, tt.src, dst) {
				t.Errorf("RelocationNotMoved holds with the destination %s", dst.PathState)
			}
			got, ref := machine.DecideResume(rec, tt.src, &dst)
			if got != "" || ref == nil || ref.Code != machine.CodeResumeUnmatched {
				t.Fatalf("DecideResume = %q, %+v; want resume-unmatched", got, ref)
			}
			if ref.Retry != tt.retry || ref.Path != tt.path || !strings.Contains(ref.Message, tt.msg) {
				t.Errorf("refusal %+v: want retry %q at %s saying %q", ref, tt.retry, tt.path, tt.msg)
			}
		})
	}
}

// TestRelocationHalfMoved: the very directory the intent observed at the
// destination, unregistered, with nothing at the source (a move killed
// between git's rename and its rewrite of the admin entry) is repaired and
// completed by resume; another directory there, a registered one, or the
// tree still at the source, is not.
func TestRelocationHalfMoved(t *testing.T) {
	t.Parallel()
	rec := relocatingRecord()
	rec.Intent.Dev, rec.Intent.Ino = testDev, testIno
	src := absentObs()
	src.Registered, src.Head = true, headCommit // git's entry still names the source
	dst := removableObs()
	dst.Path, dst.Registered, dst.Head, dst.AdminKey = destPath, false, "", ""
	if got, ref := machine.DecideResume(rec, src, &dst); got != machine.ResumeRepairRelocation || ref != nil {
		t.Fatalf("DecideResume = %q, %+v; want %q", got, ref, machine.ResumeRepairRelocation)
	}
	if machine.RelocationNotMoved(rec.Intent, src, dst) {
		t.Error("RelocationNotMoved holds with the tree at the destination")
	}
	for name, o := range map[string]machine.WorktreeObservation{
		"another-directory": withObs(dst, func(o *machine.WorktreeObservation) { o.Ino++ }),
		"registered":        withObs(dst, func(o *machine.WorktreeObservation) { o.Registered = true }),
	} {
		if machine.RelocationHalfMoved(rec.Intent, src, o) {
			t.Errorf("%s: RelocationHalfMoved holds", name)
		}
	}
	if machine.RelocationHalfMoved(rec.Intent, removableObs(), dst) {
		t.Error("RelocationHalfMoved holds with the tree still at the source")
	}
}
