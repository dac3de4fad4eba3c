package machine

// Kind names which state machine a record follows.
type Kind string

// The kinds of record custody keeps.
const (
	KindWorktree Kind = "worktree"
	KindResource Kind = "resource"
	KindArchive  Kind = "archive"
)

// State is a record's lifecycle state. The zero value, StateNone, is the
// state of a record that does not exist yet; it is never stored.
type State string

// The states every kind shares.
const (
	StateNone         State = ""
	StateProvisioning State = "provisioning"
	StateActive       State = "active"
	StateFinished     State = "finished"
	StateRelocating   State = "relocating"
	StateRemoving     State = "removing"
	StateTombstoned   State = "tombstoned"
)

// States lists every stored state in lifecycle order.
func States() []State {
	return []State{StateProvisioning, StateActive, StateFinished, StateRelocating, StateRemoving, StateTombstoned}
}

// String returns the state's name; StateNone prints as "none".
func (s State) String() string {
	if s == StateNone {
		return "none"
	}
	return string(s)
}

// Valid reports whether s is one of the stored states.
func (s State) Valid() bool {
	for _, v := range States() {
		if s == v {
			return true
		}
	}
	return false
}

// Trigger names a transition.
type Trigger string

// The triggers of the worktree machine (DESIGN §4).
const (
	TriggerCreate  Trigger = "create"
	TriggerCreated Trigger = "created"
	// TriggerAdopt enrolls an existing linked worktree a person named by
	// path: none → active, recorded as adopted.
	TriggerAdopt     Trigger = "adopt"
	TriggerAbandon   Trigger = "abandon"
	TriggerFinish    Trigger = "finish"
	TriggerExpire    Trigger = "expire"
	TriggerReopen    Trigger = "reopen"
	TriggerRelocate  Trigger = "relocate"
	TriggerRelocated Trigger = "relocated"
	TriggerRemove    Trigger = "remove"
	TriggerRemoved   Trigger = "removed"
	// TriggerRetreat takes a removing record back to finished when the
	// final observation, made after the removal intent was committed,
	// no longer permits removal and nothing has been removed.
	TriggerRetreat Trigger = "retreat"
	// TriggerTakeOver moves an intent whose holder died to the process that
	// resumes it (a reentry): only the one whose compare-and-swap wins acts.
	TriggerTakeOver Trigger = "take-over"
	// TriggerDiscard tombstones a provisioning record whose tree was never
	// made (resume's "nothing exists" rule). It is distinct from abandon,
	// which needs an acknowledged unrecoverable commit.
	TriggerDiscard Trigger = "discard"
	// TriggerStepBack takes a relocating record back to active at its
	// source when git still reports only the source: the move never
	// happened (resume's "only src" rule).
	TriggerStepBack Trigger = "step-back"
	// TriggerSettle commits the settlement intent of a record whose tree
	// vanished (deleted and pruned outside custody): active or finished →
	// removing, with nothing left to remove (decision 0226).
	TriggerSettle Trigger = "settle"
	// TriggerSettled completes a settlement: removing → tombstoned, the
	// tree still absent and unregistered, its branch settled as the
	// settlement said. It is distinct from removed: custody removed
	// nothing, and the record says what was proven of the tree's commits.
	TriggerSettled Trigger = "settled"
)

// String returns the trigger's name.
func (t Trigger) String() string { return string(t) }
