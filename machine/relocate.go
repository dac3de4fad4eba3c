package machine

import (
	"fmt"
	"strings"
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
	show := CommandOn([]string{"custody", "show"}, rec.ID)
	status := "git -C " + QuoteArg(p) + " status"
	r := func(code Code, path, retry, format string, args ...any) *Refusal {
		ref := refuse(code, path, retry, "%s", EscapeControl(fmt.Sprintf(format, args...))+"; nothing was moved")
		return &ref
	}
	switch {
	case rec.Intent != nil:
		return r(CodeIntentPending, p, "custody resume", "%s carries an unfinished %s intent; resume settles it first", rec.ID, rec.Intent.Kind)
	case rec.State == StateFinished:
		return r(CodeWrongState, p, CommandOn([]string{"custody", "reopen"}, rec.ID), "%s is finished; only an active tree is moved (reopen it first)", rec.ID)
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
	case len(obs.TimedOut) > 0:
		ref := TimedOutRefusal(p, obs.TimedOut[0], strings.TrimPrefix(retry, "custody "))
		ref.Message = EscapeControl(ref.Message) + "; nothing was moved"
		return &ref
	case obs.StatusErr != "":
		return r(CodeStatusFailed, p, status, "git status failed in %s: %s", p, obs.StatusErr)
	case len(obs.Status.Unmerged) > 0:
		return r(CodeUnmerged, p, status, "%s has %d unresolved conflicts: %s; resolve and commit them first", p, len(obs.Status.Unmerged), listSome(obs.Status.Unmerged, 3))
	case len(obs.Status.Changed) > 0:
		return r(CodeTrackedChanges, p, status, "%s has %d changed tracked files: %s; commit or stash them first, only a clean tree is moved", p, len(obs.Status.Changed), listSome(obs.Status.Changed, 3))
	case len(obs.Status.Untracked) > 0:
		return r(CodeUntrackedFiles, p, status, "%s has %d untracked files: %s; commit, stash or move them out first, only a clean tree is moved", p, len(obs.Status.Untracked), listSome(obs.Status.Untracked, 3))
	case len(obs.Status.Ignored) > 0:
		return r(CodeIgnoredFiles, p, status+" --ignored", "%s has %d ignored files: %s; move them out first, only a clean tree is moved", p, len(obs.Status.Ignored), listSome(obs.Status.Ignored, 3))
	case len(obs.Hidden) > 0:
		h := obs.Hidden[0]
		if h.Code == CodeSubmodules {
			// git worktree move itself refuses such a tree, and custody
			// never forces it.
			return r(h.Code, h.Path, "git -C "+QuoteArg(p)+" submodule status", "%s holds submodule repositories (%s); git worktree move does not move a tree holding submodules, and custody never forces it: the tree stays at %s", p, h.Path, p)
		}
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

// RelocatedTree reports whether o observes the tree the relocation intent
// in was made for: HEAD still the intent's commit, or the very directory
// the intent observed (the same device and inode, which a rename keeps).
// A commit made in the tree while custody was not running does not make
// it another tree, so resume settles such a relocation instead of leaving
// it stuck (decision 0125). An intent without an identity has only its
// HEAD.
func RelocatedTree(in *Intent, o WorktreeObservation) bool {
	return in != nil && (o.Head == in.Commit || sameDirectory(in, o))
}

// sameDirectory reports whether o observes, as a plain directory, the very
// directory (device and inode) the intent in observed.
func sameDirectory(in *Intent, o WorktreeObservation) bool {
	return in != nil && in.Dev != 0 && in.Ino != 0 && o.PathState == PathPresent && o.IsDir && !o.IsSymlink &&
		o.Dev == in.Dev && o.Ino == in.Ino
}

// RelocationNotMoved reports whether a relocation's move did not happen
// and the tree is where it was: git registers the source and not the
// destination, and either the very directory the intent observed is at
// the source, or nothing is at the destination and the source's HEAD is
// the intent's. A directory at the destination while the source is not
// the one observed (the tree moved there by hand, unknown to git) is not
// a move that did not happen (decision 0127).
func RelocationNotMoved(in *Intent, src, dst WorktreeObservation) bool {
	return src.Registered && !dst.Registered &&
		(sameDirectory(in, src) || (dst.PathState == PathAbsent && RelocatedTree(in, src)))
}

// ResourcesBlockRelocation returns the refusal that keeps rec where it is
// while it has ledger entries (rs: those not tombstoned), or nil when it
// has none. Their create, destroy and ensure commands were frozen with the
// tree's path: moved, the tree would have its resources destroyed with a
// path it is no longer at (decision 0126). It is pure.
func ResourcesBlockRelocation(rec Record, rs []Resource) *Refusal {
	if len(rs) == 0 {
		return nil
	}
	names := make([]string, 0, len(rs))
	for _, x := range rs {
		names = append(names, x.Name+" ("+string(x.State)+")")
	}
	ref := refuse(CodeResourcesFrozen, rec.Path, "custody resource list", "%s",
		EscapeControl(fmt.Sprintf("%s has %d resources whose commands were frozen with its path %s: %s; a tree is not moved while its resources would be destroyed at a path it left (to move it anyway, destroy them first with custody -C %s teardown); nothing was moved",
			rec.ID, len(rs), rec.Path, listSome(names, 3), QuoteArg(rec.Path))))
	return &ref
}

// RelocationHalfMoved reports whether a relocation's tree is at its
// destination though git does not register it there yet: nothing at the
// source, and at the destination, unregistered, the very directory the
// intent observed. A `git worktree move` killed between its rename and
// its rewrite of the admin entry leaves this, and so does a person who
// renamed the tree there by hand; `git worktree repair` then registers it
// where it is (decision 0127).
func RelocationHalfMoved(in *Intent, src, dst WorktreeObservation) bool {
	return src.PathState == PathAbsent && !dst.Registered && sameDirectory(in, dst)
}

// RelocationRepair completes ref, resume's refusal of a relocation no rule
// fits (rec relocating, src and dst the observations of the intent's
// source and destination), with the git command that puts the tree where
// a rule fits, when the observations show one; otherwise ref is returned
// as it is. The tree moved by hand (a rename, so the very directory the
// intent observed) to one end of the relocation, while git still
// registers it at the other where nothing is, is registered where it is
// by `git worktree repair` (at the destination resume does that itself:
// RelocationHalfMoved); the tree git moved on to a third place is moved
// on to the destination. Either way custody resume then settles the
// relocation (decision 0127). It is pure.
func RelocationRepair(rec Record, src, dst WorktreeObservation, ref *Refusal) *Refusal {
	in := rec.Intent
	if ref == nil || in == nil || in.Kind != IntentRelocation {
		return ref
	}
	byHand := func(o WorktreeObservation) bool { return !o.Registered && sameDirectory(in, o) }
	out := *ref
	switch {
	case byHand(src) && dst.PathState == PathAbsent:
		out.Path, out.Retry = rec.Path, "git worktree repair "+QuoteArg(rec.Path)
		out.Message += EscapeControl(fmt.Sprintf("; the tree is back at %s though git does not register it there: %s registers it where it is, then custody resume steps the relocation back",
			rec.Path, out.Retry))
	case src.PathState == PathAbsent && dst.PathState == PathAbsent && src.MovedTo != "" && src.MovedTo == dst.MovedTo:
		out.Path, out.Retry = src.MovedTo, "git worktree move "+QuoteArg(src.MovedTo)+" "+QuoteArg(in.Destination)
		out.Message += EscapeControl(fmt.Sprintf("; git registers the tree at %s: %s puts it at the destination, then custody resume completes the relocation",
			src.MovedTo, out.Retry))
	default:
		return ref
	}
	return &out
}
