package machine

import (
	"fmt"
	"strings"
)

// A tree deleted outside custody (rm -rf, then git worktree prune) leaves
// a record pointing at nothing. Whatever the record's state, custody then
// settles it: nothing is removed, its resources are destroyed (they belong
// to a tree that no longer exists), its branch is deleted only when what
// it holds is proven published, and the record says exactly what was
// proven of the tree's commits (decision 0226).

// Vanished reports whether obs shows the record's tree gone for good: lstat
// says ENOENT at its path, git registers nothing there and keeps no admin
// entry of it, git moved nothing of it elsewhere, and no other admin entry
// names the path. Anything at the path, or anything git still knows of the
// tree, is not vanished.
func Vanished(obs WorktreeObservation) bool {
	return obs.PathState == PathAbsent && !obs.Registered && !obs.AdminPresent && obs.MovedTo == "" && len(obs.OtherEntries) == 0
}

// Where a vanished tree's last known commit comes from
// (Settlement.LastKnownFrom).
const (
	// LastKnownFinalHead: finish recorded the tree's HEAD while it existed.
	LastKnownFinalHead = "final-head"
	// LastKnownBaseCommit: custody never saw the tree's final HEAD (it
	// vanished before finish); all it knows is the commit it was made at.
	LastKnownBaseCommit = "base-commit"
)

// What a settlement does with the tree's branch (Settlement.Branch).
const (
	// SettleBranchDelete: the branch is custody's own and its tip is the
	// proven commit; it is deleted by compare-and-swap at that tip.
	SettleBranchDelete = "delete"
	// SettleBranchKeep: the branch stays, with the reason.
	SettleBranchKeep = "keep"
	// SettleBranchAbsent: there is no branch to settle.
	SettleBranchAbsent = "absent"
)

// Settlement is what custody knew and proved of a vanished tree's commits
// when it settled the record, and what becomes of its branch. It is pure
// data: plan shows it, the intent carries it, the record keeps it.
type Settlement struct {
	// LastKnown is the commit custody last knew the tree at, and
	// LastKnownFrom says which that is (LastKnownFinalHead or
	// LastKnownBaseCommit).
	LastKnown     string `json:"last_known"`
	LastKnownFrom string `json:"last_known_from"`
	// BranchTip is where the tree's branch pointed ("" when it has none).
	BranchTip string `json:"branch_tip,omitempty"`
	// Head is the commit the settlement stands on (VanishedHead): the
	// branch tip when the branch holds LastKnown, else LastKnown.
	Head string `json:"head"`
	// Proven says a proof, found fresh, covers Head.
	Proven bool `json:"proven"`
	// WorkProven says every commit custody knows the tree had is proven:
	// Head is proven and is the final HEAD finish recorded or the tip of
	// a branch holding the last known commit. A proof of the base commit
	// alone is not a proof of the tree's work.
	WorkProven bool `json:"work_proven"`
	// Branch is SettleBranchDelete, SettleBranchKeep or SettleBranchAbsent;
	// BranchReason says why a branch is kept.
	Branch       string `json:"branch"`
	BranchReason string `json:"branch_reason,omitempty"`
	// Summary says in one line what was proven and what was not.
	Summary string `json:"summary"`
}

// VanishedHead is the commit a vanished tree's settlement asks to be
// proven: the tip of the record's branch when that branch holds the last
// known commit (deleting a tree leaves its branch, which carries the
// tree's work past what custody last saw), else the last known commit.
func VanishedHead(rec Record, obs WorktreeObservation) string {
	k := rec.EffectiveHead()
	if obs.BranchTip != "" && (obs.BranchTip == k || obs.BranchHoldsLastKnown) {
		return obs.BranchTip
	}
	return k
}

