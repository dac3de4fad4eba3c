package machine

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Action is what a plan item will do.
type Action string

// Plan actions.
const (
	ActionRemove Action = "remove"
	ActionKeep   Action = "keep"
	// ActionDestroy destroys an orphaned resource.
	ActionDestroy Action = "destroy"
	// ActionSettle settles the record of a tree that vanished outside
	// custody: nothing is removed; its branch goes only when proven, and
	// its resources are destroyed (decision 0226).
	ActionSettle Action = "settle"
)

// Policy is the part of the project configuration decisions depend on.
type Policy struct {
	// BranchPrefix is prepended to a worktree id to name its branch.
	BranchPrefix string
}

// DefaultPolicy returns the policy used when the project configures none.
func DefaultPolicy() Policy { return Policy{BranchPrefix: "custody/"} }

// Verdict is the assessment of one record over one observation.
type Verdict struct {
	Action   Action    `json:"action"`
	Proof    *Proof    `json:"proof,omitempty"`
	Refusals []Refusal `json:"refusals,omitempty"`
	// Settlement is set with ActionSettle: what was proven of the
	// vanished tree's commits and what becomes of its branch.
	Settlement *Settlement `json:"settlement,omitempty"`
}

// Primary returns the first refusal, or nil when there is none.
func (v Verdict) Primary() *Refusal {
	if len(v.Refusals) == 0 {
		return nil
	}
	r := v.Refusals[0]
	return &r
}

// AddRefusals is rs with each refusal of more appended that rs does not
// already hold. Every place that gathers a verdict's reasons adds them
// through it, so a reason two checks (or two assessments of one tree)
// both find is named once.
func AddRefusals(rs []Refusal, more ...Refusal) []Refusal {
	for _, r := range more {
		if !slices.Contains(rs, r) {
			rs = append(rs, r)
		}
	}
	return rs
}

// Owned reports whether positive evidence shows custody created the tree:
// a record made by custody in this store, the ready marker in the exact git
// admin entry holding the record id, and the tree on the branch it was
// made on (or detached). The branch is the recorded one, whatever its name
// (new --branch, new --checkout); a record written before the branch's
// origin was recorded keeps its rule, the branch equal to prefix+id.
// Owning the tree is not owning its branch (BranchOwned). Adopted records
// are owned for removal (a person enrolled them by exact path) but never
// for branch deletion.
func Owned(rec Record, obs WorktreeObservation, pol Policy) bool {
	if obs.Marker != rec.ID {
		return false
	}
	switch rec.Origin {
	case OriginCreated:
		return obs.AdminKey == rec.ID && rec.AdminKey == rec.ID && branchRecorded(rec, pol) &&
			(obs.Branch == rec.Branch || obs.Detached)
	case OriginAdopted:
		return obs.AdminKey == rec.AdminKey
	}
	return false
}

// Removable reports whether the record is in a state plan assesses: finished,
// or active with an expired lease.
func Removable(rec Record, lease *Lease, now time.Time) bool {
	switch rec.State {
	case StateFinished:
		return true
	case StateActive:
		return lease != nil && !lease.Live(now)
	}
	return false
}

