package machine

// Outcome is what a command did with one item (a record, a ledger entry, a
// plan item). It is part of the JSON contract: scripts match on it, and a
// value never changes meaning once released.
type Outcome string

// Outcomes that settle an item: nothing is left for a person to do.
const (
	OutcomeRemoved      Outcome = "removed"
	OutcomeAlreadyDone  Outcome = "already-done"
	OutcomeDestroyed    Outcome = "destroyed"
	OutcomeActivated    Outcome = "activated"
	OutcomeDiscarded    Outcome = "discarded"
	OutcomeCreated      Outcome = "created"
	OutcomeEnsured      Outcome = "ensured"
	OutcomeFinished     Outcome = "finished"
	OutcomeReopened     Outcome = "reopened"
	OutcomeRelocated    Outcome = "relocated"
	OutcomeSteppedBack  Outcome = "stepped-back"
	OutcomeWouldReclaim Outcome = "would-reclaim"
	OutcomeIgnored      Outcome = "ignored"
	OutcomeCompleted    Outcome = "completed"
	// OutcomeAbandoned ends a record whose lost commit a person
	// acknowledged (custody abandon): the one outcome without a proof.
	OutcomeAbandoned Outcome = "abandoned"
	// OutcomeSettled ends a record whose tree vanished outside custody:
	// nothing was removed, and the record says what was proven of the
	// tree's commits (decision 0226).
	OutcomeSettled Outcome = "settled"
)

// Outcomes that leave an item for a person or a later run.
const (
	OutcomeRefused    Outcome = "refused"
	OutcomeStale      Outcome = "stale"
	OutcomeFailed     Outcome = "failed"
	OutcomeKept       Outcome = "kept"
	OutcomeInProgress Outcome = "in-progress"
	OutcomeRolledBack Outcome = "rolled-back"
)

// Settled reports whether o ends the item with nothing left to do. An
// outcome custody does not know is never settled.
func (o Outcome) Settled() bool {
	switch o {
	case OutcomeRemoved, OutcomeAlreadyDone, OutcomeDestroyed, OutcomeActivated, OutcomeDiscarded,
		OutcomeCreated, OutcomeEnsured, OutcomeFinished, OutcomeReopened, OutcomeRelocated,
		OutcomeSteppedBack, OutcomeWouldReclaim, OutcomeIgnored, OutcomeCompleted, OutcomeAbandoned, OutcomeSettled:
		return true
	}
	return false
}

// ForRefusal is the outcome that reports r: stale for a stale refusal,
// refused otherwise.
func ForRefusal(r *Refusal) Outcome {
	if r != nil && r.Code == CodeStale {
		return OutcomeStale
	}
	return OutcomeRefused
}

// Benign reports whether a kept item with a refusal of code c is not a
// person's to settle now: a tree still in use (not finished, a live lease),
// one custody does not own, a resource whose worktree lives, or a record
// another live invocation is acting on (that invocation reports it). Such
// an item is reported and kept, but does not make a command exit 3.
func (c Code) Benign() bool {
	switch c {
	case CodeNotFinished, CodeLeaseLive, CodeForeign, CodeWorktreeLive, CodeInProgress:
		return true
	}
	return false
}

// ItemPending is the one exit-3 rule for an item. An item an assessment
// kept (plan, orphan GC) is pending when its refusal is not benign; any
// other item is pending when it carries a refusal or ended in an outcome
// that does not settle it.
func ItemPending(o Outcome, r *Refusal) bool {
	if o == OutcomeKept {
		return r != nil && !r.Code.Benign()
	}
	return r != nil || !o.Settled()
}

// Pender is every command result: it answers whether something was
// refused or is pending, which decides exit 3 in one place.
type Pender interface {
	Pending() bool
}
