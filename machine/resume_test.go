package machine_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/machine"
)

func TestDecideResume(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		rec  machine.Record
		obs  machine.WorktreeObservation
		want machine.ResumeAction
	}{
		{"provisioning/exact-tree", provisioningRecord(), madeObs(), machine.ResumeActivate},
		{"provisioning/exact-tree-marker-missing", provisioningRecord(),
			withObs(madeObs(), func(o *machine.WorktreeObservation) { o.Marker = "" }), machine.ResumeActivate},
		{"provisioning/nothing", provisioningRecord(), absentObs(), machine.ResumeDiscard},
		{"provisioning/only-branch-untouched", provisioningRecord(),
			withObs(absentObs(), func(o *machine.WorktreeObservation) { o.BranchTip = baseCommit }), machine.ResumeDiscard},
		// new --checkout: the branch existed before and is left as it
		// is, wherever it points; only what custody made counts.
		{"provisioning/existing-branch-moved", withRec(provisioningRecord(), func(r *machine.Record) {
			r.Branch, r.BranchOrigin = "topic", machine.BranchOriginExisting
		}), withObs(absentObs(), func(o *machine.WorktreeObservation) { o.BranchTip = otherHead }), machine.ResumeDiscard},
		{"provisioning/existing-branch-exact-tree", withRec(provisioningRecord(), func(r *machine.Record) {
			r.Branch, r.BranchOrigin = "topic", machine.BranchOriginExisting
		}), withObs(madeObs(), func(o *machine.WorktreeObservation) { o.Branch = "topic" }), machine.ResumeActivate},
		{"removing/present-unchanged", removingRecord(), removableObs(), machine.ResumeRetryRemoval},
		// Retrying re-assesses, so a tree that became dirty still
		// retries here and is refused by the final observation.
		{"removing/present-unchanged-but-dirty", removingRecord(),
			withObs(removableObs(), func(o *machine.WorktreeObservation) { o.Status.Untracked = []string{"x"} }), machine.ResumeRetryRemoval},
		{"removing/absent-still-registered", removingRecord(),
			withObs(absentObs(), func(o *machine.WorktreeObservation) {
				o.Registered, o.AdminKey, o.AdminPresent, o.Prunable = true, testID, true, true
			}), machine.ResumeDropAdmin},
		{"removing/absent-admin-entry-left", removingRecord(),
			withObs(absentObs(), func(o *machine.WorktreeObservation) { o.AdminPresent = true }), machine.ResumeDropAdmin},
		{"removing/absent-unregistered", removingRecord(), absentObs(), machine.ResumeCompleteRemoval},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ref := machine.DecideResume(tt.rec, tt.obs, nil)
			if ref != nil {
				t.Fatalf("DecideResume refused: %v", ref)
			}
			if got != tt.want {
				t.Errorf("DecideResume = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDecideResumeUnmatched(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		rec  machine.Record
		obs  machine.WorktreeObservation
		// msg must appear in the refusal's message: what resume saw.
		msg string
	}{
		{"no-intent", removableRecord(), removableObs(), "carries no intent"},
		{"removing/path-unknown", removingRecord(),
			withObs(removableObs(), func(o *machine.WorktreeObservation) {
				o.PathState, o.PathError = machine.PathUnknown, "input/output error"
			}), "could not be observed: input/output error"},
		{"provisioning/path-unknown", provisioningRecord(),
			withObs(absentObs(), func(o *machine.WorktreeObservation) { o.PathState = machine.PathUnknown }), "could not be observed"},
		{"provisioning/wrong-head", provisioningRecord(),
			withObs(madeObs(), func(o *machine.WorktreeObservation) { o.Head = headCommit }),
			"path present, registered as " + testID + ", admin entry present, HEAD " + headCommit[:12]},
		{"provisioning/wrong-branch", provisioningRecord(),
			withObs(madeObs(), func(o *machine.WorktreeObservation) { o.Branch = "main" }), "path present"},
		{"provisioning/other-admin-key", provisioningRecord(),
			withObs(madeObs(), func(o *machine.WorktreeObservation) { o.AdminKey = "other-ffffff" }), "registered as other-ffffff"},
		{"provisioning/locked", provisioningRecord(),
			withObs(madeObs(), func(o *machine.WorktreeObservation) { o.Locked = true }), "path present"},
		{"provisioning/symlink", provisioningRecord(),
			withObs(madeObs(), func(o *machine.WorktreeObservation) { o.IsSymlink = true }), "path present"},
		{"provisioning/present-unregistered", provisioningRecord(),
			withObs(madeObs(), func(o *machine.WorktreeObservation) { o.Registered = false }), "path present, unregistered"},
		{"provisioning/branch-moved", provisioningRecord(),
			withObs(absentObs(), func(o *machine.WorktreeObservation) { o.BranchTip = otherHead }),
			"path absent, unregistered, branch at " + otherHead[:12]},
		{"provisioning/named-branch-moved", withRec(provisioningRecord(), func(r *machine.Record) {
			r.Branch, r.BranchOrigin = "feature/login", machine.BranchOriginCreated
		}), withObs(absentObs(), func(o *machine.WorktreeObservation) { o.BranchTip = otherHead }),
			"path absent, unregistered, branch at " + otherHead[:12]},
		{"provisioning/admin-entry-without-path", provisioningRecord(),
			withObs(absentObs(), func(o *machine.WorktreeObservation) { o.AdminPresent = true }), "admin entry present"},
		{"removing/changed-inode", removingRecord(),
			withObs(removableObs(), func(o *machine.WorktreeObservation) { o.Ino = 1 }), "path present, registered as " + testID},
		{"removing/changed-device", removingRecord(),
			withObs(removableObs(), func(o *machine.WorktreeObservation) { o.Dev = 1 }), "path present"},
		{"removing/changed-head", removingRecord(),
			withObs(removableObs(), func(o *machine.WorktreeObservation) { o.Head = otherHead }), "HEAD " + otherHead[:12]},
		{"removing/unregistered", removingRecord(),
			withObs(removableObs(), func(o *machine.WorktreeObservation) { o.Registered = false }), "unregistered"},
		{"removing/symlink", removingRecord(),
			withObs(removableObs(), func(o *machine.WorktreeObservation) { o.IsSymlink = true }), "path present"},
		{"removing/with-create-intent", withRec(removingRecord(), func(r *machine.Record) { r.Intent = createIntent() }),
			removableObs(), "no resume rule covers that pair"},
		{"finished/with-removal-intent", withRec(removingRecord(), func(r *machine.Record) { r.State = machine.StateFinished }),
			removableObs(), "no resume rule covers that pair"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ref := machine.DecideResume(tt.rec, tt.obs, nil)
			if got != "" {
				t.Errorf("DecideResume = %q with a refusal, want no action", got)
			}
			if ref == nil {
				t.Fatal("DecideResume did not refuse")
			}
			want := refusalKey{Code: machine.CodeResumeUnmatched, Path: tt.rec.Path, Retry: "custody show " + tt.rec.ID}
			if diff := cmp.Diff(want, refusalKey{ref.Code, ref.Path, ref.Retry}); diff != "" {
				t.Errorf("refusal (-want +got):\n%s", diff)
			}
			for _, s := range []string{tt.rec.ID, string(tt.rec.State), tt.msg} {
				if !strings.Contains(ref.Message, s) {
					t.Errorf("message %q does not contain %q", ref.Message, s)
				}
			}
		})
	}
}

func withObs(o machine.WorktreeObservation, mutate func(*machine.WorktreeObservation)) machine.WorktreeObservation {
	mutate(&o)
	return o
}

func withRec(r machine.Record, mutate func(*machine.Record)) machine.Record {
	mutate(&r)
	return r
}