// Assess decides whether the record's worktree may be removed, over a fresh
// observation. It collects every reason to keep, so a person sees them all.
// Assess is pure: time is a parameter.
func Assess(rec Record, obs WorktreeObservation, pol Policy, now time.Time) Verdict {
	var rs []Refusal
	add := func(r Refusal) { rs = AddRefusals(rs, r) }
	plan := "custody plan"
	p := rec.Path

	if rec.Intent != nil {
		add(refuse(CodeIntentPending, p, "custody resume", "%s carries an unfinished %s intent (a command was interrupted, or is still running)", rec.ID, rec.Intent.Kind))
		return keep(rs)
	}
	// A tree gone from its path is assessed whatever the record's state
	// (a vanished one is settled, one git still registers is to be
	// pruned), unless a live lease says a session still holds it or git
	// keeps it locked (an unmounted disk: it is live).
	goneActive := rec.State == StateActive && obs.PathState == PathAbsent && !obs.Locked && !obs.Lease.Live(now)
	if !Removable(rec, obs.Lease, now) && !goneActive {
		if obs.Lease.Live(now) {
			add(refuse(CodeLeaseLive, p, plan, "%s is leased by %s until %s", rec.ID, obs.Lease.Holder, obs.Lease.Expires.UTC().Format(time.RFC3339)))
		} else {
			add(refuse(CodeNotFinished, p, CommandOn([]string{"custody", "finish"}, rec.ID), "%s is %s; finish it when its work is done", rec.ID, rec.State))
		}
		return keep(rs)
	}
	if obs.Lease.Live(now) {
		add(refuse(CodeLeaseLive, p, plan, "%s is leased by %s until %s", rec.ID, obs.Lease.Holder, obs.Lease.Expires.UTC().Format(time.RFC3339)))
	}
	// A command that ran out of time leaves part of the tree unknown:
	// named first, each with what it was and how long it had. The
	// status-failed and proof-failed it caused are not repeated.
	timedOut := len(obs.TimedOut) > 0
	for _, t := range obs.TimedOut {
		add(TimedOutRefusal(p, t, "plan"))
	}
	switch obs.PathState {
	case PathUnknown, "":
		add(refuse(CodePathUnknown, p, plan, "%s could not be observed: %s", p, obs.PathError))
		return keep(rs)
	case PathAbsent:
		if obs.MovedTo != "" {
			add(refuse(CodeMoved, p, "git worktree move "+QuoteArg(obs.MovedTo)+" "+QuoteArg(p),
				"git moved %s to %s; custody does not follow a move, so move it back to assess it", p, obs.MovedTo))
			return keep(rs)
		}
		if len(obs.OtherEntries) > 0 {
			// git prune would drop them with their HEADs: they are named
			// first, with a way to keep what they hold.
			add(OtherEntriesRefusal(rec, obs.OtherEntries, plan))
			return keep(rs)
		}
		// Gone already (deleted by hand and pruned): custody removes
		// nothing, and settles the record saying what was proven
		// (DecideSettlement).
		if Vanished(obs) && len(rs) == 0 {
			s, r := DecideSettlement(rec, obs, pol)
			if r != nil {
				add(*r)
				return keep(rs)
			}
			v := Verdict{Action: ActionSettle, Settlement: s}
			if s.Proven {
				v.Proof = obs.Proof
			}
			return v
		}
		if !Vanished(obs) {
			add(missingRefusal(rec, obs))
		}
		return keep(rs)
	}
	if obs.IsSymlink || !obs.IsDir {
		add(refuse(CodeSymlink, p, plan, "%s is not a plain directory (a symlink or file replaced it); put the tree's own directory back at the path", p))
		return keep(rs)
	}
	if !obs.Registered {
		add(refuse(CodeNotRegistered, p, "git worktree list", "%s exists but git does not register it as a worktree (its admin entry is gone); custody keeps it, and what becomes of its files is yours to decide", p))
		return keep(rs)
	}
	if obs.AdminKey != rec.AdminKey {
		add(refuse(CodeAdminKeyMismatch, p, plan, "git registers %s under admin key %q, not %q", p, obs.AdminKey, rec.AdminKey))
	}
	if len(obs.OtherEntries) > 0 {
		add(OtherEntriesRefusal(rec, obs.OtherEntries, plan))
	}
	if rec.Dev != 0 && (obs.Dev != rec.Dev || obs.Ino != rec.Ino) {
		add(refuse(CodeIdentityChanged, p, reRecord(rec), "%s is a different directory (device+inode %d:%d, recorded %d:%d), as when a tree is restored by copy; if it is the same tree, finishing it again records the directory it is now", p, obs.Dev, obs.Ino, rec.Dev, rec.Ino))
	}
	if !Owned(rec, obs, pol) {
		add(notOwnedRefusal(rec, obs))
	}
	if obs.Locked {
		add(refuse(CodeLocked, p, "git worktree unlock "+QuoteArg(p), "%s is locked: %s", p, orNone(obs.LockReason)))
	}
	if obs.Prunable {
		add(refuse(CodePrunable, p, "git worktree repair", "git reports %s as prunable: its .git file is missing or does not lead back to its admin entry; git worktree repair, run in the main checkout, rewrites it", p))
	}
	if obs.StatusErr != "" {
		if !timedOut {
			add(refuse(CodeStatusFailed, p, plan, "git status failed in %s: %s", p, obs.StatusErr))
		}
	} else {
		st, _ := WithoutBuildOutput(obs)
		// A nested repository is untracked or ignored content too, and a
		// sparse index hides entries from a stash: stashing is not the
		// safe step then, so plan is the retry. Untracked and ignored
		// files are stashed by name, so build output stays.
		stashChanges := stash(p)
		stashUntracked := stashPaths(p, "--include-untracked", st.Untracked)
		stashIgnored := stashPaths(p, "--all", st.Ignored)
		if nestedRepository(obs.Hidden) || !ownRepository(rec, obs) {
			stashChanges, stashUntracked, stashIgnored = plan, plan, plan
		}
		if len(st.Unmerged) > 0 {
			add(refuse(CodeUnmerged, p, plan, "%s has %d unresolved conflicts: %s; resolve and commit them, or abort the operation that made them", p, len(st.Unmerged), listSome(st.Unmerged, 3)))
		}
		if len(st.Changed) > 0 {
			add(refuse(CodeTrackedChanges, p, stashChanges, "%s has %d changed tracked files (%d staged): %s; commit them, or stash them (the stash is kept in the repository)", p, len(st.Changed), st.Staged, listSome(st.Changed, 3)))
		}
		if len(st.Untracked) > 0 {
			add(refuse(CodeUntrackedFiles, p, stashUntracked, "%s has %d untracked files: %s; commit them, or stash them (the stash is kept in the repository)", p, len(st.Untracked), listSome(st.Untracked, 3)))
		}
		if len(st.Ignored) > 0 {
			add(refuse(CodeIgnoredFiles, p, stashIgnored, "%s has %d ignored files that removal would delete: %s; move them out, or stash them (the stash is kept in the repository)", p, len(st.Ignored), listSome(st.Ignored, 3)))
		}
	}
	_, content := WithoutBuildOutput(obs)
	rs = AddRefusals(rs, contentRefusals(p, content)...)
	for _, h := range obs.Hidden {
		retry := plan
		if ownRepository(rec, obs) && (h.Code != CodeStagedDiffers || !nestedRepository(obs.Hidden)) {
			retry = hiddenRetry(p, rec.ID, h)
		}
		add(refuse(h.Code, h.Path, retry, "%s: %s", h.Path, orNone(h.Detail)))
	}
	for _, pr := range obs.InUse {
		add(refuse(CodeInUse, p, plan, "process %d (%s) uses %s via its %s; end it or move it out of the tree first", pr.PID, pr.Command, p, pr.Via))
	}
	if obs.Head == "" {
		add(refuse(CodeHeadUnknown, p, plan, "HEAD of %s could not be read", p))
		return keep(rs)
	}
	if !obs.Proof.Covers(obs.Head) && (obs.ProofErr == "" || !timedOut) {
		add(proofRefusal(rec, obs))
	}
	if len(rs) > 0 {
		return keep(rs)
	}
	return Verdict{Action: ActionRemove, Proof: obs.Proof}
}

