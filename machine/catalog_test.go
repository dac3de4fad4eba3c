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

// TestAssessVanishedTree: a tree already gone (path absent, unregistered, no
// admin entry) is settled only when its last known commit is proven; else it
// is kept as worktree-missing. Registered, or with the admin entry left, it
// is kept too.
func TestAssessVanishedTree(t *testing.T) {
	t.Parallel()
	rec, base := removableRecord(), removableObs()
	gone := machine.WorktreeObservation{Path: base.Path, PathState: machine.PathAbsent, Proof: base.Proof}
	gone.Proof.Head = rec.EffectiveHead()
	tests := []struct {
		name   string
		mutate func(o *machine.WorktreeObservation)
		want   string
	}{
		{"proven", func(o *machine.WorktreeObservation) {}, "remove"},
		{"unproven", func(o *machine.WorktreeObservation) { o.Proof = nil }, "keep worktree-missing"},
		{"proof of another commit", func(o *machine.WorktreeObservation) { o.Proof.Head = strings.Repeat("e", 40) }, "keep worktree-missing"},
		{"still registered", func(o *machine.WorktreeObservation) { o.Registered = true }, "keep worktree-missing"},
		{"admin entry left", func(o *machine.WorktreeObservation) { o.AdminPresent = true }, "keep worktree-missing"},
	}
	for _, tt := range tests {
		o := gone
		p := *gone.Proof
		o.Proof = &p
		tt.mutate(&o)
		v := machine.Assess(rec, o, machine.DefaultPolicy(), testNow)
		got := string(v.Action)
		if r := v.Primary(); r != nil {
			got += " " + string(r.Code)
		}
		if got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
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
