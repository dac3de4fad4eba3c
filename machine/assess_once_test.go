package machine_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/machine"
)

// TestAddRefusalsNamesEachReasonOnce: AddRefusals keeps the order of first
// appearance and drops a refusal equal to one already held, while two of
// one code that differ in path or message both stay.
func TestAddRefusalsNamesEachReasonOnce(t *testing.T) {
	t.Parallel()
	a := machine.Refusal{Code: machine.CodeLeaseLive, Path: "/t", Retry: "custody plan", Message: "leased"}
	b := machine.Refusal{Code: machine.CodeLocked, Path: "/t", Retry: "git worktree unlock /t", Message: "locked"}
	otherPath := a
	otherPath.Path = "/u"
	otherMsg := a
	otherMsg.Message = "leased by another"
	tests := []struct {
		name     string
		rs, more []machine.Refusal
		want     []machine.Refusal
	}{
		{"empty", nil, nil, nil},
		{"into-empty", nil, []machine.Refusal{a, b}, []machine.Refusal{a, b}},
		{"repeat-in-more", nil, []machine.Refusal{a, b, a, b}, []machine.Refusal{a, b}},
		{"already-held", []machine.Refusal{a}, []machine.Refusal{b, a}, []machine.Refusal{a, b}},
		{"same-code-other-path", []machine.Refusal{a}, []machine.Refusal{otherPath}, []machine.Refusal{a, otherPath}},
		{"same-code-other-message", []machine.Refusal{a}, []machine.Refusal{otherMsg}, []machine.Refusal{a, otherMsg}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, machine.AddRefusals(tt.rs, tt.more...)); diff != "" {
				t.Errorf("AddRefusals (-want +got):\n%s", diff)
			}
		})
	}
}

// TestShownVerdictNamesEachReasonOnce: show assesses an active tree as it
// is and as plan would once it is finished, and gathers both verdicts'
// reasons with AddRefusals. Every reason both find is named once: a live
// lease, a pending intent (with or without the lease), while a reason
// only the finished assessment finds is added.
func TestShownVerdictNamesEachReasonOnce(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		mutate func(*machine.Record, *machine.WorktreeObservation)
		want   []refusalKey
	}{
		{
			name: "lease-live",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				o.Lease = lease(testNow.Add(time.Hour))
			},
			want: []refusalKey{key(machine.CodeLeaseLive, retryPlan)},
		},
		{
			name: "lease-live-and-locked",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				o.Lease = lease(testNow.Add(time.Hour))
				o.Locked = true
			},
			want: []refusalKey{key(machine.CodeLeaseLive, retryPlan), key(machine.CodeLocked, "git worktree unlock "+testPath)},
		},
		{
			name: "intent-pending",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				r.Intent = relocationIntent()
			},
			want: []refusalKey{key(machine.CodeIntentPending, "custody resume")},
		},
		{
			name: "intent-pending-under-lease",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				r.Intent = relocationIntent()
				o.Lease = lease(testNow.Add(time.Hour))
			},
			want: []refusalKey{key(machine.CodeIntentPending, "custody resume")},
		},
		{
			name: "not-finished-then-locked",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				o.Lease = nil
				o.Locked = true
			},
			want: []refusalKey{key(machine.CodeNotFinished, "custody finish "+testID), key(machine.CodeLocked, "git worktree unlock "+testPath)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec, obs := removableRecord(), removableObs()
			rec.State = machine.StateActive
			tt.mutate(&rec, &obs)
			pol := machine.DefaultPolicy()
			v := machine.Assess(rec, obs, pol, testNow)
			fin := rec
			fin.State = machine.StateFinished
			got := machine.AddRefusals(v.Refusals, machine.Assess(fin, obs, pol, testNow).Refusals...)
			if diff := cmp.Diff(tt.want, keysOf(got)); diff != "" {
				t.Errorf("refusals (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAssessNamesARepeatedFactOnce: an observation that carries the same
// fact twice (one hidden entry reported by two probes) gives one refusal.
func TestAssessNamesARepeatedFactOnce(t *testing.T) {
	t.Parallel()
	rec, obs := removableRecord(), removableObs()
	h := machine.Hidden{Code: machine.CodeSkipWorktree, Path: testPath + "/b.go"}
	obs.Hidden = []machine.Hidden{h, h}
	v := machine.Assess(rec, obs, machine.DefaultPolicy(), testNow)
	if n := len(v.Refusals); n != 1 || v.Refusals[0].Code != machine.CodeSkipWorktree {
		t.Errorf("refusals = %+v, want one skip-worktree", v.Refusals)
	}
}
