package machine

import (
	"time"

	"github.com/qmuntal/stateless"
)

// Commit persists one worktree transition (the commit point; see
// CommitFunc).
type Commit = CommitFunc[Firing]

// Worktree is the state machine of one worktree record.
type Worktree = Machine[Record, Firing]

// WorktreeSpec is the worktree kind's machine (DESIGN §4).
func WorktreeSpec() Spec[Record] {
	return Spec[Record]{Kind: KindWorktree, Configure: configureWorktree, Retry: func(r Record) string { return CommandOn([]string{"custody", "show"}, r.ID) }}
}

// NewWorktree returns the machine of rec. Pass a zero Record with ID set to
// fire create.
func NewWorktree(rec Record, commit Commit) *Worktree { return NewMachine(WorktreeSpec(), rec, commit) }

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
		Permit(TriggerSettle, StateRemoving, vanishedSettlement).
		Permit(TriggerFinish, StateFinished, noLiveLease).
		Permit(TriggerExpire, StateFinished, leaseExpired).
		Permit(TriggerRelocate, StateRelocating, relocationSafe).
		Permit(TriggerAbandon, StateTombstoned, unrecoverableAcknowledged)
	sm.Configure(StateFinished).
		Permit(TriggerReopen, StateActive).
		Permit(TriggerRemove, StateRemoving, removalProven).
		Permit(TriggerSettle, StateRemoving, vanishedSettlement).
		Permit(TriggerAbandon, StateTombstoned, unrecoverableAcknowledged)
	sm.Configure(StateRelocating).
		Permit(TriggerRelocated, StateActive, onlyDestinationRegistered).
		PermitReentry(TriggerTakeOver, intentHeld).
		Permit(TriggerStepBack, StateActive, onlySourceRegistered).
		Permit(TriggerAbandon, StateTombstoned, unrecoverableAcknowledged)
	sm.Configure(StateRemoving).
		Permit(TriggerRemoved, StateTombstoned, absenceVerified).
		Permit(TriggerSettled, StateTombstoned, settlementVerified).
		PermitReentry(TriggerTakeOver, intentHeld).
		Permit(TriggerRetreat, StateFinished, treeIntact).
		Permit(TriggerAbandon, StateTombstoned, unrecoverableAcknowledged)
	sm.Configure(StateTombstoned)
}

// WorktreeGraph returns the worktree machine as a DOT graph, for docs/.
func WorktreeGraph() string { return Graph(WorktreeSpec()) }

// RowKind is KindWorktree.
func (r Record) RowKind() Kind { return KindWorktree }

// RowID is the record's id.
func (r Record) RowID() string { return r.ID }

// RowState is the record's state.
func (r Record) RowState() State { return r.State }

// RowRev is the record's revision.
func (r Record) RowRev() uint64 { return r.Rev }

// RowPath is the worktree's path.
func (r Record) RowPath() string { return r.Path }

// RowIntent returns the kind and holder of the record's intent.
func (r Record) RowIntent() (IntentKind, Holder, bool) {
	if r.Intent == nil {
		return "", Holder{}, false
	}
	return r.Intent.Kind, r.Intent.Holder, true
}

// RowIntentAt is when the record's intent was committed (zero for none).
func (r Record) RowIntentAt() time.Time {
	if r.Intent == nil {
		return time.Time{}
	}
	return r.Intent.At
}
