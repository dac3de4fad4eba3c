package machine_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/machine"
)

// TestAssessTimedOut: a command that ran out of time while the tree was
// observed keeps an otherwise removable tree with observation-timed-out,
// named first, on the tree's path, naming the command, where it ran when
// that is not the tree, and its deadline, retried by plan with four times
// the deadline. The status-failed and proof-failed it caused are not
// repeated; a reason to keep it has besides is still given.
func TestAssessTimedOut(t *testing.T) {
	t.Parallel()
	status := machine.TimedOut{Command: "git status '--porcelain=v2'", Dir: "/work/tree", Deadline: "2s"}
	proof := machine.TimedOut{Command: "git rev-list --stdin", Dir: "/work/main", Deadline: "5m"}
	tests := []struct {
		name  string
		edit  func(o *machine.WorktreeObservation)
		codes []machine.Code
	}{
		{"status", func(o *machine.WorktreeObservation) {
			o.TimedOut = []machine.TimedOut{status}
			o.StatusErr = "git status: no answer within 2s"
			o.Status = machine.Status{}
		}, []machine.Code{machine.CodeObservationTimedOut}},
		{"proof", func(o *machine.WorktreeObservation) {
			o.TimedOut = []machine.TimedOut{proof}
			o.Proof, o.ProofErr = nil, "git rev-list: no answer within 5m"
		}, []machine.Code{machine.CodeObservationTimedOut}},
		{"both, and a lock besides", func(o *machine.WorktreeObservation) {
			o.TimedOut = []machine.TimedOut{status, proof}
			o.StatusErr, o.Proof, o.ProofErr = "timed out", nil, "timed out"
			o.Locked = true
		}, []machine.Code{machine.CodeObservationTimedOut, machine.CodeObservationTimedOut, machine.CodeLocked}},
		// A vanished tree (decision 0226) is kept while whether its head
		// is published is unknown: here, because its proof ran out of time.
		{"a proof that timed out, the tree gone", func(o *machine.WorktreeObservation) {
			*o = machine.WorktreeObservation{Path: o.Path, PathState: machine.PathAbsent, TimedOut: []machine.TimedOut{proof}, ProofErr: "timed out"}
		}, []machine.Code{machine.CodeObservationTimedOut}},
		{"a proof that timed out, the tree gone but still registered", func(o *machine.WorktreeObservation) {
			*o = machine.WorktreeObservation{Path: o.Path, PathState: machine.PathAbsent, Registered: true, TimedOut: []machine.TimedOut{proof}, ProofErr: "timed out"}
		}, []machine.Code{machine.CodeObservationTimedOut, machine.CodeWorktreeMissing}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec, obs := removableRecord(), removableObs()
			tt.edit(&obs)
			v := machine.Assess(rec, obs, machine.DefaultPolicy(), testNow)
			var codes []machine.Code
			for _, r := range v.Refusals {
				codes = append(codes, r.Code)
			}
			if d := cmp.Diff(tt.codes, codes); v.Action != machine.ActionKeep || d != "" {
				t.Errorf("action %s, codes (-want +got):\n%s", v.Action, d)
			}
		})
	}
	rec, obs := removableRecord(), removableObs()
	obs.TimedOut = []machine.TimedOut{status, proof}
	v := machine.Assess(rec, obs, machine.DefaultPolicy(), testNow)
	want := []machine.Refusal{
		{Code: machine.CodeObservationTimedOut, Path: rec.Path, Retry: "custody --observe-timeout 8s plan",
			Message: "observing " + rec.Path + ", git status '--porcelain=v2' (run in /work/tree) did not finish within 2s: it and every process it started (a filter, hook or helper git runs) were killed, so what it would have said is unknown; if it hangs, find what it waits for (GIT_TRACE=1) before trying again with a longer deadline"},
		{Code: machine.CodeObservationTimedOut, Path: rec.Path, Retry: "custody --observe-timeout 20m plan",
			Message: "observing " + rec.Path + ", git rev-list --stdin (run in /work/main) did not finish within 5m: it and every process it started (a filter, hook or helper git runs) were killed, so what it would have said is unknown; if it hangs, find what it waits for (GIT_TRACE=1) before trying again with a longer deadline"},
	}
	if d := cmp.Diff(want, v.Refusals); d != "" {
		t.Errorf("refusals (-want +got):\n%s", d)
	}
	// In the tree itself, the place is not said twice; resume retries
	// resume.
	r := machine.TimedOutRefusal(rec.Path, machine.TimedOut{Command: "git status", Dir: rec.Path, Deadline: "90s"}, "resume")
	if r.Retry != "custody --observe-timeout 6m resume" || r.Message[:len("observing "+rec.Path+", git status did not")] != "observing "+rec.Path+", git status did not" {
		t.Errorf("TimedOutRefusal in the tree = %+v", r)
	}
}

// TestShortDuration: durations read as a person writes them.
func TestShortDuration(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		5 * time.Minute: "5m", 90 * time.Second: "1m30s", 2 * time.Hour: "2h", time.Hour + 30*time.Minute: "1h30m",
		250 * time.Millisecond: "250ms", 1500 * time.Millisecond: "1.5s", 0: "0s",
	} {
		if got := machine.ShortDuration(d); got != want {
			t.Errorf("ShortDuration(%s) = %q, want %q", d, got, want)
		}
	}
}
