package machine

import (
	"errors"
	"testing"
)

func TestNewRefusals(t *testing.T) {
	t.Parallel()
	const (
		id   = "fix-login-1a2b3c"
		path = "/r/.worktrees/fix-login-1a2b3c"
	)
	failed := "resource db (db-1) create exited 1: no space"
	checkRefusals(t, []refusalCase{
		{"unknown revision", UnknownRevisionRefusal("nosuchrev", "/w/repo"), &Refusal{Code: CodeUnknownRevision, Path: "/w/repo", Retry: "git branch --all",
			Message: `"nosuchrev" does not name a commit in /w/repo`}},
		{"unknown revision, odd bytes quoted the Go way", UnknownRevisionRefusal("a\tb\xfe", "/w/repo"), &Refusal{Code: CodeUnknownRevision, Path: "/w/repo", Retry: "git branch --all",
			Message: `"a\tb\xfe" does not name a commit in /w/repo`}},
		{"admin key mismatch", CreateKeyMismatchRefusal(id, path, "fix-login-1a2b3c1"), &Refusal{Code: CodeCreateFailed, Path: path, Retry: "custody resume",
			Message: "git registered " + path + ` under admin key "fix-login-1a2b3c1", not "` + id + `"; the ready marker was not written`}},
		{"rolled back, resources destroyed", CreateRolledBackRefusal(id, path, failed, nil), &Refusal{Code: CodeCreateFailed, Path: path, Retry: "custody new 'fix-login'",
			Message: failed + "; custody new was rolled back: no worktree, no branch, earlier resources destroyed"}},
		{"rolled back, resources left", CreateRolledBackRefusal(id, path, failed, []Undestroyed{{"cache-1", "destroy exited 2"}, {"q-1", "killed"}}),
			&Refusal{Code: CodeCreateFailed, Path: path, Retry: "custody new 'fix-login'",
				Message: failed + "; custody new was rolled back: no worktree, no branch; but destroying cache-1 (destroy exited 2), q-1 (killed) failed: the ledger keeps them for custody resource gc"}},
		{"rolled back, a name with a quote and a newline", CreateRolledBackRefusal("it's\na-1a2b3c", path, failed, nil), &Refusal{Code: CodeCreateFailed, Path: path,
			Retry:   `custody new "$(printf -- 'it'\''s\012a')"`,
			Message: failed + "; custody new was rolled back: no worktree, no branch, earlier resources destroyed"}},
		{"rolled back, an id without a dash", CreateRolledBackRefusal("x", path, failed, nil), &Refusal{Code: CodeCreateFailed, Path: path, Retry: "custody new ''",
			Message: failed + "; custody new was rolled back: no worktree, no branch, earlier resources destroyed"}},
		{"rollback held by changes", CreateRollbackHeldRefusal(path, errors.New("exit status 128")), &Refusal{Code: CodeCreateFailed, Path: path, Retry: "custody resume",
			Message: "a required resource failed, and git will not remove " + path + " without force (it holds changes): move your work out of it, then run custody resume (exit status 128)"}},
		{"not what was intended", CreateNotIntendedRefusal(path, "HEAD is not 1111111"), &Refusal{Code: CodeCreateFailed, Path: path, Retry: "custody resume",
			Message: "after git worktree add, " + path + " is not exactly what was intended (HEAD is not 1111111)"}},
	})
}

