package machine

import "fmt"

// ApplyMove is what apply does next with one item of a plan. apply asks
// DecideApplyRecord over the stored record, then DecideApplyVerdict over a
// fresh observation and assessment, and performs the move each returns.
type ApplyMove string

// The moves of apply.
const (
	// ApplyRefuse ends the item with the step's Refusal.
	ApplyRefuse ApplyMove = "refuse"
	// ApplyWait looks at the record again shortly: a live process holds
	// its intent and the wait has time left.
	ApplyWait ApplyMove = "wait"
	// ApplyResume drives the intent a dead holder left to its outcome,
	// then looks at the record again.
	ApplyResume ApplyMove = "resume"
	// ApplyAlreadyDone reports the item already done: the tree was removed
	// or settled before. Resources a run interrupted after the tree went
	// may have left are torn down.
	ApplyAlreadyDone ApplyMove = "already-done"
	// ApplyObserve observes the tree fresh and asks DecideApplyVerdict.
	ApplyObserve ApplyMove = "observe"
	// ApplySettle commits a settlement intent and settles the vanished
	// tree.
	ApplySettle ApplyMove = "settle"
	// ApplyRemove commits a removal intent and removes the tree.
	ApplyRemove ApplyMove = "remove"
)

// ApplyStep is one decision of apply about one plan item.
type ApplyStep struct {
	Move ApplyMove
	// Refusal is why, with ApplyRefuse.
	Refusal *Refusal
	// Recheck, with ApplyRefuse, says the refusal stands only if the
	// record has not moved since it was read: when another invocation
	// moved it meanwhile, the refusal is about a tree that invocation is
	// acting on, and apply looks again instead.
	Recheck bool
}

func refuseStep(r *Refusal, recheck bool) ApplyStep {
	return ApplyStep{Move: ApplyRefuse, Refusal: r, Recheck: recheck}
}

// DecideApplyRecord decides what apply does with plan item it over its
// stored record rec (nil when the store holds none). live is what is
// known of the process holding rec's intent; mayWait that apply's wait
// for a live one has time left.
func DecideApplyRecord(it PlanItem, rec *Record, live HolderLiveness, mayWait bool) ApplyStep {
	if rec == nil {
		return refuseStep(&Refusal{Code: CodeUnknownRecord, Retry: "custody plan",
			Message: fmt.Sprintf("the plan names %s, which this repository's store does not hold", it.ID)}, false)
	}
	if rec.Intent != nil {
		switch {
		case live == HolderGone:
			return ApplyStep{Move: ApplyResume}
		case mayWait:
			return ApplyStep{Move: ApplyWait}
		}
		return refuseStep(InProgressRefusal(*rec, live), false)
	}
	switch rec.State {
	case StateTombstoned:
		if rec.Evidence.Outcome == string(OutcomeRemoved) || rec.Evidence.Outcome == string(OutcomeSettled) {
			return ApplyStep{Move: ApplyAlreadyDone}
		}
		return refuseStep(&Refusal{Code: CodeWrongState, Path: rec.Path, Retry: CommandOn([]string{"custody", "show"}, rec.ID),
			Message: fmt.Sprintf("%s was tombstoned without removal (%s)", rec.ID, rec.Evidence.Outcome)}, false)
	case StateFinished, StateActive:
		return ApplyStep{Move: ApplyObserve}
	}
	return refuseStep(&Refusal{Code: CodeWrongState, Path: rec.Path, Retry: CommandOn([]string{"custody", "show"}, rec.ID),
		Message: fmt.Sprintf("%s is %s, not finished", rec.ID, rec.State)}, true)
}

// ApplyExpires reports whether apply fires expire on rec before assessing
// it: the record is active (its lease ran out since plan, or plan would
// not have proposed it) and its tree has not vanished (a vanished tree is
// settled from active as it is).
func ApplyExpires(rec Record, obs WorktreeObservation) bool {
	return rec.State == StateActive && !Vanished(obs)
}

// ActiveAgainRefusal refuses an item whose record could not be expired:
// a lease was renewed since plan, so the tree is in use again.
func ActiveAgainRefusal(rec Record) *Refusal {
	return &Refusal{Code: CodeNotFinished, Path: rec.Path, Retry: CommandOn([]string{"custody", "finish"}, rec.ID),
		Message: fmt.Sprintf("%s is active again since plan", rec.ID)}
}

