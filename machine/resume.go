package machine

// ResumeAction is what resume does with a record that carries an intent.
type ResumeAction string

// The resume rules of DESIGN §4. Each matches one exact observation.
const (
	// ResumeActivate: provisioning, and the exact tree exists. Write the
	// marker if it is missing, then fire created.
	ResumeActivate ResumeAction = "activate"
	// ResumeDiscard: provisioning, and nothing was made (or only the branch,
	// untouched). Delete that branch by compare-and-swap, then discard.
	ResumeDiscard ResumeAction = "discard"
	// ResumeRetryRemoval: removing, and the tree is present and unchanged.
	// Observe again and take the removal from its final observation.
	ResumeRetryRemoval ResumeAction = "retry-removal"
	// ResumeDropAdmin: removing, the path is absent but git still holds the
	// exact admin entry. Remove only that entry, then complete.
	ResumeDropAdmin ResumeAction = "drop-admin-entry"
	// ResumeCompleteRemoval: removing, the path is absent and unregistered.
	// Settle the branch and complete.
	ResumeCompleteRemoval ResumeAction = "complete-removal"
	// ResumeCompleteRelocation: relocating, and git reports only the
	// destination, at the intent's HEAD. Fire relocated.
	ResumeCompleteRelocation ResumeAction = "complete-relocation"
	// ResumeStepBack: relocating, and git reports only the source, at the
	// intent's HEAD: the move never happened. Step back to active.
	ResumeStepBack ResumeAction = "step-back"
	// ResumeRepairRelocation: relocating, nothing at the source, and the
	// very directory the intent observed at the destination, which git does
	// not register yet (a move killed between its rename and its rewrite
	// of the admin entry). Register it where it is, then fire relocated.
	ResumeRepairRelocation ResumeAction = "repair-relocation"
)

// DecideResume picks the one resume rule that fits rec and obs (and, for a
// relocation, dest: the observation of its destination; nil otherwise), or
// returns a refusal naming what it saw. It never guesses.
func DecideResume(rec Record, obs WorktreeObservation, dest *WorktreeObservation) (ResumeAction, *Refusal) {
	in := rec.Intent
	unmatched := func(what string) (ResumeAction, *Refusal) {
		r := refuse(CodeResumeUnmatched, rec.Path, CommandOn([]string{"custody", "show"}, rec.ID),
			"%s is %s with a %s intent, but %s; custody will not guess", rec.ID, rec.State, intentKind(in), what)
		return "", &r
	}
	if in == nil {
		return unmatched("it carries no intent")
	}
	if obs.PathState == PathUnknown {
		return unmatched("its path could not be observed: " + obs.PathError)
	}
	switch {
	case rec.State == StateProvisioning && in.Kind == IntentCreate:
		if obs.PathState == PathPresent && obs.IsDir && !obs.IsSymlink && obs.Registered &&
			obs.AdminKey == rec.ID && obs.Head == in.Commit && obs.Branch == rec.Branch && !obs.Locked {
			return ResumeActivate, nil
		}
		if obs.PathState == PathAbsent && !obs.Registered && !obs.AdminPresent && branchUntouched(rec, obs, in.Commit) {
			return ResumeDiscard, nil
		}
		return unmatched(describe(obs))
	case rec.State == StateRemoving && in.Kind == IntentRemoval:
		if obs.PathState == PathAbsent {
			if len(obs.OtherEntries) > 0 {
				// Another key's entry names the gone path: dropping the
				// record's own entry again would not settle it.
				r := OtherEntriesRefusal(rec, obs.OtherEntries, "custody resume")
				return "", &r
			}
			if obs.Registered || obs.AdminPresent {
				return ResumeDropAdmin, nil
			}
			return ResumeCompleteRemoval, nil
		}
		if obs.IsDir && !obs.IsSymlink && obs.Registered && obs.Dev == in.Dev && obs.Ino == in.Ino && obs.Head == in.Commit {
			return ResumeRetryRemoval, nil
		}
		return unmatched(describe(obs))
	case rec.State == StateRelocating && in.Kind == IntentRelocation:
		if dest == nil || dest.PathState == PathUnknown {
			return unmatched("its destination " + in.Destination + " could not be observed")
		}
		switch {
		case obs.Registered && dest.Registered:
			r := refuse(CodeAmbiguousRelocation, in.Destination, "git worktree list --porcelain",
				"%s was being moved from %s to %s, and git reports both; custody will not pick one. Remove the registration that is not the tree, then: custody resume",
				rec.ID, rec.Path, in.Destination)
			return "", &r
		case relocationArrived(rec, obs, *dest):
			return ResumeCompleteRelocation, nil
		case RelocationNotMoved(in, obs, *dest):
			return ResumeStepBack, nil
		case RelocationHalfMoved(in, obs, *dest):
			return ResumeRepairRelocation, nil
		}
		_, r := unmatched("source: " + describe(obs) + "; destination: " + describe(*dest))
		return "", RelocationRepair(rec, obs, *dest, r)
	}
	return unmatched("no resume rule covers that pair")
}

