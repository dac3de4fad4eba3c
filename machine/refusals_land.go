package machine

import "fmt"

// LandNoTargetRefusal refuses a landing whose target is unknown: why, then
// retry.
func LandNoTargetRefusal(path, why, retry string) *Refusal {
	return &Refusal{Code: CodeLandNoTarget, Path: path, Retry: retry, Message: why + "; nothing was pushed"}
}

// LandConflictRefusal refuses integrating head into t by method: it
// conflicts at paths.
func LandConflictRefusal(path string, method LandMethod, head string, t LandTarget, paths []string, retry string) *Refusal {
	return &Refusal{Code: CodeLandConflict, Path: path, Retry: retry,
		Message: fmt.Sprintf("integrating %s into %s at %s by %s conflicts in %d path(s): %s; nothing was pushed; resolve them in the tree (%s), then land again",
			Abbrev(head, ShortCommit), t.Ref, Abbrev(t.Tip, ShortCommit), method, len(paths), listSome(paths, 10), Command("git", "-C", path, "rebase", t.Tip))}
}

// LandRacedRefusal reports that t's ref moved (to now, "" when it is no
// longer advertised) between the integration and the push.
func LandRacedRefusal(path string, t LandTarget, now, retry string) *Refusal {
	to := "no longer advertised"
	if now != "" {
		to = "now at " + Abbrev(now, ShortCommit)
	}
	return &Refusal{Code: CodeLandRaced, Path: path, Retry: retry,
		Message: fmt.Sprintf("%s on %s moved after custody integrated against %s (%s); the push's lease refused it and nothing was pushed", t.Ref, t.Remote, Abbrev(t.Tip, ShortCommit), to)}
}

// LandPushRefusal reports a push of newTip to t that failed, or that
// the proving remote does not show, for why.
func LandPushRefusal(path string, t LandTarget, newTip, why, retry string) *Refusal {
	return &Refusal{Code: CodeLandPushFailed, Path: path, Retry: retry,
		Message: fmt.Sprintf("pushing %s to %s %s did not land: %s", Abbrev(newTip, ShortCommit), t.Push, t.Ref, why)}
}

// LandCheckFailedRefusal reports the pre-land check command failing in
// the tree with exit code and the end of its output.
func LandCheckFailedRefusal(path, command string, code int, output, retry string) *Refusal {
	msg := fmt.Sprintf("the pre-land check %q exited %d in the tree; nothing was pushed", command, code)
	if output != "" {
		msg += ": " + EscapeControl(output)
	}
	return &Refusal{Code: CodeLandCheckFailed, Path: path, Retry: retry, Message: msg}
}

// LandNoIdentityRefusal reports that git would not write a commit for
// want of an identity.
func LandNoIdentityRefusal(path string, err error) *Refusal {
	return &Refusal{Code: CodeLandNoIdentity, Path: path, Retry: "git config --global user.email EMAIL && git config --global user.name NAME",
		Message: fmt.Sprintf("git has no identity to write the landing's commit under (%v); nothing was pushed", err)}
}

// LandWrongStateRefusal refuses landing record rec, which is in a state
// (provisioning, relocating, removing) no landing starts from.
func LandWrongStateRefusal(rec Record) *Refusal {
	return &Refusal{Code: CodeWrongState, Path: rec.Path, Retry: "custody resume",
		Message: fmt.Sprintf("%s is %s; land starts from an active or finished tree; nothing was pushed", rec.ID, rec.State)}
}

// LandHeadMovedRefusal refuses a landing whose tree's HEAD moved from
// before to after while the pre-land check ran.
func LandHeadMovedRefusal(path, before, after, retry string) *Refusal {
	return &Refusal{Code: CodeStale, Path: path, Retry: retry,
		Message: fmt.Sprintf("the tree's HEAD moved from %s to %s while the pre-land check ran; nothing was pushed", Abbrev(before, ShortCommit), Abbrev(after, ShortCommit))}
}

// LandRemovedRefusal refuses landing record rec, whose tree was removed
// without a landing: there is nothing left to land.
func LandRemovedRefusal(rec Record) *Refusal {
	return &Refusal{Code: CodeWrongState, Path: rec.Path, Retry: CommandOn([]string{"custody", "show"}, rec.ID),
		Message: fmt.Sprintf("%s was removed before, and never landed; there is nothing left to land", rec.ID)}
}
