package machine

// BranchNotCreated is why a branch custody did not create is kept when
// its tree goes: the reason plan, apply and a settlement give.
const BranchNotCreated = "custody did not create it"

// BranchOwned reports whether custody created rec's branch, so that it
// may delete it (by compare-and-swap on the commit its removal proved,
// never otherwise) once the tree is gone. It rests on the fact recorded at
// create (Record.BranchOrigin), never on the branch's name:
//
//   - a worktree custody made on a branch it created (its own
//     <prefix><id>, or one named with new --branch) owns it;
//   - a tree made on an existing branch (new --checkout), and an adopted
//     tree, never own theirs;
//   - a record written before the fact was recorded keeps the rule it was
//     written under: custody made it, and its branch is exactly
//     pol.BranchPrefix+id.
func BranchOwned(rec Record, pol Policy) bool {
	if rec.Origin != OriginCreated || rec.Branch == "" {
		return false
	}
	switch rec.BranchOrigin {
	case BranchOriginCreated:
		return true
	case "":
		return rec.Branch == pol.BranchPrefix+rec.ID
	}
	return false
}

// BranchKeptReason is why rec's branch stays when its tree is removed: "" when
// custody created it (BranchOwned), so a proven removal deletes it by
// compare-and-swap, or when the tree has no branch; BranchNotCreated
// otherwise.
func BranchKeptReason(rec Record, pol Policy) string {
	if rec.Branch == "" || BranchOwned(rec, pol) {
		return ""
	}
	return BranchNotCreated
}

// branchRecorded reports whether rec's branch is the one a created tree
// was made on by the record's own rule: any branch when the record says
// where its branch came from, else (a record written before that) only
// pol.BranchPrefix+id.
func branchRecorded(rec Record, pol Policy) bool {
	if rec.Branch == "" {
		return false
	}
	return rec.BranchOrigin != "" || rec.Branch == pol.BranchPrefix+rec.ID
}
