package machine_test

import (
	"testing"

	"github.com/custody-sh/custody/machine"
)

// TestDecideResourceResume covers every resource resume rule and the
// refusal of an entry that carries no intent.
func TestDecideResourceResume(t *testing.T) {
	t.Parallel()
	in := &machine.ResourceIntent{Kind: machine.IntentResourceCreate, Command: "make db", Holder: machine.Holder{PID: 7, Host: "h"}}
	entry := func(s machine.State) machine.Resource {
		return machine.Resource{ID: testID + "/db", Worktree: testID, Path: testPath, State: s, Intent: in}
	}
	wt := func(s machine.State) *machine.Record { r := activeRecord(); r.State = s; return &r }
	tests := []struct {
		name string
		r    machine.Resource
		f    machine.ResourceResumeFacts
		want machine.ResourceResumeAction
	}{
		{"holder-alive", entry(machine.StateRemoving), machine.ResourceResumeFacts{HolderAlive: true, Worktree: wt(machine.StateFinished)}, machine.ResourceResumeWait},
		{"create/worktree-provisioning", entry(machine.StateProvisioning), machine.ResourceResumeFacts{Worktree: wt(machine.StateProvisioning)}, machine.ResourceResumeDeferred},
		{"create/worktree-active", entry(machine.StateProvisioning), machine.ResourceResumeFacts{Worktree: wt(machine.StateActive)}, machine.ResourceResumeRecreate},
		{"create/worktree-finished", entry(machine.StateProvisioning), machine.ResourceResumeFacts{Worktree: wt(machine.StateFinished)}, machine.ResourceResumeRecreate},
		// The tree vanished since: the create is undone, never made again.
		{"create/worktree-active-vanished", entry(machine.StateProvisioning), machine.ResourceResumeFacts{Worktree: wt(machine.StateActive), WorktreeVanished: true}, machine.ResourceResumeDestroy},
		{"create/worktree-finished-vanished", entry(machine.StateProvisioning), machine.ResourceResumeFacts{Worktree: wt(machine.StateFinished), WorktreeVanished: true}, machine.ResourceResumeDestroy},
		{"create/worktree-tombstoned", entry(machine.StateProvisioning), machine.ResourceResumeFacts{Worktree: wt(machine.StateTombstoned)}, machine.ResourceResumeDestroy},
		{"create/worktree-unknown", entry(machine.StateProvisioning), machine.ResourceResumeFacts{}, machine.ResourceResumeDestroy},
		{"destroy/worktree-active", entry(machine.StateRemoving), machine.ResourceResumeFacts{Worktree: wt(machine.StateActive)}, machine.ResourceResumeDestroy},
		{"destroy/worktree-gone", entry(machine.StateRemoving), machine.ResourceResumeFacts{}, machine.ResourceResumeDestroy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ref := machine.DecideResourceResume(tt.r, tt.f)
			if ref != nil || got != tt.want {
				t.Errorf("DecideResourceResume = %q, %v; want %q", got, ref, tt.want)
			}
		})
	}
	for _, r := range []machine.Resource{{ID: "x/db", State: machine.StateActive}, {ID: "x/db", State: machine.StateTombstoned, Intent: in}} {
		if got, ref := machine.DecideResourceResume(r, machine.ResourceResumeFacts{}); ref == nil || ref.Code != machine.CodeResumeUnmatched || got != "" {
			t.Errorf("DecideResourceResume(%s, intent %v) = %q, %v; want resume-unmatched", r.State, r.Intent != nil, got, ref)
		}
	}
}
