package main

import (
	"syscall"
	"testing"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
	"github.com/google/go-cmp/cmp"
)

func TestInterruptNoteLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		note interruptNote
		want string
	}{
		{"a command that only reads",
			interruptNote{Command: "plan", Signal: "SIGINT", Reads: true, Committed: 2, Midway: []string{"x"}, MidwayKnown: true},
			"custody plan: interrupted by SIGINT before it finished; it only reads, so nothing was changed and nothing is left to settle"},
		{"nothing committed, nothing left",
			interruptNote{Command: "finish", Signal: "SIGTERM", MidwayKnown: true},
			"custody finish: interrupted by SIGTERM before it changed anything; nothing is left midway"},
		{"committed, nothing left",
			interruptNote{Command: "finish", Signal: "SIGINT", Committed: 2, MidwayKnown: true},
			"custody finish: interrupted by SIGINT after committing 2 change(s) to the state file; nothing is left midway"},
		{"one left midway",
			interruptNote{Command: "new", Signal: "SIGHUP", Committed: 1, Midway: []string{"x-1a2b3c (create worktree)"}, MidwayKnown: true},
			"custody new: interrupted by SIGHUP after committing 1 change(s) to the state file; left midway: x-1a2b3c (create worktree), which custody resume settles"},
		{"the state could not be read again",
			interruptNote{Command: "resume", Signal: "SIGINT"},
			"custody resume: interrupted by SIGINT before it finished; custody resume settles whatever it left midway"},
		{"apply: finished, left, not started, listed up to three",
			interruptNote{Command: "apply", Signal: "SIGINT", Finished: "after 1 of 7 actions (1 removed)", Committed: 4,
				Midway: []string{"b (removal worktree)", "c (destroy resource)"}, MidwayKnown: true,
				NotStarted: []string{"d", "e", "f", "g"}, Again: "custody apply p.json"},
			"custody apply: interrupted by SIGINT after 1 of 7 actions (1 removed); left midway: b (removal worktree), c (destroy resource), which custody resume settles; not started: d, e, f and 1 more (custody apply p.json does them)"},
		{"apply: finished before the signal was seen",
			interruptNote{Command: "apply", Signal: "SIGTERM", Finished: "after 2 of 2 actions (2 removed)", MidwayKnown: true},
			"custody apply: interrupted by SIGTERM after 2 of 2 actions (2 removed); nothing is left midway"},
	} {
		if got := tc.note.line(); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

func TestApplyFinished(t *testing.T) {
	done := func(id string, o machine.Outcome) steps.Outcome { return steps.Outcome{ID: id, Outcome: o} }
	for _, tc := range []struct {
		res  steps.ApplyResult
		want string
	}{
		{steps.ApplyResult{StoppedAt: "a", NotStarted: []string{"b", "c"}}, "before any of its 3 actions finished"},
		{steps.ApplyResult{NotStarted: []string{"a"}}, "before its one action finished"},
		{steps.ApplyResult{Items: []steps.Outcome{done("a", machine.OutcomeRemoved), done("b", machine.OutcomeStale), done("c", machine.OutcomeRemoved)}, StoppedAt: "d"},
			"after 3 of 4 actions (2 removed, 1 stale)"},
		{steps.ApplyResult{Items: []steps.Outcome{done("a", machine.OutcomeAlreadyDone)}}, "after 1 of 1 action (1 already-done)"},
	} {
		if got := applyFinished(tc.res); got != tc.want {
			t.Errorf("applyFinished(%+v) = %q, want %q", tc.res, got, tc.want)
		}
	}
}

func TestRemoveFinished(t *testing.T) {
	tree := func(id string, o machine.Outcome) removeTree { return removeTree{ID: id, Outcome: o} }
	for _, tc := range []struct {
		res  removeResult
		want string
	}{
		{removeResult{StoppedAt: "a", NotStarted: []string{"b"}}, "before it was done with any of its 2 trees"},
		{removeResult{StoppedAt: "a"}, "before it was done with its one tree"},
		{removeResult{Trees: []removeTree{tree("a", machine.OutcomeRemoved), tree("b", machine.OutcomeKept)}, NotStarted: []string{"c"}},
			"after 2 of 3 trees (1 removed, 1 kept)"},
		{removeResult{Trees: []removeTree{tree("a", machine.OutcomeAlreadyDone)}}, "after 1 of 1 tree (1 already-done)"},
	} {
		if got := removeFinished(tc.res); got != tc.want {
			t.Errorf("removeFinished(%+v) = %q, want %q", tc.res, got, tc.want)
		}
	}
}

func TestInterruptExit(t *testing.T) {
	got := map[string]int{}
	for _, s := range []syscall.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM} {
		got[signalName(s)] = interruptExit(s)
	}
	if d := cmp.Diff(map[string]int{"SIGHUP": exitHangup, "SIGINT": exitInterrupt, "SIGTERM": exitTerminated}, got); d != "" {
		t.Errorf("exit codes by signal (-want +got):\n%s", d)
	}
	if exitHangup != 129 || exitInterrupt != 130 || exitTerminated != 143 {
		t.Errorf("exit codes %d %d %d, want 129 130 143", exitHangup, exitInterrupt, exitTerminated)
	}
}