// proofRefusal explains why no proof was found for obs.Head.
func proofRefusal(rec Record, obs WorktreeObservation) Refusal {
	p := rec.Path
	short := Abbrev(obs.Head, ShortCommit)
	switch {
	case obs.ProofErr != "":
		return refuse(CodeProofFailed, p, "custody plan", "looking for a proof of %s failed: %s", short, obs.ProofErr)
	case len(obs.Remote.Unavailable) > 0:
		f := obs.Remote.Unavailable[0]
		return refuse(CodeRemoteUnavailable, p, lsRemote(f.Remote), "remote %s did not answer (%s); whether %s is published is unknown", f.Remote, f.Error, short)
	case len(obs.Remote.Remotes) == 0:
		return refuse(CodeNoRemote, p, "custody plan", "the repository has no remote, so nothing proves %s is published; add the remote your work is pushed to (git remote add origin URL)", short)
	case obs.Detached:
		name := rec.Branch
		if name == "" {
			name = rec.ID
		}
		ref := "refs/heads/" + name
		if cmd, to, ok := pushTo(p, obs.Remote, "HEAD:"+ref, false); ok {
			return refuse(CodeDetachedHead, p, cmd,
				"%s has a detached HEAD %s that no remote advertises; push it to a branch (here %s on %s)", p, short, ref, to)
		}
		return refuse(CodeDetachedHead, p, "custody plan",
			"%s has a detached HEAD %s that no remote advertises, and %s; push it to a branch of a repository a remote custody reads is read from", p, short, noPush(obs.Remote))
	}
	branch := obs.Branch
	if branch == "" {
		branch = rec.Branch
	}
	if cmd, to, ok := pushTo(p, obs.Remote, branch, true); ok {
		return refuse(CodeUnpushedCommits, p, cmd,
			"%s is on no ref any remote advertises; push %s to %s first", short, branch, to)
	}
	return refuse(CodeUnpushedCommits, p, "custody plan",
		"%s is on no ref any remote advertises, and %s; push %s to a repository a remote custody reads is read from", short, noPush(obs.Remote), branch)
}