func TestAdoptRefusals(t *testing.T) {
	t.Parallel()
	const path = "/w/codex/worktrees/ab12/repo"
	other := Record{ID: "repo", Path: "/w/elsewhere/repo", State: StateActive}
	checkRefusals(t, []refusalCase{
		{"foreign", ForeignRefusal("/w/other"), &Refusal{Code: CodeForeign, Path: "/w/other", Retry: "custody adopt /w/other",
			Message: "/w/other is a worktree custody did not make; it is never removed automatically (adopt it to put it in custody)"}},
		{"foreign, a path with spaces and a newline", ForeignRefusal("/w/a b\nc"), &Refusal{Code: CodeForeign, Path: "/w/a b\nc", Retry: `custody adopt "$(printf -- '/w/a b\012c')"`,
			Message: "/w/a b\nc is a worktree custody did not make; it is never removed automatically (adopt it to put it in custody)"}},
		{"not linked", AdoptNotLinkedRefusal("/w/plain", "/w/repo"), &Refusal{Code: CodeNotOwned, Path: "/w/plain", Retry: "git worktree list",
			Message: "/w/plain is not a linked worktree of the repository at /w/repo"}},
		{"admin entry unknown", AdoptAdminUnknownRefusal(path), &Refusal{Code: CodeNotOwned, Path: path, Retry: "git worktree list",
			Message: "git's admin entry for " + path + " cannot be identified exactly (its .git file and the entry's gitdir must name each other)"}},
		{"key held", AdoptKeyHeldRefusal(path, "repo", other), &Refusal{Code: CodeWrongState, Path: path, Retry: "custody show repo",
			Message: "git's admin key repo of " + path + " is held by record repo (active) of the tree at /w/elsewhere/repo; custody will not guess whether that tree moved here or is gone (if it is gone, finish repo and retire it with a plan, then adopt again)"}},
		{"already recorded", AdoptRecordedRefusal(path, "repo", Record{ID: "repo", Path: path, State: StateActive}, false), &Refusal{Code: CodeWrongState, Path: path,
			Retry: "custody show repo", Message: path + " is already in custody as repo (active)"}},
		{"recorded, if needed", AdoptRecordedRefusal(path, "repo1", Record{ID: "repo", Path: path, State: StateFinished}, true), &Refusal{Code: CodeWrongState, Path: path,
			Retry:   "custody show repo",
			Message: path + " is recorded as repo (finished), but git's admin entry repo1 or its ready marker no longer names that record: the tree there may not be the one custody recorded"}},
		{"race", AdoptRaceRefusal("repo", path), &Refusal{Code: CodeWrongState, Path: path, Retry: "custody list --all",
			Message: "a record repo was made while custody adopted " + path + "; run adopt again"}},
	})
}

func TestBranchRefusals(t *testing.T) {
	t.Parallel()
	const at = "/w/repo/.worktrees/other-1a2b3c"
	checkRefusals(t, []refusalCase{
		{"invalid", BranchInvalidRefusal("fix", "a..b", "it holds '..'"), &Refusal{Code: CodeBranchInvalid, Retry: "custody new fix",
			Message: "a..b is not a valid branch name: it holds '..' (git check-ref-format --branch refuses it); nothing was made: give --branch a name git accepts, or leave --branch out and custody names the branch"}},
		{"invalid, a name with a space and a leading dash", BranchInvalidRefusal("-my fix", "a b", "it holds \" \""), &Refusal{Code: CodeBranchInvalid, Retry: "custody new -- '-my fix'",
			Message: `'a b' is not a valid branch name: it holds " " (git check-ref-format --branch refuses it); nothing was made: give --branch a name git accepts, or leave --branch out and custody names the branch`}},
		{"invalid, a control shown escaped", BranchInvalidRefusal("fix", "a\nb", "it holds a control character"), &Refusal{Code: CodeBranchInvalid, Retry: "custody new fix",
			Message: `'a\nb' is not a valid branch name: it holds a control character (git check-ref-format --branch refuses it); nothing was made: give --branch a name git accepts, or leave --branch out and custody names the branch`}},
		{"exists, free", BranchExistsRefusal("my fix", "topic", ""), &Refusal{Code: CodeBranchExists, Retry: "custody new --checkout topic 'my fix'",
			Message: "branch topic already exists; nothing was made: to make the tree on it, use --checkout (custody never deletes a branch it did not create), or give --branch another name"}},
		{"exists, checked out", BranchExistsRefusal("fix", "it's", at), &Refusal{Code: CodeBranchExists, Path: at, Retry: `custody new --from 'refs/heads/it'\''s' fix`,
			Message: "branch 'it'\\''s' already exists and is checked out in the worktree at " + at + "; nothing was made: give --branch another name, or start a tree on a branch of custody's own from it"}},
		{"missing", BranchMissingRefusal("topic", ""), &Refusal{Code: CodeBranchMissing, Retry: "git branch --list",
			Message: "there is no local branch topic; nothing was made: --checkout takes an existing local branch (git branch --list shows them), and --branch makes a new one"}},
		{"missing, not a branch name", BranchMissingRefusal("../x", "it holds '..'"), &Refusal{Code: CodeBranchMissing, Retry: "git branch --list",
			Message: "../x is not a valid branch name (it holds '..'), so no local branch has it; nothing was made: --checkout takes an existing local branch (git branch --list shows them), and --branch makes a new one"}},
		{"checked out", BranchCheckedOutRefusal("fix", "feature/login", at), &Refusal{Code: CodeBranchCheckedOut, Path: at, Retry: "custody new --from refs/heads/feature/login fix",
			Message: "branch feature/login is checked out in the worktree at " + at + ", and git checks a branch out in one worktree at a time; nothing was made: switch that worktree to another branch first, or start a tree on a branch of custody's own from it"}},
	})
}
