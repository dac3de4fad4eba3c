package machine

import "context"

// Guards are named top-level functions so their names appear in refusals
// and in the drawn graph. Each reads only its Firing and is side-effect free:
// stateless evaluates guards from CanFire and PermittedTriggers too.

// createTargetsFree holds when nothing occupies the id: no path, no git
// registration or admin entry, the revision resolved to a full commit id,
// and no branch of the name custody is to create (or, for a tree made on
// an existing branch, that branch at the intended commit).
func createTargetsFree(_ context.Context, args ...any) bool {
	f, ok := firingOf(args)
	return ok && f.Intent != nil && f.Intent.Kind == IntentCreate &&
		f.Obs.PathState == PathAbsent && !f.Obs.Registered && !f.Obs.AdminPresent &&
		createBranchReady(f.Record, f.Obs, f.Intent.Commit) && IsFullCommit(f.Intent.Commit) && f.Intent.Path == f.Record.Path
}

// createBranchReady holds when rec's branch is as creating its tree at
// commit needs it: absent when custody is to create it, at commit when the
// tree is made on an existing branch.
func createBranchReady(rec Record, obs WorktreeObservation, commit string) bool {
	if rec.BranchOrigin == BranchOriginExisting {
		return obs.BranchTip != "" && obs.BranchTip == commit
	}
	return obs.BranchTip == ""
}

// branchUntouched holds when a provisioning record's branch shows nothing
// was made on it: absent, or at the commit the tree was to start at. A
// branch that existed before (new --checkout) is not custody's to judge:
// whatever its tip, it is left as it is.
func branchUntouched(rec Record, obs WorktreeObservation, commit string) bool {
	return rec.BranchOrigin == BranchOriginExisting || obs.BranchTip == "" || obs.BranchTip == commit
}

// treeMadeExactly holds when git registers exactly the record's path under
// admin key id, HEAD is the intended commit on the intended branch, and the
// ready marker holds the record id.
func treeMadeExactly(_ context.Context, args ...any) bool {
	f, ok := firingOf(args)
	if !ok {
		return false
	}
	o, r := f.Obs, f.Record
	return o.PathState == PathPresent && o.IsDir && !o.IsSymlink && o.Registered &&
		o.AdminKey == r.ID && o.Head == r.BaseCommit && o.Branch == r.Branch && o.Marker == r.ID
}

// adoptable holds when the named path is a present, registered linked
// worktree whose admin key, checked both ways, is the record's, and whose
// ready marker now holds the record id.
func adoptable(_ context.Context, args ...any) bool {
	f, ok := firingOf(args)
	if !ok {
		return false
	}
	o, r := f.Obs, f.Record
	return r.Origin == OriginAdopted && o.PathState == PathPresent && o.IsDir && !o.IsSymlink && o.Registered &&
		o.AdminKey != "" && o.AdminKey == r.AdminKey && o.Marker == r.ID
}

// nothingMade holds when a provisioning record left no trace: no path, no
// registration, no admin entry, and its branch absent or untouched.
func nothingMade(_ context.Context, args ...any) bool {
	f, ok := firingOf(args)
	if !ok {
		return false
	}
	o := f.Obs
	return o.PathState == PathAbsent && !o.Registered && !o.AdminPresent && branchUntouched(f.Record, o, f.Record.BaseCommit)
}

// noLiveLease holds when no lease holds the worktree at the firing's time.
func noLiveLease(_ context.Context, args ...any) bool {
	f, ok := firingOf(args)
	return ok && !f.Obs.Lease.Live(f.Now)
}

// leaseExpired holds when a lease exists and has expired.
func leaseExpired(_ context.Context, args ...any) bool {
	f, ok := firingOf(args)
	return ok && f.Obs.Lease != nil && !f.Obs.Lease.Live(f.Now)
}

// relocationSafe holds when the tree is clean (fully observed: no command
// ran out of time), unlocked, unleased and used by no process, and the
// destination is free.
func relocationSafe(_ context.Context, args ...any) bool {
	f, ok := firingOf(args)
	if !ok || f.Intent == nil || f.Intent.Kind != IntentRelocation || f.Dest == nil {
		return false
	}
	o := f.Obs
	return o.PathState == PathPresent && o.Registered && o.StatusErr == "" && len(o.TimedOut) == 0 && o.Status.Clean() &&
		len(o.Hidden) == 0 && len(o.InUse) == 0 && !o.Locked && !o.Lease.Live(f.Now) &&
		f.Dest.PathState == PathAbsent && !f.Dest.Registered && o.Head == f.Intent.Commit
}

// onlyDestinationRegistered holds when git reports exactly one of a
// relocation's source and destination, it is the destination, under the
// record's admin key, and it is the tree that was moved (RelocatedTree),
// and lstat finds nothing at the source.
func onlyDestinationRegistered(_ context.Context, args ...any) bool {
	f, ok := firingOf(args)
	if !ok || f.Dest == nil || f.Record.Intent == nil {
		return false
	}
	return relocationArrived(f.Record, f.Obs, *f.Dest)
}

