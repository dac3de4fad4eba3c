package machine

import (
	"fmt"
	"slices"
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
// the local refs refs hold it. The retry publishes the first branch (or
// else tag) among them where ev says a remote custody reads will
// advertise it, so plan proves the commit and settles the record; with no
// such ref or push, it lists the refs that hold it.
func AbandonHeldByRefsRefusal(path, commit string, refs []string, ev RemoteEvidence) *Refusal {
	retry := Command("git", "for-each-ref", "--contains", commit)
	for _, prefix := range []string{"refs/heads/", "refs/tags/"} {
		i := slices.IndexFunc(refs, func(r string) bool { return strings.HasPrefix(r, prefix) })
		if i < 0 {
			continue
		}
		if push, _, ok := pushTo("", ev, refs[i], false); ok {
			retry = push
		}
		break
	}
	return abandonRefusal(CodeGuardFailed, path, retry,
		"%s is not lost: %s holds it; publish it, and plan settles the record", commit, strings.Join(refs, ", "))
}

// MinCommitPrefix is the fewest hex digits of a commit id abandon takes
// for the whole id: git's own shortest abbreviation. custody prints
// ShortCommit digits.
const MinCommitPrefix = 7

// IsCommitPrefix reports whether ack, as a person typed it, is head or
// names it by a prefix of at least MinCommitPrefix hex digits (in either
// case). Whether git holds another object the prefix names is the
// caller's to ask (AbandonAmbiguousCommitRefusal).
func IsCommitPrefix(ack, head string) bool {
	ack = strings.ToLower(ack)
	return len(ack) >= MinCommitPrefix && IsFullCommit(head) && strings.HasPrefix(head, ack) &&
		strings.Trim(ack, "0123456789abcdef") == ""
}

// AbandonShortCommitRefusal refuses to abandon record id (tree at path)
// for ack, a prefix of its last commit head too short to name one commit
// surely; the retry names head whole.
func AbandonShortCommitRefusal(id, path, ack, head string) *Refusal {
	return abandonRefusal(CodeAmbiguousReference, path, CommandOn([]string{"custody", "abandon", "--acknowledge-unrecoverable", head}, id),
		"%s has fewer than %d hex digits: too few to name %s's last commit (%s) surely; name it whole", QuoteArg(ack), MinCommitPrefix, id, head)
}

// AbandonAmbiguousCommitRefusal refuses to abandon record id (tree at
// path) for ack, a prefix of its last commit head that also names others
// objects git holds; the retry names head whole.
func AbandonAmbiguousCommitRefusal(id, path, ack, head string, others []string) *Refusal {
	return abandonRefusal(CodeAmbiguousReference, path, CommandOn([]string{"custody", "abandon", "--acknowledge-unrecoverable", head}, id),
		"%s is ambiguous: besides %s's last commit %s, git holds %d other object(s) whose id begins with it (%s); name the commit whole", QuoteArg(ack), id, head, len(others), strings.Join(others, ", "))
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

// switchRefusal is a refusal of switch about record id's tree at path:
// the shell stays where it is. The message is escaped, so a path holding
// a newline keeps it on one line.
func switchRefusal(code Code, path, retry, format string, args ...any) *Refusal {
	r := refuse(code, path, retry, format+"; the shell stays where it is", args...)
	r.Message = EscapeControl(r.Message)
	return &r
}

// SwitchTombstonedRefusal refuses to switch to record id, which is
// tombstoned: its tree at path was removed.
func SwitchTombstonedRefusal(id, path string) *Refusal {
	return switchRefusal(CodeWrongState, path, "custody list", "%s is tombstoned: its tree was removed from %s", id, path)
}

// SwitchPathUnknownRefusal refuses to switch to record id, whose path
// could not be observed (err).
func SwitchPathUnknownRefusal(id, path, err string) *Refusal {
	return switchRefusal(CodePathUnknown, path, CommandOn([]string{"custody", "switch"}, id), "%s could not be observed: %s", path, err)
}

// SwitchTreeGoneRefusal refuses to switch to record id, whose tree is gone
// from path.
func SwitchTreeGoneRefusal(id, path string) *Refusal {
	return switchRefusal(CodeWorktreeMissing, path, CommandOn([]string{"custody", "show"}, id), "%s's tree is gone from %s", id, path)
}

// SwitchNotADirectoryRefusal refuses to switch to record id: a symbolic
// link or a file is at its path, not its tree.
func SwitchNotADirectoryRefusal(id, path string) *Refusal {
	return switchRefusal(CodeSymlink, path, CommandOn([]string{"custody", "show"}, id), "%s is not a plain directory (a symbolic link or a file is there)", path)
}
