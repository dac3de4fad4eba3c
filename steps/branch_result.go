package steps

import "github.com/custody-sh/custody/machine"

// BranchResult is what a removal did with its tree's branch, for the
// person reading apply's output.
type BranchResult struct {
	// Name is the branch (without refs/heads/).
	Name string `json:"name"`
	// Outcome is machine.BranchDeleted, BranchKept or BranchAbsent.
	Outcome string `json:"outcome"`
	// Commit is the commit a deleted branch pointed at: with it, the
	// branch can be made again (git branch NAME COMMIT).
	Commit string `json:"commit,omitempty"`
	// Reason says why a branch was kept or absent.
	Reason string `json:"reason,omitempty"`
}

// provenHead is the commit rec's removal proved published: its intent's
// commit, else its last known HEAD. An owned branch is deleted only while
// it still points there.
func provenHead(rec machine.Record) string {
	if rec.Intent != nil && rec.Intent.Commit != "" {
		return rec.Intent.Commit
	}
	return rec.EffectiveHead()
}

// branchResult reports the branch outcome settleRemoval recorded; nil for
// a tree without a branch (a detached HEAD).
func branchResult(rec machine.Record, outcome, reason string) *BranchResult {
	if rec.Branch == "" {
		return nil
	}
	b := &BranchResult{Name: rec.Branch, Outcome: outcome, Reason: reason}
	if outcome == machine.BranchDeleted {
		b.Commit = provenHead(rec)
	}
	return b
}
