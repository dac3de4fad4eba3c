package machine

import (
	"fmt"
	"strings"
)

// The refusals of commands that act on one worktree record by id (finish,
// reopen, show, abandon, relocate, archive create, resource ensure) and
// of the commands that find the record of the current directory.

// NoRecordRefusal refuses id, which names no worktree record of this
// repository.
func NoRecordRefusal(id string) *Refusal {
	return &Refusal{Code: CodeUnknownRecord, Retry: "custody list",
		Message: fmt.Sprintf("no worktree record %q in this repository", id)}
}

// NoRecordToShowRefusal is NoRecordRefusal for show, whose retry lists
// the tombstoned records too (show shows them).
func NoRecordToShowRefusal(id string) *Refusal {
	return &Refusal{Code: CodeUnknownRecord, Retry: "custody list --all",
		Message: fmt.Sprintf("no worktree record %q in this repository", id)}
}

// NotInManagedWorktreeRefusal refuses a command that defaults to "this
// worktree" run at dir, which lies inside no live record's tree.
func NotInManagedWorktreeRefusal(dir string) *Refusal {
	return &Refusal{Code: CodeNotInWorktree, Path: dir, Retry: "custody list",
		Message: fmt.Sprintf("%s is not inside a managed worktree; name the worktree id", dir)}
}

// LeasedRefusal refuses to finish record id, whose tree at path a live
// lease l holds. Finishing again changes nothing while the lease lives, so
// the retry is what lets the tree go: the lease ends as its session's end
// would end it (ReleaseLeaseCommand), then the tree is finished.
func LeasedRefusal(id, path string, l Lease) *Refusal {
	return &Refusal{Code: CodeLeaseLive, Path: path,
		Retry: ReleaseLeaseCommand(path, l.Holder) + " && " + CommandOn([]string{"custody", "finish"}, id),
		Message: fmt.Sprintf("%s is leased by %s until %s: a session works in it and renews the lease while it does; it ends when that session ends or the lease runs out. To finish it now, end the lease as the session's end would",
			id, l.Holder, l.Expires.UTC().Format("2006-01-02T15:04:05Z"))}
}

// ReleaseLeaseCommand is the command that ends the lease holder holds on
// the tree at path, as that session's end does (custody hook
// session-end, run in the tree).
func ReleaseLeaseCommand(path, holder string) string {
	return Command("custody", "-C", path, "hook", "session-end", "--session="+holder)
}

// NoRemoteRefusal refuses to assess the trees of the repository whose
// main checkout is at checkout: it has no remote, so nothing could ever
// prove their work published.
func NoRemoteRefusal(checkout string) *Refusal {
	return &Refusal{Code: CodeNoRemote, Path: checkout, Retry: "custody plan",
		Message: fmt.Sprintf("the repository at %s has no remote, so no finished worktree's commits can be proven published and none could be removed; nothing was changed. Add the remote your work is pushed to (git remote add origin URL)", checkout)}
}

// abandonRefusal is a refusal of abandon about the tree at path: the
// record is left as it was.
func abandonRefusal(code Code, path, retry, format string, args ...any) *Refusal {
	return &Refusal{Code: code, Path: path, Retry: retry,
		Message: fmt.Sprintf(format, args...) + "; nothing was changed"}
}

// AbandonNotLastCommitRefusal refuses to abandon record id (tree at path)
// for commit, which is not its last commit head.
func AbandonNotLastCommitRefusal(id, path, commit, head string) *Refusal {
	return abandonRefusal(CodeGuardFailed, path, CommandOn([]string{"custody", "show"}, id),
		"%s is not %s's last commit (%s): abandon acknowledges exactly the commit that is lost", QuoteArg(commit), id, head)
}

// AbandonTreeNotGoneRefusal refuses to abandon record id whose tree is
// not gone: its path is state, and registered says git still registers it
// (or keeps its admin entry).
func AbandonTreeNotGoneRefusal(id, path string, state PathState, registered bool) *Refusal {
	return abandonRefusal(CodeWrongState, path, "custody plan",
		"%s's tree is not gone (path %s%s): abandon ends only a record whose tree no longer exists; plan decides what may happen to a tree", id, state, map[bool]string{true: ", registered with git"}[registered])
}

// AbandonHeldByRefsRefusal refuses to abandon commit of the tree at path:
// the local refs refs hold it.
func AbandonHeldByRefsRefusal(path, commit string, refs []string) *Refusal {
	return abandonRefusal(CodeGuardFailed, path, "custody plan",
		"%s is not lost: %s holds it", commit, strings.Join(refs, ", "))
}

// AbandonRemoteUnavailableRefusal refuses to abandon commit of the tree at
// path: remote f did not answer, so whether it holds commit is unknown.
func AbandonRemoteUnavailableRefusal(path, commit string, f RemoteFailure) *Refusal {
	return abandonRefusal(CodeRemoteUnavailable, path, "git ls-remote --refs "+QuoteArg(f.Remote),
		"remote %s did not answer (%s), so whether it holds %s is unknown", f.Remote, f.Error, commit)
}

// AbandonAdvertisedRefusal refuses to abandon commit of the tree at path:
// remote advertises it as ref.
func AbandonAdvertisedRefusal(path, commit, remote, ref string) *Refusal {
	return abandonRefusal(CodeGuardFailed, path, "custody plan", "%s is not lost: remote %s advertises it as %s", commit, remote, ref)
}

// AbandonProofFailedRefusal refuses to abandon commit of the tree at path:
// looking for a proof that a remote holds it failed with err.
func AbandonProofFailedRefusal(path, commit string, err error) *Refusal {
	return abandonRefusal(CodeProofFailed, path, "custody plan", "whether a remote holds %s cannot be told (%v)", commit, err)
}

// AbandonProvenRefusal refuses to abandon commit of the tree at path:
// proof p shows a remote holds it.
func AbandonProvenRefusal(path, commit string, p Proof) *Refusal {
	return abandonRefusal(CodeGuardFailed, path, "custody plan", "%s is not lost: %s %s holds it (%s)", commit, p.Remote, p.Ref, p.Kind)
}