// noPush says why no push is advised.
func noPush(ev RemoteEvidence) string {
	if ev.Push != nil && ev.Push.Why != "" {
		return ev.Push.Why
	}
	return "no remote's push lands where a remote custody reads is read from"
}

// lsRemote is the command that asks remote what custody asked it.
func lsRemote(remote string) string {
	return CommandOn([]string{"git", "ls-remote", "--refs"}, remote)
}

// contentRefusals renders unaccounted content as one refusal per code, in
// the order the codes first appear; the refusal's path is the entry's own
// when there is one, the tree's otherwise.
func contentRefusals(tree string, us []Unaccounted) []Refusal {
	var order []Code
	by := map[Code][]Unaccounted{}
	for _, u := range us {
		if by[u.Code] == nil {
			order = append(order, u.Code)
		}
		by[u.Code] = append(by[u.Code], u)
	}
	var rs []Refusal
	for _, c := range order {
		list := by[c]
		names := make([]string, len(list))
		for i, u := range list {
			names[i] = u.Path
		}
		at := tree
		if len(list) == 1 {
			at = strings.TrimSuffix(tree, "/") + "/" + strings.TrimSuffix(list[0].Path, "/")
		}
		var what string
		switch c {
		case CodeContentDiffers:
			what = "tracked files whose bytes or mode on disk are not HEAD's, though git status calls them clean"
		case CodeContentUnreadable:
			what = "entries that could not be read to account for them"
		default:
			what = "entries HEAD does not track that git status did not report"
		}
		msg := fmt.Sprintf("%s has %d %s: %s", tree, len(list), what, listSome(names, 3))
		if len(list) == 1 && list[0].Detail != "" {
			msg += " (" + list[0].Detail + ")"
		}
		rs = append(rs, Refusal{Code: c, Path: at, Retry: "custody plan", Message: msg})
	}
	return rs
}

func keep(rs []Refusal) Verdict { return Verdict{Action: ActionKeep, Refusals: rs} }

func orNone(s string) string {
	if s == "" {
		return "(no reason given)"
	}
	return s
}
