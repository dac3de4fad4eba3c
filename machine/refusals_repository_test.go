package machine

import (
	"testing"
	"time"
)

func TestRepositoryRefusals(t *testing.T) {
	t.Parallel()
	const (
		dir  = "/home/p/my repo"
		lock = "/home/p/my repo/.git/worktrees.lock"
	)
	checkRefusals(t, []refusalCase{
		{"no directory", NoDirectoryRefusal("/missing"), &Refusal{Code: CodeNotARepository, Path: "/missing", Retry: "custody -C REPO ...",
			Message: "/missing does not exist or is not a directory"}},
		{"not a repository", NotARepositoryRefusal(dir, "fatal: not a git repository (or any of the parent directories): .git"),
			&Refusal{Code: CodeNotARepository, Path: dir, Retry: "custody -C REPO ...",
				Message: "/home/p/my repo is not inside a git repository (fatal: not a git repository (or any of the parent directories): .git)"}},
		{"bare", BareRepositoryRefusal("/srv/r.git"), &Refusal{Code: CodeBareRepository, Path: "/srv/r.git", Retry: "custody -C CHECKOUT ...",
			Message: "/srv/r.git is a bare repository: custody keeps worktrees beside a main checkout, which a bare repository lacks"}},
		{"ambiguous", AmbiguousRepositoryRefusal(dir, "git names /a as the main worktree, but the common dir says /b"),
			&Refusal{Code: CodeAmbiguousRepository, Path: dir, Retry: "custody doctor",
				Message: "git names /a as the main worktree, but the common dir says /b"}},
		{"lock is a symlink, the removal quoted", RegistryLockSymlinkRefusal(lock), &Refusal{Code: CodeUnsafeTarget, Path: lock,
			Retry:   "rm -- '/home/p/my repo/.git/worktrees.lock'",
			Message: "the worktree registry lock /home/p/my repo/.git/worktrees.lock is a symlink; custody writes nothing through it and changed nothing (the lock holds nothing of value: remove the link)"}},
		{"lock is not a file", RegistryLockNotRegularRefusal("/r/.git/-lock"), &Refusal{Code: CodeLockTimeout, Path: "/r/.git/-lock",
			Retry:   "rm -- /r/.git/-lock",
			Message: "the worktree registry lock /r/.git/-lock is not a regular file; custody changed nothing"}},
		{"lock held", RegistryLockHeldRefusal(lock, 2*time.Second, "pid 42: custody apply plan.json", "custody --lock-timeout 60s apply plan.json"),
			&Refusal{Code: CodeLockTimeout, Path: lock, Retry: "custody --lock-timeout 60s apply plan.json",
				Message: "the worktree registry lock /home/p/my repo/.git/worktrees.lock stayed held for 2s (pid 42: custody apply plan.json); another custody is changing this repository's worktrees"}},
	})
}
