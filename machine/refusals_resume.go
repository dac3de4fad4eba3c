package machine

import "fmt"

// The refusals of resume and doctor over any kind's rows (worktrees,
// resources, archives).

// NoContinuationRefusal refuses row r of kind, for which resume decided
// action that nothing carries out: a bug in the kind's workflow, reported
// rather than guessed at.
func NoContinuationRefusal(kind Kind, action string, r Row) *Refusal {
	return &Refusal{Code: CodeResumeUnmatched, Path: r.RowPath(), Retry: "custody show " + QuoteArg(r.RowID()),
		Message: fmt.Sprintf("%s resume decided %q for %s, and nothing carries that decision out; custody will not guess", kind, action, r.RowID())}
}

// ResumeFailedRefusal refuses row r, whose resume failed with err (an
// error, not a refusal).
func ResumeFailedRefusal(r Row, err error) *Refusal {
	return &Refusal{Code: CodeResumeUnmatched, Path: r.RowPath(), Retry: "custody resume", Message: err.Error()}
}

// StuckUnobservedRefusal is doctor's report of row r, stuck, whose
// resume decision could not be made: observing it failed with err.
func StuckUnobservedRefusal(r Row, err error) *Refusal {
	return &Refusal{Code: CodeObservationFailed, Path: r.RowPath(), Retry: "custody show " + QuoteArg(r.RowID()),
		Message: err.Error()}
}
