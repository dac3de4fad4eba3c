package machine

import (
	"fmt"
	"strings"
)

// The refusals of new and adopt: a revision that names no commit, a
// creation that did not end as intended, a tree adopt will not take, and
// a worktree custody did not make.

// UnknownRevisionRefusal refuses rev, which names no commit in the
// checkout at dir.
func UnknownRevisionRefusal(rev, dir string) *Refusal {
	return &Refusal{Code: CodeUnknownRevision, Path: dir, Retry: "git branch --all",
		Message: fmt.Sprintf("%q does not name a commit in %s", rev, dir)}
}

// CreateKeyMismatchRefusal reports that git registered the tree at path
// of record id under admin key key, not id: the ready marker was not
// written.
func CreateKeyMismatchRefusal(id, path, key string) *Refusal {
	return &Refusal{Code: CodeCreateFailed, Path: path, Retry: "custody resume",
		Message: fmt.Sprintf("git registered %s under admin key %q, not %q; the ready marker was not written", path, key, id)}
}

// Undestroyed is a resource a rolled-back creation could not destroy:
// its handle and why its destroy failed.
type Undestroyed struct {
	Handle string
	Why    string
}

// CreateRolledBackRefusal reports that creating record id (tree at path)
// failed because a required resource failed (failed, that refusal's
// message) and was rolled back; left lists the earlier resources whose
// destroy failed. The retry runs new again with the name the id was made
// of.
func CreateRolledBackRefusal(id, path, failed string, left []Undestroyed) *Refusal {
	msg := fmt.Sprintf("%s; custody new was rolled back: no worktree, no branch", failed)
	var each []string
	for _, u := range left {
		each = append(each, fmt.Sprintf("%s (%s)", u.Handle, u.Why))
	}
	if len(each) == 0 {
		msg += ", earlier resources destroyed"
	} else {
		msg += "; but destroying " + strings.Join(each, ", ") + " failed: the ledger keeps them for custody resource gc"
	}
	return &Refusal{Code: CodeCreateFailed, Path: path, Retry: "custody new " + ShellWord(id[:max(strings.LastIndexByte(id, '-'), 0)]), Message: msg}
}

// CreateRollbackHeldRefusal reports that a creation's rollback could not
// remove the tree at path: git would not without force (err), as it holds
// changes.
func CreateRollbackHeldRefusal(path string, err error) *Refusal {
	return &Refusal{Code: CodeCreateFailed, Path: path, Retry: "custody resume",
		Message: fmt.Sprintf("a required resource failed, and git will not remove %s without force (it holds changes): move your work out of it, then run custody resume (%v)", path, err)}
}

// CreateNotIntendedRefusal reports that after git worktree add the tree at
// path is not exactly what was intended; guard is the failed guard's
// message.
func CreateNotIntendedRefusal(path, guard string) *Refusal {
	return &Refusal{Code: CodeCreateFailed, Path: path, Retry: "custody resume",
		Message: fmt.Sprintf("after git worktree add, %s is not exactly what was intended (%s)", path, guard)}
}

// ForeignRefusal keeps the registered worktree at path, which custody did
// not make: it is listed, never removed automatically.
func ForeignRefusal(path string) *Refusal {
	return &Refusal{Code: CodeForeign, Path: path, Retry: CommandOn([]string{"custody", "adopt"}, path),
		Message: fmt.Sprintf("%s is a worktree custody did not make; it is never removed automatically (adopt it to put it in custody)", path)}
}

// AdoptNotLinkedRefusal refuses to adopt path, which is not a linked
// worktree of the repository whose main checkout is checkout.
func AdoptNotLinkedRefusal(path, checkout string) *Refusal {
	return &Refusal{Code: CodeNotOwned, Path: path, Retry: "git worktree list",
		Message: fmt.Sprintf("%s is not a linked worktree of the repository at %s", path, checkout)}
}

// AdoptAdminUnknownRefusal refuses to adopt the tree at path, whose admin
// entry cannot be identified exactly.
func AdoptAdminUnknownRefusal(path string) *Refusal {
	return &Refusal{Code: CodeNotOwned, Path: path, Retry: "git worktree list",
		Message: fmt.Sprintf("git's admin entry for %s cannot be identified exactly (its .git file and the entry's gitdir must name each other)", path)}
}

// AdoptKeyHeldRefusal refuses to adopt the tree at path: its admin key
// key is held by record r of the tree at another path.
func AdoptKeyHeldRefusal(path, key string, r Record) *Refusal {
	return &Refusal{Code: CodeWrongState, Path: path, Retry: CommandOn([]string{"custody", "show"}, r.ID),
		Message: fmt.Sprintf("git's admin key %s of %s is held by record %s (%s) of the tree at %s; custody will not guess whether that tree moved here or is gone (if it is gone, finish %s and retire it with a plan, then adopt again)",
			key, path, r.ID, r.State, r.Path, r.ID)}
}