// DecideSettlement decides how the record of a vanished tree (Vanished(obs))
// is settled, over the fresh observation: nil and a refusal when it must be
// kept instead. It is kept while whether its head is published is unknown
// (a remote did not answer, the proof failed), and while its head is
// neither proven nor held by its branch (that commit may be held nowhere:
// custody abandon is the way out, decision 0020). Otherwise it settles,
// and its branch goes only when custody made it and its tip is proven.
func DecideSettlement(rec Record, obs WorktreeObservation, pol Policy) (*Settlement, *Refusal) {
	k := rec.EffectiveHead()
	s := Settlement{LastKnown: k, LastKnownFrom: LastKnownBaseCommit, BranchTip: obs.BranchTip, Head: VanishedHead(rec, obs)}
	if rec.Evidence.FinalHead != "" {
		s.LastKnownFrom = LastKnownFinalHead
	}
	onBranch := obs.BranchTip != "" && s.Head == obs.BranchTip
	s.Proven = IsFullCommit(s.Head) && obs.Proof.Covers(s.Head)
	s.WorkProven = s.Proven && (onBranch || s.LastKnownFrom == LastKnownFinalHead)
	if !s.Proven {
		if obs.LastKnownMissing && !onBranch && len(obs.Remote.Unavailable) == 0 && len(obs.Remote.Remotes) > 0 {
			// git no longer has it and no remote gave it: lost, whatever
			// the proof search said of a commit it could not read.
			r := missingRefusal(rec, obs)
			return nil, &r
		}
		if obs.ProofErr != "" || len(obs.Remote.Unavailable) > 0 || len(obs.Remote.Remotes) == 0 {
			o := obs
			o.Head = s.Head
			r := proofRefusal(rec, o)
			return nil, &r
		}
		if !onBranch {
			r := missingRefusal(rec, obs)
			return nil, &r
		}
	}
	owned := BranchOwned(rec, pol)
	switch {
	case obs.BranchTip == "":
		s.Branch = SettleBranchAbsent
	case !onBranch:
		s.Branch, s.BranchReason = SettleBranchKeep, fmt.Sprintf("its tip %s does not hold the last known commit %s, and nothing proved the tip published", Abbrev(obs.BranchTip, ShortCommit), Abbrev(k, ShortCommit))
	case !s.Proven:
		s.Branch, s.BranchReason = SettleBranchKeep, fmt.Sprintf("its tip %s is on no ref any remote advertises: the branch holds the tree's unproven commits", Abbrev(obs.BranchTip, ShortCommit))
	case !owned:
		s.Branch, s.BranchReason = SettleBranchKeep, BranchNotCreated
	default:
		s.Branch = SettleBranchDelete
	}
	s.Summary = settlementSummary(rec, s, obs.Proof)
	return &s, nil
}

// settlementSummary says in one line what custody knew and proved of a
// vanished tree, never claiming more than the proof covers.
func settlementSummary(rec Record, s Settlement, p *Proof) string {
	var b strings.Builder
	b.WriteString("its tree was deleted outside custody; ")
	if s.LastKnownFrom == LastKnownFinalHead {
		fmt.Fprintf(&b, "finish recorded its HEAD %s", Abbrev(s.LastKnown, ShortCommit))
	} else {
		fmt.Fprintf(&b, "custody never saw its final HEAD (it was not finished while the tree existed), only its base commit %s", Abbrev(s.LastKnown, ShortCommit))
	}
	how := ""
	if p != nil {
		how = fmt.Sprintf(" (%s on %s %s)", p.Kind, p.Remote, p.Ref)
	}
	switch {
	case s.WorkProven && s.Head == s.BranchTip && s.Head != s.LastKnown:
		fmt.Fprintf(&b, "; its branch %s carries its work on to %s, which is proven published%s", rec.Branch, Abbrev(s.Head, ShortCommit), how)
	case s.WorkProven:
		fmt.Fprintf(&b, "; its work, up to %s, is proven published%s", Abbrev(s.Head, ShortCommit), how)
	case s.Proven:
		fmt.Fprintf(&b, "; only that base commit is proven published%s, not the tree's own work, of which no branch holds a trace", how)
	default:
		fmt.Fprintf(&b, "; nothing proves %s, the tip of branch %s, published", Abbrev(s.Head, ShortCommit), rec.Branch)
	}
	return b.String()
}
