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
)

// DecideResume picks the one resume rule that fits rec and obs, or returns a
// refusal naming what it saw. It never guesses.
func DecideResume(rec Record, obs WorktreeObservation) (ResumeAction, *Refusal) {
	in := rec.Intent
	unmatched := func(what string) (ResumeAction, *Refusal) {
		r := refuse(CodeResumeUnmatched, rec.Path, "custody show "+rec.ID,
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
		if obs.PathState == PathAbsent && !obs.Registered && !obs.AdminPresent &&
			(obs.BranchTip == "" || obs.BranchTip == in.Commit) {
			return ResumeDiscard, nil
		}
		return unmatched(describe(obs))
	case rec.State == StateRemoving && in.Kind == IntentRemoval:
		if obs.PathState == PathAbsent {
			if obs.Registered || obs.AdminPresent {
				return ResumeDropAdmin, nil
			}
			return ResumeCompleteRemoval, nil
		}
		if obs.IsDir && !obs.IsSymlink && obs.Registered && obs.Dev == in.Dev && obs.Ino == in.Ino && obs.Head == in.Commit {
			return ResumeRetryRemoval, nil
		}
		return unmatched(describe(obs))
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
		s += ", HEAD " + shortID(o.Head)
	}
	if o.BranchTip != "" {
		s += ", branch at " + shortID(o.BranchTip)
	}
	return s
}