// AdoptRecordedRefusal refuses to adopt the tree at path, which record r
// already holds. ifNeeded (adopt --if-needed) says the record's admin
// entry (key) or ready marker no longer names it, so the tree there may
// be another.
func AdoptRecordedRefusal(path, key string, r Record, ifNeeded bool) *Refusal {
	msg := fmt.Sprintf("%s is already in custody as %s (%s)", path, r.ID, r.State)
	if ifNeeded {
		msg = fmt.Sprintf("%s is recorded as %s (%s), but git's admin entry %s or its ready marker no longer names that record: the tree there may not be the one custody recorded", path, r.ID, r.State, key)
	}
	return &Refusal{Code: CodeWrongState, Path: path, Retry: CommandOn([]string{"custody", "show"}, r.ID), Message: msg}
}

// AdoptRaceRefusal reports that a record id was made by another custody
// while this one adopted the tree at path.
func AdoptRaceRefusal(id, path string) *Refusal {
	return &Refusal{Code: CodeWrongState, Path: path, Retry: "custody list --all",
		Message: fmt.Sprintf("a record %s was made while custody adopted %s; run adopt again", id, path)}
}

// The refusals of new --branch and new --checkout: each is given before
// anything is made, names the branch and says what to do instead.

// BranchInvalidRefusal refuses new NAME --branch BRANCH: git would not
// take branch as a branch name (why, BranchNameProblem). The retry makes
// the tree on a branch custody names.
func BranchInvalidRefusal(name, branch, why string) *Refusal {
	return &Refusal{Code: CodeBranchInvalid, Retry: CommandOn([]string{"custody", "new"}, name),
		Message: fmt.Sprintf("%s is not a valid branch name: %s (git check-ref-format --branch refuses it); nothing was made: give --branch a name git accepts, or leave --branch out and custody names the branch", shownName(branch), why)}
}

// BranchExistsRefusal refuses new NAME --branch BRANCH: branch exists
// already. at is the worktree that has it checked out ("" for none): the
// retry then starts a tree of custody's own from it; otherwise it makes
// the tree on that branch (--checkout).
func BranchExistsRefusal(name, branch, at string) *Refusal {
	if at != "" {
		return &Refusal{Code: CodeBranchExists, Path: at, Retry: CommandOn([]string{"custody", "new", "--from", "refs/heads/" + branch}, name),
			Message: fmt.Sprintf("branch %s already exists and is checked out in the worktree at %s; nothing was made: give --branch another name, or start a tree on a branch of custody's own from it", shownName(branch), at)}
	}
	return &Refusal{Code: CodeBranchExists, Retry: CommandOn([]string{"custody", "new", "--checkout", branch}, name),
		Message: fmt.Sprintf("branch %s already exists; nothing was made: to make the tree on it, use --checkout (custody never deletes a branch it did not create), or give --branch another name", shownName(branch))}
}

// BranchMissingRefusal refuses new NAME --checkout BRANCH: there is no
// local branch of that name; why, when set, says the name is not one git
// takes for a branch (BranchNameProblem), so none can have it.
func BranchMissingRefusal(branch, why string) *Refusal {
	what := fmt.Sprintf("there is no local branch %s", shownName(branch))
	if why != "" {
		what = fmt.Sprintf("%s is not a valid branch name (%s), so no local branch has it", shownName(branch), why)
	}
	return &Refusal{Code: CodeBranchMissing, Retry: "git branch --list",
		Message: what + "; nothing was made: --checkout takes an existing local branch (git branch --list shows them), and --branch makes a new one"}
}

// BranchCheckedOutRefusal refuses new NAME --checkout BRANCH: branch is
// checked out in the worktree at at, and git checks a branch out in one
// worktree at a time. The retry starts a tree on a branch of custody's own
// from it.
func BranchCheckedOutRefusal(name, branch, at string) *Refusal {
	return &Refusal{Code: CodeBranchCheckedOut, Path: at, Retry: CommandOn([]string{"custody", "new", "--from", "refs/heads/" + branch}, name),
		Message: fmt.Sprintf("branch %s is checked out in the worktree at %s, and git checks a branch out in one worktree at a time; nothing was made: switch that worktree to another branch first, or start a tree on a branch of custody's own from it", shownName(branch), at)}
}

// shownName is a name as a message shows it: as a shell reads it back,
// on one line, its controls escaped.
func shownName(s string) string {
	if HasControl(s) {
		return "'" + EscapeControl(s) + "'"
	}
	return QuoteArg(s)
}
