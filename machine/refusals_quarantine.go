package machine

import "fmt"

// The refusals of a removal through quarantine: the tree is moved aside,
// checked against its manifest and deleted, or moved back and kept.

// QuarantineUnlistedRefusal refuses removing the tree at path, whose
// content cannot be listed for its manifest (err); nothing was removed.
func QuarantineUnlistedRefusal(path string, err error) *Refusal {
	return &Refusal{Code: CodeRemovalFailed, Path: path, Retry: "custody plan",
		Message: fmt.Sprintf("what %s may hold cannot be listed, so nothing was removed: %v", path, err)}
}

// QuarantineMoveFailedRefusal reports that the tree at path could not be
// moved into quarantine q (err); nothing was removed.
func QuarantineMoveFailedRefusal(path, q string, err error) *Refusal {
	return &Refusal{Code: CodeRemovalFailed, Path: path, Retry: "custody plan",
		Message: fmt.Sprintf("%s could not be moved into quarantine %s, so nothing was removed: %v", path, q, err)}
}

// QuarantineUnobservedRefusal reports that the quarantine q record id's
// interrupted removal left cannot be observed (err).
func QuarantineUnobservedRefusal(q, id string, err error) *Refusal {
	return &Refusal{Code: CodeRemovalFailed, Path: q, Retry: "custody resume",
		Message: fmt.Sprintf("the quarantine %s of %s cannot be observed: %v", q, id, err)}
}

// nothingDeleted says that a stopped removal deleted nothing: of the tree,
// or (settling what a stopped run left) nothing more than that run did.
func nothingDeleted(settling bool) string {
	if settling {
		return " with nothing more of it deleted than the run stopped before had deleted"
	}
	return " with nothing of it deleted"
}

// QuarantineChangedRefusal reports that stray appeared or changed in
// record id's quarantine after the final observation (why), so the tree
// was moved back, to where, before anything (more) of it was deleted.
// settling is set when a run stopped before may have deleted some of it.
func QuarantineChangedRefusal(stray, id, why, where string, settling bool) *Refusal {
	return &Refusal{Code: CodeQuarantineChanged, Path: stray, Retry: "custody plan",
		Message: fmt.Sprintf("%s appeared or changed in %s after the final observation (%s); the tree was kept at %s%s", stray, id, why, where, nothingDeleted(settling))}
}

// QuarantineInUseRefusal reports that processes ps use record id's
// quarantine (or, with scanErr, that processes could not be observed), so
// the tree was moved back, to where, with nothing of it deleted.
// returnErr is why it could not be moved back, if it could not.
func QuarantineInUseRefusal(id, where string, ps []Process, scanErr, returnErr error) *Refusal {
	what := ""
	if scanErr != nil {
		what = scanErr.Error()
	} else {
		p := ps[0]
		what = fmt.Sprintf("process %d (%s) uses it through its %s", p.PID, p.Command, p.Via)
		if len(ps) > 1 {
			what += fmt.Sprintf(", and %d more", len(ps)-1)
		}
	}
	if returnErr != nil {
		what += "; " + returnErr.Error()
	}
	return &Refusal{Code: CodeInUse, Path: where, Retry: "custody plan",
		Message: fmt.Sprintf("%s is in use (%s), so nothing of it was deleted; the tree was kept at %s. End what uses it, then plan again", id, what, where)}
}

// StoppedRemoval is what a deletion in quarantine that stopped part way
// leaves to say.
type StoppedRemoval struct {
	// ID is the record whose tree it was.
	ID string
	// Entry is the entry that stopped it, where it is now; Where is where
	// the tree is now (its path, or the quarantine when that is taken).
	Entry, Where string
	// Err is why Entry could not be deleted; when nil, Entry is not what
	// the check saw, and Why says how.
	Err error
	Why string
	// Proof is the removal intent's proof: an archive's holds every
	// deleted file byte for byte.
	Proof *Proof
	// Deleted counts the files the deletion had deleted, Tracked those of
	// them that are tracked, and Left the tracked ones that could not be
	// restored.
	Deleted, Tracked int
	Left             []string
	// Settling is set when a run stopped before had deleted some of the
	// tree.
	Settling bool
}

// StoppedRemovalRefusal reports a deletion in quarantine that stopped, the
// tree put back: removal-failed when an entry could not be deleted,
// quarantine-changed when one was not what the check saw. It says how
// many files were deleted, that each was HEAD's (or the archive's), and
// whether all were restored; when some were not, the retry restores them.
func StoppedRemovalRefusal(s StoppedRemoval) *Refusal {
	ref := &Refusal{Path: s.Entry, Retry: "custody plan"}
	var msg, then string
	if s.Err != nil {
		ref.Code = CodeRemovalFailed
		msg = fmt.Sprintf("%s could not be deleted (%v), so the removal of %s stopped; the tree was put back at %s", s.Entry, s.Err, s.ID, s.Where)
		then = "custody resume"
	} else {
		ref.Code = CodeQuarantineChanged
		msg = fmt.Sprintf("%s appeared or changed in %s after the final observation (%s); the tree was kept at %s", s.Entry, s.ID, s.Why, s.Where)
		then = "custody plan"
	}
	each := "identical to HEAD"
	if p := s.Proof; p != nil && p.Kind == ProofArchive {
		each = "held byte for byte by archive " + p.Ref
	}
	switch {
	case s.Deleted == 0:
		msg += nothingDeleted(s.Settling)
	case s.Tracked == 0:
	case len(s.Left) == 0:
		msg += fmt.Sprintf(", and the %d tracked files its removal had already deleted (each %s) were restored from its index", s.Tracked, each)
	default:
		msg += fmt.Sprintf("; its removal had already deleted %d tracked files (each %s), and %d of them could not be restored, e.g. %s: the retry restores them", s.Tracked, each, len(s.Left), s.Left[0])
		ref.Retry = RestoreRetry(s.Where, then)
	}
	if n := s.Deleted - s.Tracked; n > 0 {
		msg += fmt.Sprintf("; %d files of build output were deleted with it and are not restored (a build makes them again)", n)
	}
	if s.Err != nil {
		msg += ". Make it deletable (chattr -i, unmount, fix its permissions), then plan again"
	}
	ref.Message = msg
	return ref
}
