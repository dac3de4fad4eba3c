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
	// RecordLive: the store holds the entry's worktree record, it is not
	// tombstoned, and its tree has not vanished (machine.Vanished over a
	// fresh observation of the record). A pruned admin entry alone never
	// makes a resource an orphan: the record, or custody's own
	// observation of its tree, is custody's word that the worktree is gone.
	RecordLive bool
	// RecordBusy: the worktree record carries an intent (a command on it
	// was interrupted, or is running): resume settles it first.
	RecordBusy bool
	// Lease is the live lease on the worktree record whose tree vanished:
	// a session says it still holds the tree (nil when there is none).
	Lease *Lease
	// RecordUnknown: the worktree record could not be read.
	RecordUnknown bool
	// TreePresent: something is on disk at the entry's exact path.
	TreePresent bool
	// TreeUnknown: the entry's path could not be observed (lstat failed
	// other than ENOENT).
	TreeUnknown bool
}

// DecideGC decides whether orphan GC may destroy r: only when its worktree
// is provably gone (admin key absent, its record tombstoned, absent, or
// live with a tree that vanished and no live lease, nothing on disk at its
// exact path), nothing live holds its path or handle, gc is not false, and
// its frozen destroy carries no token. A vanished tree's resource holds
// none of its commits: it is reclaimed whatever was proven of them, and
// the record is settled on its own (decision 0226).
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
	case f.AdminPresent && !f.TreePresent:
		v := keep(CodeWorktreeLive, "%s, the worktree of %s, is gone from disk but git still registers it (admin key %s); if it was moved, run git worktree repair with its new path; else remove that one registration (git worktree remove leaves a locked worktree alone: locked, it is live), then GC reclaims the resource", r.Path, r.ID, r.AdminKey)
		v.Refusal.Retry = UnregisterCommand(r.Path)
		return v
	case f.AdminPresent:
		return keep(CodeWorktreeLive, "the worktree of %s is still registered with git (admin key %s); a locked or unmounted worktree is live", r.ID, r.AdminKey)
	case f.RecordBusy:
		v := keep(CodeInProgress, "the worktree record %s of %s carries an unfinished intent; resume settles it first", r.Worktree, r.ID)
		v.Refusal.Retry = "custody resume"
		return v
	case f.Lease != nil:
		v := keep(CodeLeaseLive, "the tree of %s is gone, but %s holds a lease on %s until %s; GC reclaims the resource once the session releases it or it expires",
			r.ID, f.Lease.Holder, r.Worktree, f.Lease.Expires.UTC().Format("2006-01-02T15:04:05Z"))
		v.Refusal.Retry = "custody resource gc"
		return v
	case f.PathLive:
		return keep(CodeWorktreeLive, "a live worktree now holds %s (path recycled)", r.Path)
	case f.HandleLive:
		return keep(CodeWorktreeLive, "a live worktree holds the handle %s (handle recycled)", r.Handle)
	case f.TreePresent:
		v := keep(CodeWorktreeLive, "%s, the worktree path of %s, is still present (git does not register it); what stands there is yours to keep or move away, and GC reclaims the resource once nothing is there", r.Path, r.ID)
		v.Refusal.Retry = "custody resource gc"
		return v
	case f.RecordLive:
		v := keep(CodeWorktreeLive, "the worktree record %s of %s is live and its tree has not vanished (git still knows of it, or something stands at its path); a pruned admin entry alone does not make its resources orphans", r.Worktree, r.ID)
		v.Refusal.Retry = "custody plan"
		return v
	case !r.GC:
		return keep(CodeGCDisabled, "resource %s's worktree is gone, but it has gc = false; destroy %s yourself", r.ID, r.Handle)
	case Unexpanded(r.Destroy) != "":
		return keep(CodeUnexpandedToken, "the frozen destroy command of %s still carries %s; it is never half-run", r.ID, Unexpanded(r.Destroy))
	}
	return GCVerdict{Reclaim: true}
}
