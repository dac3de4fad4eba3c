package machine_test

import (
	"strings"
	"testing"

	"github.com/custody-sh/custody/machine"
	"github.com/google/go-cmp/cmp"
)

// TestEveryCodeRenders is a table over every refusal code: each has a
// meaning in Codes(), and a refusal carrying it renders the fact with the
// code, then the retry command on an indented line.
func TestEveryCodeRenders(t *testing.T) {
	t.Parallel()
	for code, meaning := range machine.Codes() {
		if strings.TrimSpace(meaning) == "" {
			t.Errorf("%s has no meaning in Codes()", code)
		}
		r := &machine.Refusal{Code: code, Message: "m", Path: "/p", Retry: "custody plan"}
		if got, want := r.Error(), "m ["+string(code)+"]\n\tto retry: custody plan"; got != want {
			t.Errorf("%s renders %q, want %q", code, got, want)
		}
	}
}

// TestHiddenCodesPassThroughAssess: every code an observer reports as hidden
// state reaches the verdict as that code, with its exact path, and keeps an
// otherwise removable tree.
func TestHiddenCodesPassThroughAssess(t *testing.T) {
	t.Parallel()
	hidden := []machine.Code{
		machine.CodeAssumeUnchanged, machine.CodeSkipWorktree, machine.CodeStagedDiffers, machine.CodeNestedGit,
		machine.CodePerWorktreeRef, machine.CodeOperationInProgress, machine.CodeSubmoduleChanges,
		machine.CodeSubmoduleUnpushed, machine.CodeSubmodules, machine.CodeObservationFailed, machine.CodeInUse,
		machine.CodeUnknownAdminFile, machine.CodeAdminLockFile,
	}
	for _, code := range hidden {
		rec, obs := removableRecord(), removableObs()
		obs.Hidden = []machine.Hidden{{Code: code, Path: "/tree/x", Detail: "why"}}
		v := machine.Assess(rec, obs, machine.DefaultPolicy(), testNow)
		var got []string
		for _, r := range v.Refusals {
			got = append(got, string(r.Code)+" "+r.Path)
		}
		if d := cmp.Diff([]string{string(code) + " /tree/x"}, got); v.Action != machine.ActionKeep || d != "" {
			t.Errorf("hidden %s: action %s, refusals (-want +got):\n%s", code, v.Action, d)
		}
	}
}

// TestPlanPending: a plan is pending (exit 3) when it keeps something a
// person should act on, not for active work or foreign trees.
func TestPlanPending(t *testing.T) {
	t.Parallel()
	keep := func(code machine.Code) machine.PlanItem {
		return machine.PlanItem{ID: string(code), Action: machine.ActionKeep, Refusal: &machine.Refusal{Code: code}}
	}
	tests := []struct {
		items []machine.PlanItem
		want  bool
	}{
		{nil, false},
		{[]machine.PlanItem{{ID: "a", Action: machine.ActionRemove}}, false},
		{[]machine.PlanItem{keep(machine.CodeNotFinished), keep(machine.CodeLeaseLive), keep(machine.CodeForeign)}, false},
		{[]machine.PlanItem{keep(machine.CodeUntrackedFiles)}, true},
		{[]machine.PlanItem{keep(machine.CodeIntentPending)}, true},
		{[]machine.PlanItem{keep(machine.CodeGCDisabled)}, true},
	}
	for i, tt := range tests {
		if got := (machine.Plan{Items: tt.items}).Pending(); got != tt.want {
			t.Errorf("case %d: Pending() = %v, want %v", i, got, tt.want)
		}
	}
}
