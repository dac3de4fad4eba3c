package machine

import "fmt"

// GCVerdict is orphan GC's decision about one ledger entry.
type GCVerdict struct {
	Reclaim bool     `json:"reclaim"`
	Refusal *Refusal `json:"refusal,omitempty"`
}

// GCFacts is what orphan GC observed about one ledger entry's worktree.
type GCFacts struct {
	// AdminPresent: <common>/worktrees/<admin key> exists (a locked or
	// unmounted worktree keeps it and is live).
	AdminPresent bool
	// AdminUnknown: the admin entry could not be observed.
	AdminUnknown bool
	// PathLive: a live worktree is registered at the entry's path.
	PathLive bool
	// HandleLive: another live ledger entry (of a live worktree) holds the
	// same handle.
	HandleLive bool
	// HolderAlive: a live custody process holds the entry's intent.
	HolderAlive bool
	// RecordLive: the store holds the entry's worktree record and it is not
	// tombstoned. A pruned admin entry alone never makes a resource an
	// orphan: the record is custody's word that the worktree is gone.
	RecordLive bool
	// RecordUnknown: the worktree record could not be read.
	RecordUnknown bool
	// TreePresent: something is on disk at the entry's exact path.
	TreePresent bool
	// TreeUnknown: the entry's path could not be observed (lstat failed
	// other than ENOENT).
	TreeUnknown bool
}

// DecideGC decides whether orphan GC may destroy r: only when its worktree
// is provably gone (admin key absent, its record tombstoned or absent,
// nothing on disk at its exact path), nothing live holds its path or
// handle, gc is not false, and its frozen destroy carries no token.
func DecideGC(r Resource, f GCFacts) GCVerdict {
	keep := func(code Code, format string, args ...any) GCVerdict {
		return GCVerdict{Refusal: &Refusal{Code: code, Path: r.Path, Retry: "custody resource gc --dry-run", Message: fmt.Sprintf(format, args...)}}
	}
	switch {
	case r.State == StateTombstoned:
		return keep(CodeWrongState, "resource %s is already destroyed", r.ID)
	case f.HolderAlive:
		return keep(CodeInProgress, "resource %s is being acted on by a live custody process", r.ID)
	case f.AdminUnknown:
		return keep(CodeObservationFailed, "the admin entry of %s could not be observed", r.ID)
	case f.RecordUnknown:
		return keep(CodeObservationFailed, "the worktree record %s of %s could not be read", r.Worktree, r.ID)
	case f.TreeUnknown:
		return keep(CodeObservationFailed, "%s, the worktree path of %s, could not be observed", r.Path, r.ID)
	case f.AdminPresent:
		return keep(CodeWorktreeLive, "the worktree of %s is still registered with git (admin key %s); a locked or unmounted worktree is live", r.ID, r.AdminKey)
	case f.RecordLive:
		return keep(CodeWorktreeLive, "the worktree record %s of %s is not tombstoned; a pruned admin entry alone does not make its resources orphans", r.Worktree, r.ID)
	case f.PathLive:
		return keep(CodeWorktreeLive, "a live worktree now holds %s (path recycled)", r.Path)
	case f.HandleLive:
		return keep(CodeWorktreeLive, "a live worktree holds the handle %s (handle recycled)", r.Handle)
	case f.TreePresent:
		return keep(CodeWorktreeLive, "%s, the worktree path of %s, is still present", r.Path, r.ID)
	case !r.GC:
		return keep(CodeGCDisabled, "resource %s's worktree is gone, but it has gc = false; destroy %s yourself", r.ID, r.Handle)
	case Unexpanded(r.Destroy) != "":
		return keep(CodeUnexpandedToken, "the frozen destroy command of %s still carries %s; it is never half-run", r.ID, Unexpanded(r.Destroy))
	}
	return GCVerdict{Reclaim: true}
}
