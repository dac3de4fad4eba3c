package machine

import (
	"fmt"
	"time"
)

// RelocationBlock returns the refusal that keeps rec from moving to dest
// over obs (a fresh observation of the tree, with status, hidden state and
// processes) and dest (a fresh observation of the destination), or nil
// when relocationSafe would hold: the record is active without an intent,
// its tree present, registered, clean, unlocked, unleased and used by no
// process, and nothing is at or registered under the destination. retry
// is the command that moves it, for refusals a person settles first. It
// is pure.
func RelocationBlock(rec Record, obs, dest WorktreeObservation, now time.Time, retry string) *Refusal {
	p := rec.Path
	show := "custody show " + QuoteArg(rec.ID)
	status := "git -C " + QuoteArg(p) + " status"
	r := func(code Code, path, retry, format string, args ...any) *Refusal {
		ref := refuse(code, path, retry, "%s", EscapeControl(fmt.Sprintf(format, args...))+"; nothing was moved")
		return &ref
	}
	switch {
	case rec.Intent != nil:
		return r(CodeIntentPending, p, "custody resume", "%s carries an unfinished %s intent; resume settles it first", rec.ID, rec.Intent.Kind)
	case rec.State == StateFinished:
		return r(CodeWrongState, p, "custody reopen "+QuoteArg(rec.ID), "%s is finished; only an active tree is moved (reopen it first)", rec.ID)
	case rec.State != StateActive:
		return r(CodeWrongState, p, show, "%s is %s; only an active tree is moved", rec.ID, rec.State)
	case obs.PathState == PathUnknown:
		return r(CodePathUnknown, p, show, "%s could not be observed: %s", p, obs.PathError)
	case obs.PathState == PathAbsent:
		return r(CodeWorktreeMissing, p, "custody plan", "%s's tree is gone from %s; there is nothing to move", rec.ID, p)
	case !obs.IsDir || obs.IsSymlink:
		return r(CodeSymlink, p, show, "%s is not a plain directory (a symlink or file replaced it)", p)
	case !obs.Registered:
		return r(CodeNotRegistered, p, "git worktree list", "%s exists but git does not register it as a worktree", p)
	case obs.Locked:
		return r(CodeLocked, p, "git worktree unlock "+QuoteArg(p), "%s is locked: %s", p, orNone(obs.LockReason))
	case obs.Lease.Live(now):
		return r(CodeLeaseLive, p, retry, "%s is leased by %s until %s; a leased tree is not moved under its holder", rec.ID, obs.Lease.Holder, obs.Lease.Expires.UTC().Format(time.RFC3339))
	case obs.StatusErr != "":
		return r(CodeStatusFailed, p, status, "git status failed in %s: %s", p, obs.StatusErr)
	case len(obs.Status.Unmerged) > 0:
		return r(CodeUnmerged, p, status, "%s has %d unresolved conflicts: %s; resolve and commit them first", p, len(obs.Status.Unmerged), listSome(obs.Status.Unmerged, 3))
	case len(obs.Status.Changed) > 0:
		return r(CodeTrackedChanges, p, status, "%s has %d changed tracked files: %s; commit or stash them first, only a clean tree is moved", p, len(obs.Status.Changed), listSome(obs.Status.Changed, 3))
	case len(obs.Status.Untracked) > 0:
		return r(CodeUntrackedFiles, p, status, "%s has %d untracked files: %s; commit, stash or move them out first, only a clean tree is moved", p, len(obs.Status.Untracked), listSome(obs.Status.Untracked, 3))
	case len(obs.Status.Ignored) > 0:
		return r(CodeIgnoredFiles, p, status, "%s has %d ignored files: %s; move them out first, only a clean tree is moved", p, len(obs.Status.Ignored), listSome(obs.Status.Ignored, 3))
	case len(obs.Hidden) > 0:
		h := obs.Hidden[0]
		return r(h.Code, h.Path, status, "%s: %s", h.Path, orNone(h.Detail))
	case len(obs.InUse) > 0:
		pr := obs.InUse[0]
		return r(CodeInUse, p, retry, "process %d (%s) uses %s via its %s; end it or move it out of the tree first", pr.PID, pr.Command, p, pr.Via)
	case obs.Head == "":
		return r(CodeHeadUnknown, p, show, "HEAD of %s could not be read", p)
	case dest.PathState == PathUnknown:
		return r(CodePathUnknown, dest.Path, show, "the destination %s could not be observed: %s", dest.Path, dest.PathError)
	case dest.PathState == PathPresent:
		return r(CodeUnsafeTarget, dest.Path, "ls -la "+QuoteArg(dest.Path), "the destination %s already exists; custody moves a tree only to a path where nothing is", dest.Path)
	case dest.Registered:
		return r(CodeUnsafeTarget, dest.Path, "git worktree list", "git already registers a worktree at the destination %s", dest.Path)
	}
	return nil
}
