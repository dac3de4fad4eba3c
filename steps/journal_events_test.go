package steps

import (
	"encoding/json"
	"testing"

	"github.com/custody-sh/custody/machine"
)

// The branch-deleting event steps writes is the one the report reads:
// remove.go still spells its own name and detail type, which must stay
// machine's (EventBranchDeleting, BranchDeletingDetail) until it uses them.
var _ = machine.BranchDeletingDetail(branchDeleting{})

// TestBranchDeletingIsMachines: steps' branch-deleting event has machine's
// name, and its detail marshals to the bytes machine's detail does, so the
// report (machine.Audit) reads every member steps writes.
func TestBranchDeletingIsMachines(t *testing.T) {
	t.Parallel()
	if EventBranchDeleting != machine.EventBranchDeleting {
		t.Errorf("steps writes event %q, the report reads %q", EventBranchDeleting, machine.EventBranchDeleting)
	}
	for _, d := range []branchDeleting{{Record: "r-1", Branch: "b", Commit: "c", Plan: "sha256:p"}, {Record: "r-1", Branch: "b", Commit: "c"}} {
		ours, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		theirs, err := json.Marshal(machine.BranchDeletingDetail(d))
		if err != nil {
			t.Fatal(err)
		}
		if string(ours) != string(theirs) {
			t.Errorf("steps writes %s, machine's detail is %s", ours, theirs)
		}
	}
}