// relocationArrived reports whether the move of rec happened exactly: the
// source is gone (lstat ENOENT) and unregistered, and git registers the
// destination under the record's admin key, and it is the tree that was
// moved (RelocatedTree).
func relocationArrived(rec Record, src, dst WorktreeObservation) bool {
	key := rec.AdminKeyOrID()
	return src.PathState == PathAbsent && !src.Registered && dst.PathState == PathPresent && dst.Registered &&
		dst.AdminKey == key && RelocatedTree(rec.Intent, dst)
}

// onlySourceRegistered holds when the relocation's move did not happen
// (RelocationNotMoved).
func onlySourceRegistered(_ context.Context, args ...any) bool {
	f, ok := firingOf(args)
	if !ok || f.Dest == nil || f.Record.Intent == nil {
		return false
	}
	return RelocationNotMoved(f.Record.Intent, f.Obs, *f.Dest)
}

// removalProven holds when the fresh observation still permits removal
// (Assess says remove, with a proof) and equals the fingerprint plan
// reviewed.
func removalProven(_ context.Context, args ...any) bool {
	f, ok := firingOf(args)
	if !ok || f.Intent == nil || f.Intent.Kind != IntentRemoval || f.Fingerprint == "" {
		return false
	}
	v := Assess(f.Record, f.Obs, f.Policy, f.Now)
	if f.Intent.Proof != nil && f.Intent.Proof.Kind == ProofArchive {
		// An archive proof is found fresh by the caller (it reads the
		// archive and re-hashes the tree) and carried in the intent.
		v = CoverByArchive(v, f.Intent.Proof, nil)
	}
	head := f.Obs.Head
	if f.Obs.PathState == PathAbsent {
		head = f.Record.EffectiveHead() // a tree already gone: its last known commit
	}
	return v.Action == ActionRemove && Fingerprint(f.Obs) == f.Fingerprint && f.Intent.Proof.Covers(head) && f.Intent.Commit == head
}

// absenceVerified holds when lstat said ENOENT and git no longer registers
// the worktree, and the intent is a removal's, not a settlement's (that one
// completes with settled).
func absenceVerified(_ context.Context, args ...any) bool {
	f, ok := firingOf(args)
	return ok && f.Obs.PathState == PathAbsent && !f.Obs.Registered && !f.Obs.AdminPresent &&
		(f.Record.Intent == nil || f.Record.Intent.Settlement == nil)
}

// vanishedSettlement holds when the record's tree vanished and the fresh
// observation still settles it exactly as the intent says: Assess says
// settle with the intent's settlement, on the intent's commit, and the
// observation equals the fingerprint plan reviewed.
func vanishedSettlement(_ context.Context, args ...any) bool {
	f, ok := firingOf(args)
	if !ok || f.Intent == nil || f.Intent.Kind != IntentRemoval || f.Intent.Settlement == nil || f.Fingerprint == "" {
		return false
	}
	v := Assess(f.Record, f.Obs, f.Policy, f.Now)
	return v.Action == ActionSettle && v.Settlement != nil && *v.Settlement == *f.Intent.Settlement &&
		Fingerprint(f.Obs) == f.Fingerprint && f.Intent.Commit == v.Settlement.Head && Vanished(f.Obs)
}

// settlementVerified holds when a settlement's tree is still absent and
// unregistered: settled completes it.
func settlementVerified(_ context.Context, args ...any) bool {
	f, ok := firingOf(args)
	return ok && f.Record.Intent != nil && f.Record.Intent.Settlement != nil &&
		f.Obs.PathState == PathAbsent && !f.Obs.Registered && !f.Obs.AdminPresent
}

// treeIntact holds when a removing record's tree is the one its intent
// recorded and nothing of it has been removed: the same directory, still
// registered, the same HEAD, and no tracked file missing. A person may have
// added or changed files since (that is why custody steps back); an
// interrupted removal only ever deletes, and then custody must not step
// back over a half-removed tree.
func treeIntact(_ context.Context, args ...any) bool {
	f, ok := firingOf(args)
	if !ok || f.Record.Intent == nil {
		return false
	}
	o, in := f.Obs, f.Record.Intent
	return o.PathState == PathPresent && o.Registered && o.Dev == in.Dev && o.Ino == in.Ino && o.Head == in.Commit &&
		o.StatusErr == "" && len(o.Status.Deleted) == 0
}

// unrecoverableAcknowledged holds when a person named exactly the record's
// commit as unrecoverable and git confirmed nothing holds it.
func unrecoverableAcknowledged(_ context.Context, args ...any) bool {
	f, ok := firingOf(args)
	return ok && f.Acknowledged != "" && f.Acknowledged == f.Record.EffectiveHead() &&
		(f.Obs.Head == "" || f.Obs.Head == f.Acknowledged) && f.AckConfirmed
}

// intentHeld holds when the record carries an intent and the firing hands
// the same intent (same kind and target) to a new holder.
func intentHeld(_ context.Context, args ...any) bool {
	f, ok := firingOf(args)
	if !ok || f.Record.Intent == nil || f.Intent == nil {
		return false
	}
	a, b := f.Record.Intent, f.Intent
	return a.Kind == b.Kind && a.Path == b.Path && a.Commit == b.Commit && a.Fingerprint == b.Fingerprint
}

// IsFullCommit reports whether s is a full hexadecimal object id (SHA-1 or
// SHA-256).
func IsFullCommit(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
