package machine_test

import (
	"testing"

	"github.com/custody-sh/custody/machine"
)

// TestItemPending is the exit-3 rule, case by case.
func TestItemPending(t *testing.T) {
	t.Parallel()
	ref := func(c machine.Code) *machine.Refusal {
		return &machine.Refusal{Code: c, Message: "m", Retry: "custody plan"}
	}
	tests := []struct {
		o    machine.Outcome
		r    *machine.Refusal
		want bool
	}{
		{machine.OutcomeRemoved, nil, false},
		{machine.OutcomeAlreadyDone, nil, false},
		{machine.OutcomeDestroyed, nil, false},
		{machine.OutcomeWouldReclaim, nil, false},
		{machine.OutcomeStale, ref(machine.CodeStale), true},
		{machine.OutcomeRefused, ref(machine.CodeNotFinished), true}, // a command a person asked for was refused
		{machine.OutcomeRefused, ref(machine.CodeInProgress), true},
		{machine.OutcomeFailed, nil, true},
		{machine.OutcomeInProgress, ref(machine.CodeInProgress), true},
		{machine.Outcome("something-new"), nil, true}, // unknown is never settled
		{machine.OutcomeKept, ref(machine.CodeNotFinished), false},
		{machine.OutcomeKept, ref(machine.CodeLeaseLive), false},
		{machine.OutcomeKept, ref(machine.CodeForeign), false},
		{machine.OutcomeKept, ref(machine.CodeWorktreeLive), false},
		{machine.OutcomeKept, ref(machine.CodeInProgress), false},
		{machine.OutcomeKept, ref(machine.CodeUntrackedFiles), true},
		{machine.OutcomeKept, ref(machine.CodeGCDisabled), true},
		{machine.OutcomeCreated, ref(machine.CodeResourceFailed), true},
	}
	for _, tt := range tests {
		code := machine.Code("")
		if tt.r != nil {
			code = tt.r.Code
		}
		if got := machine.ItemPending(tt.o, tt.r); got != tt.want {
			t.Errorf("ItemPending(%s, %q) = %v, want %v", tt.o, code, got, tt.want)
		}
	}
	if machine.ForRefusal(ref(machine.CodeStale)) != machine.OutcomeStale || machine.ForRefusal(ref(machine.CodeLocked)) != machine.OutcomeRefused {
		t.Error("ForRefusal: stale refusals report stale, every other one refused")
	}
}
