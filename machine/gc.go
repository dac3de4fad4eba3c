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
}

// DecideGC decides whether orphan GC may destroy r: only when its worktree
// is provably gone (admin key absent), nothing live holds its path or
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
	case f.AdminPresent:
		return keep(CodeWorktreeLive, "the worktree of %s is still registered with git (admin key %s); a locked or unmounted worktree is live", r.ID, r.AdminKey)
	case f.PathLive:
		return keep(CodeWorktreeLive, "a live worktree now holds %s (path recycled)", r.Path)
	case f.HandleLive:
		return keep(CodeWorktreeLive, "a live worktree holds the handle %s (handle recycled)", r.Handle)
	case !r.GC:
		return keep(CodeGCDisabled, "resource %s's worktree is gone, but it has gc = false; destroy %s yourself", r.ID, r.Handle)
	case Unexpanded(r.Destroy) != "":
		return keep(CodeUnexpandedToken, "the frozen destroy command of %s still carries %s; it is never half-run", r.ID, Unexpanded(r.Destroy))
	}
	return GCVerdict{Reclaim: true}
}
