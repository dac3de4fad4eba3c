package machine

import "time"

// Origin says how a record came into custody.
type Origin string

// The origins of a worktree record.
const (
	// OriginCreated marks a worktree custody made itself; only these are
	// removed automatically and only their branch is ever deleted.
	OriginCreated Origin = "created"
	// OriginAdopted marks an existing worktree a person enrolled by path.
	OriginAdopted Origin = "adopted"
)

// BranchOrigin says where a worktree record's branch came from: the
// recorded fact custody's branch ownership rests on (BranchOwned).
type BranchOrigin string

// The origins of a worktree record's branch.
const (
	// BranchOriginCreated marks a branch custody created when it made the
	// tree (its own <prefix><id>, or a name given with new --branch), at
	// the record's BaseCommit. Only such a branch is ever deleted, by
	// compare-and-swap, after a proven removal.
	BranchOriginCreated BranchOrigin = "created"
	// BranchOriginExisting marks a branch that existed before custody made
	// the tree on it (new --checkout). custody never deletes it.
	BranchOriginExisting BranchOrigin = "existing"
)

// Record is the persisted state of one worktree, resource or archive. The
// store is its source of truth; a Record value is a copy.
type Record struct {
	ID     string `json:"id"`
	Kind   Kind   `json:"kind"`
	State  State  `json:"state"`
	Origin Origin `json:"origin"`
	Path   string `json:"path"`
	Branch string `json:"branch"`
	// BranchOrigin says whether custody created Branch (recorded at
	// create). It is empty on records written before it was recorded and
	// on adopted records: BranchOwned then falls back to the rule those
	// records were written under.
	BranchOrigin BranchOrigin `json:"branch_origin,omitempty"`
	BaseCommit   string       `json:"base_commit"`
	AdminKey     string       `json:"admin_key"`
	Dev          uint64       `json:"dev,omitempty"`
	Ino          uint64       `json:"ino,omitempty"`
	// Port is the worktree's deterministic @port@ (0 when none was given).
	Port      int       `json:"port,omitempty"`
	Rev       uint64    `json:"rev"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	Intent    *Intent   `json:"intent,omitempty"`
	Evidence  Evidence  `json:"evidence"`
}

// IntentKind names what a committed intent is about to do.
type IntentKind string

// The intents a worktree carries.
const (
	IntentCreate     IntentKind = "create"
	IntentRemoval    IntentKind = "removal"
	IntentRelocation IntentKind = "relocation"
)

// Intent is committed (fsynced) before a destructive or creating act. It
// names the target exactly, so resume can tell what was and was not done.
type Intent struct {
	Kind        IntentKind `json:"kind"`
	Path        string     `json:"path"`
	Destination string     `json:"destination,omitempty"`
	Branch      string     `json:"branch,omitempty"`
	Commit      string     `json:"commit,omitempty"`
	Dev         uint64     `json:"dev,omitempty"`
	Ino         uint64     `json:"ino,omitempty"`
	AdminKey    string     `json:"admin_key,omitempty"`
	// Quarantine is where a removal moves the tree before deleting it,
	// entry by entry (a sibling of Path, so on the same filesystem); its
	// manifest is beside it. Resume finishes or undoes what it finds there.
	Quarantine string `json:"quarantine,omitempty"`
	Proof      *Proof `json:"proof,omitempty"`
	// Settlement is set on the intent that settles a vanished tree's
	// record (TriggerSettle): what custody knew and proved of its commits
	// and what becomes of its branch. Nothing is removed under it.
	Settlement  *Settlement `json:"settlement,omitempty"`
	Fingerprint string      `json:"fingerprint,omitempty"`
	PlanID      string      `json:"plan_id,omitempty"`
	// Discarded is, on a removal intent, the build output the removal
	// deletes with the tree (each directory relative to it, its kind and
	// size), as the observation the fingerprint vouches for classified
	// it: the journal's record of what went. Omitted when there is none,
	// so intents without build output are written as before.
	Discarded []DiscardedDir `json:"discarded,omitempty"`
	Holder    Holder         `json:"holder"`
	At        time.Time      `json:"at"`
}

// Holder identifies the process that committed an intent, so another
// invocation can tell an intent still being acted on from one left by a
// process that died.
type Holder struct {
	PID   int    `json:"pid"`
	Host  string `json:"host"`
	Start uint64 `json:"start,omitempty"`
	// Command is the holding process's command line, as a person would
	// recognise it ("custody apply plan.json"): said when its work is
	// reported in progress, never compared to decide anything. Intents
	// an older custody wrote lack it.
	Command string `json:"command,omitempty"`
}

// Evidence is what custody observed and concluded about a record over its
// life. It is written only by transitions.
type Evidence struct {
	FinalHead     string    `json:"final_head,omitempty"`
	FinishedAt    time.Time `json:"finished_at,omitzero"`
	Proof         *Proof    `json:"proof,omitempty"`
	RemovedAt     time.Time `json:"removed_at,omitzero"`
	BranchOutcome string    `json:"branch_outcome,omitempty"`
	BranchReason  string    `json:"branch_reason,omitempty"`
	Outcome       string    `json:"outcome,omitempty"`
	PlanID        string    `json:"plan_id,omitempty"`
	// Settlement says, for a record settled after its tree vanished
	// (Outcome "settled"), what was proven of the tree's commits.
	Settlement *Settlement `json:"settlement,omitempty"`
}

// Branch outcomes recorded in Evidence.BranchOutcome.
const (
	BranchDeleted = "deleted"
	BranchKept    = "kept"
	BranchAbsent  = "absent"
)

// Lease says a session is using an active worktree until Expires.
type Lease struct {
	Record  string    `json:"record"`
	Holder  string    `json:"holder"`
	Expires time.Time `json:"expires"`
}

// Live reports whether the lease still holds at now.
func (l *Lease) Live(now time.Time) bool {
	return l != nil && now.Before(l.Expires)
}

// EffectiveHead is the commit the record's tree is known to hold: the final
// HEAD recorded by finish, else the commit it was created from.
func (r Record) EffectiveHead() string {
	if r.Evidence.FinalHead != "" {
		return r.Evidence.FinalHead
	}
	return r.BaseCommit
}