// DecideApplyVerdict decides what apply does with plan item it once its
// record rec is observed fresh (obs) and assessed (v): refuse, settle or
// remove. external is the refusal of an adopted tree outside the managed
// root when the person did not allow it (nil when allowed or not such a
// tree); it applies to removals only.
func DecideApplyVerdict(it PlanItem, rec Record, obs WorktreeObservation, v Verdict, external *Refusal) ApplyStep {
	var verdict *Refusal
	switch {
	case len(obs.TimedOut) > 0:
		// Part of the tree is unknown, not changed: the command that ran
		// out of time is the reason (Assess names it first).
		verdict = v.Primary()
	case Fingerprint(obs) != it.Fingerprint:
		verdict = StaleRefusal(rec, obs, it.Head)
	case v.Action == ActionSettle && it.Action == ActionSettle:
		// What was proven and what becomes of the branch must be what plan
		// showed; the proof itself is found fresh (a remote that advanced
		// since plan does not make the settlement another).
		was, now := *it.Settlement, *v.Settlement
		was.Summary, now.Summary = "", ""
		if was != now {
			verdict = SettlementChangedRefusal(rec, *it.Settlement, *v.Settlement)
		}
	case v.Action != ActionRemove || it.Action != ActionRemove:
		verdict = v.Primary()
		if verdict == nil {
			verdict = &Refusal{Code: CodeStale, Path: rec.Path, Retry: "custody plan",
				Message: fmt.Sprintf("%s changed since plan: plan said %s, now it is %s", rec.ID, it.Action, v.Action)}
		}
	default:
		verdict = external
	}
	if verdict != nil {
		return refuseStep(verdict, true)
	}
	if v.Action == ActionSettle {
		return ApplyStep{Move: ApplySettle}
	}
	return ApplyStep{Move: ApplyRemove}
}

// StaleRefusal says what changed since plan in the tree of rec, whose plan
// (or intent) saw HEAD head and whose fresh observation is obs.
func StaleRefusal(rec Record, obs WorktreeObservation, head string) *Refusal {
	what := "its status, registration or identity changed"
	switch {
	case obs.PathState == PathAbsent && obs.MovedTo != "":
		what = fmt.Sprintf("git moved it to %s", obs.MovedTo)
	case obs.PathState != PathPresent:
		what = fmt.Sprintf("%s is %s now, HEAD was %s", rec.Path, obs.PathState, Abbrev(head, ShortCommit))
	case obs.Head == "":
		what = fmt.Sprintf("HEAD was %s and can no longer be read", Abbrev(head, ShortCommit))
	case obs.Head != head:
		what = fmt.Sprintf("HEAD moved from %s to %s", Abbrev(head, ShortCommit), Abbrev(obs.Head, ShortCommit))
	case !obs.Status.Clean():
		what = "its working tree is no longer clean"
	case obs.Locked:
		what = "it was locked"
	case len(obs.Content) > 0:
		what = "files on disk are not HEAD's: " + obs.Content[0].Path
		if len(obs.Content) > 1 {
			what += fmt.Sprintf(" and %d more", len(obs.Content)-1)
		}
	}
	return &Refusal{Code: CodeStale, Path: rec.Path, Retry: "custody plan",
		Message: fmt.Sprintf("%s changed since plan: %s", rec.ID, what)}
}

// SettlementChangedRefusal refuses a settlement whose proof or branch
// changed since plan (a remote now proves the branch tip, the branch
// moved): the next plan shows the settlement as it is now.
func SettlementChangedRefusal(rec Record, was, now Settlement) *Refusal {
	return &Refusal{Code: CodeStale, Path: rec.Path, Retry: "custody plan",
		Message: fmt.Sprintf("%s changed since plan: its settlement was on %s (proven %v, branch %s) and is now on %s (proven %v, branch %s)",
			rec.ID, Abbrev(was.Head, ShortCommit), was.Proven, was.Branch, Abbrev(now.Head, ShortCommit), now.Proven, now.Branch)}
}
