package machine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/qmuntal/stateless"
)

// Commit persists one transition: the record moves from `from` to `to` by
// trigger, carrying f. It is the commit point: it must write the new state,
// the intent and the journal entry in one transaction, and return an error
// if it did not. Nothing destructive may happen inside it.
type Commit func(ctx context.Context, from, to State, trigger Trigger, f Firing) error

// Worktree is the state machine of one worktree record, for one command, on
// one goroutine. The record in the store is the source of truth; Worktree
// only carries its state between the accessor and the Commit callback.
type Worktree struct {
	sm      *stateless.StateMachine
	state   State
	trigger Trigger
	commit  Commit
}

// NewWorktree returns the machine of rec. Pass a zero Record with ID set to
// fire create.
func NewWorktree(rec Record, commit Commit) *Worktree {
	w := &Worktree{state: rec.State, commit: commit}
	w.sm = stateless.NewStateMachineWithExternalStorageAndArgs(
		func(context.Context) (stateless.State, []any, error) { return w.state, nil, nil },
		w.mutate,
		stateless.FiringImmediate,
	)
	configureWorktree(w.sm)
	w.sm.OnUnhandledTrigger(func(_ context.Context, s stateless.State, t stateless.Trigger, unmet []string) error {
		st, tr := s.(State), t.(Trigger)
		if len(unmet) > 0 {
			return &Refusal{Code: CodeGuardFailed, Path: rec.Path, Retry: "custody show " + rec.ID,
				Message: fmt.Sprintf("cannot %s %s from %s: %s did not hold", tr, rec.ID, st, strings.Join(unmet, ", "))}
		}
		return &Refusal{Code: CodeWrongState, Path: rec.Path, Retry: "custody show " + rec.ID,
			Message: fmt.Sprintf("cannot %s %s: it is %s", tr, rec.ID, st)}
	})
	return w
}

func (w *Worktree) mutate(ctx context.Context, s stateless.State, args ...any) error {
	to := s.(State)
	f, ok := firingOf(args)
	if !ok {
		panic(fmt.Sprintf("machine: transition [%s -> %s] fired without a Firing", w.state, to))
	}
	if err := w.commit(ctx, w.state, to, w.trigger, f); err != nil {
		return err
	}
	w.state = to
	return nil
}

// Fire takes trigger t over f. It returns a *Refusal when the trigger is not
// permitted or a guard does not hold, the Commit error when persisting
// failed, and nil once the transition is committed.
func (w *Worktree) Fire(ctx context.Context, t Trigger, f Firing) error {
	w.trigger = t
	return w.sm.FireCtx(ctx, t, f)
}

// State returns the machine's current state.
func (w *Worktree) State() State { return w.state }

// Permitted returns the triggers whose guards hold over f, sorted.
func (w *Worktree) Permitted(ctx context.Context, f Firing) []Trigger {
	ts, err := w.sm.PermittedTriggersCtx(ctx, f)
	if err != nil {
		return nil
	}
	out := make([]Trigger, 0, len(ts))
	for _, t := range ts {
		out = append(out, t.(Trigger))
	}
	slices.Sort(out)
	return out
}

func configureWorktree(sm *stateless.StateMachine) {
	sm.Configure(StateNone).
		Permit(TriggerCreate, StateProvisioning, createTargetsFree).
		Permit(TriggerAdopt, StateActive, adoptable)
	sm.Configure(StateProvisioning).
		Permit(TriggerCreated, StateActive, treeMadeExactly).
		PermitReentry(TriggerTakeOver, intentHeld).
		Permit(TriggerDiscard, StateTombstoned, nothingMade).
		Permit(TriggerAbandon, StateTombstoned, unrecoverableAcknowledged)
	sm.Configure(StateActive).
		Permit(TriggerFinish, StateFinished, noLiveLease).
		Permit(TriggerExpire, StateFinished, leaseExpired).
		Permit(TriggerRelocate, StateRelocating, relocationSafe).
		Permit(TriggerAbandon, StateTombstoned, unrecoverableAcknowledged)
	sm.Configure(StateFinished).
		Permit(TriggerReopen, StateActive).
		Permit(TriggerRemove, StateRemoving, removalProven).
		Permit(TriggerAbandon, StateTombstoned, unrecoverableAcknowledged)
	sm.Configure(StateRelocating).
		Permit(TriggerRelocated, StateActive, onlyDestinationRegistered).
		PermitReentry(TriggerTakeOver, intentHeld).
		Permit(TriggerAbandon, StateTombstoned, unrecoverableAcknowledged)
	sm.Configure(StateRemoving).
		Permit(TriggerRemoved, StateTombstoned, absenceVerified).
		PermitReentry(TriggerTakeOver, intentHeld).
		Permit(TriggerRetreat, StateFinished, treeIntact).
		Permit(TriggerAbandon, StateTombstoned, unrecoverableAcknowledged)
	sm.Configure(StateTombstoned)
}

// WorktreeGraph returns the worktree machine as a DOT graph, for docs/.
func WorktreeGraph() string {
	w := NewWorktree(Record{}, func(context.Context, State, State, Trigger, Firing) error { return nil })
	return w.sm.ToGraph()
}