func intentKind(in *Intent) string {
	if in == nil {
		return "no"
	}
	return string(in.Kind)
}

func describe(o WorktreeObservation) string {
	s := "path " + string(o.PathState)
	if o.Registered {
		s += ", registered as " + o.AdminKey
	} else {
		s += ", unregistered"
	}
	if o.AdminPresent {
		s += ", admin entry present"
	}
	if o.Head != "" {
		s += ", HEAD " + Abbrev(o.Head, ShortCommit)
	}
	if o.BranchTip != "" {
		s += ", branch at " + Abbrev(o.BranchTip, ShortCommit)
	}
	return s
}

// ResourceResumeAction is what resume does with a ledger entry that
// carries an intent.
type ResourceResumeAction string

// The resource resume rules (issue texts): each matches one exact
// situation of the entry and its worktree.
const (
	// ResourceResumeWait: a live process holds the intent; leave it.
	ResourceResumeWait ResourceResumeAction = "wait"
	// ResourceResumeDeferred: an interrupted create whose worktree is still
	// provisioning; the worktree's own resume re-drives its resources.
	ResourceResumeDeferred ResourceResumeAction = "deferred"
	// ResourceResumeRecreate: an interrupted create of a live worktree.
	// Its outcome is unknown: undo it with the frozen destroy (result
	// ignored), then create once.
	ResourceResumeRecreate ResourceResumeAction = "recreate"
	// ResourceResumeDestroy: an interrupted destroy, or a create whose
	// worktree is gone (its record tombstoned or absent, or its tree
	// vanished): run the frozen destroy.
	ResourceResumeDestroy ResourceResumeAction = "destroy"
)

// ResourceResumeFacts is what the resource resume decision looks at.
type ResourceResumeFacts struct {
	// HolderAlive says a live process may still act on the intent.
	HolderAlive bool
	// Worktree is the entry's worktree record, nil when the store holds
	// none.
	Worktree *Record
	// WorktreeVanished says the worktree's tree vanished (Vanished): a
	// create interrupted for it is undone, never made again.
	WorktreeVanished bool
}

// DecideResourceResume picks the one rule that fits r, which carries an
// intent, or refuses. It is pure.
func DecideResourceResume(r Resource, f ResourceResumeFacts) (ResourceResumeAction, *Refusal) {
	if r.Intent == nil || r.State == StateTombstoned {
		ref := refuse(CodeResumeUnmatched, r.Path, "custody resource list",
			"resource %s is %s and carries no intent; custody will not guess", r.ID, r.State)
		return "", &ref
	}
	if f.HolderAlive {
		return ResourceResumeWait, nil
	}
	wt := f.Worktree
	switch {
	case r.State == StateProvisioning && wt != nil && wt.State == StateProvisioning:
		return ResourceResumeDeferred, nil
	case r.State == StateProvisioning && wt != nil && (wt.State == StateActive || wt.State == StateFinished) && !f.WorktreeVanished:
		return ResourceResumeRecreate, nil
	}
	return ResourceResumeDestroy, nil
}
