package machine

// The journal events the auditor's report reads beyond transitions, and
// their details: steps writes them with these names and shapes, and the
// report (Audit) reads them back, so both share this one definition.
const (
	// EventBranchDeleting is written right before custody deletes an
	// owned branch, so a run killed after the delete still reports it
	// deleted. Its detail is a BranchDeletingDetail.
	EventBranchDeleting = "branch-deleting"
	// EventRecovered is written when a removal keeps what would die with
	// the tree (recovery refs, per-worktree files). Its detail is a
	// RecoveredDetail.
	EventRecovered = "recovered"
	// EventRecoveredPruned is written when what a removal kept is pruned.
	EventRecoveredPruned = "recovered-pruned"
)

// BranchDeletingDetail is the detail of an EventBranchDeleting event: the
// record whose branch goes, the branch, the commit it pointed at and the
// plan the removal came from (empty without one).
type BranchDeletingDetail struct {
	Record string `json:"record"`
	Branch string `json:"branch"`
	Commit string `json:"commit"`
	Plan   string `json:"plan,omitempty"`
}

// RecoveredRef is one commit a removal kept under a recovery ref.
type RecoveredRef struct {
	Ref    string `json:"ref"`
	Commit string `json:"commit"`
}

// RecoveredDetail is the detail of an EventRecovered event: the refs made
// and the files written for one record's removal.
type RecoveredDetail struct {
	Refs  []RecoveredRef `json:"refs,omitempty"`
	Files []string       `json:"files,omitempty"`
}
