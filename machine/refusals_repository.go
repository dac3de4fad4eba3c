package machine

import (
	"fmt"
	"time"
)

// The refusals of finding the repository a command acts on and of taking
// git's worktree registry lock: every command meets them before it reads
// a record.

// NoDirectoryRefusal refuses dir, the directory a command was to act
// from (-C DIR, or the working directory), which is not there or is no
// directory.
func NoDirectoryRefusal(dir string) *Refusal {
	return &Refusal{Code: CodeNotARepository, Path: dir, Retry: "custody -C REPO ...",
		Message: fmt.Sprintf("%s does not exist or is not a directory", dir)}
}

// NotARepositoryRefusal refuses dir, which git says lies inside no
// repository; gitSaid is the first line of what git printed.
func NotARepositoryRefusal(dir, gitSaid string) *Refusal {
	return &Refusal{Code: CodeNotARepository, Path: dir, Retry: "custody -C REPO ...",
		Message: fmt.Sprintf("%s is not inside a git repository (%s)", dir, gitSaid)}
}

// BareRepositoryRefusal refuses the bare repository at commonDir.
func BareRepositoryRefusal(commonDir string) *Refusal {
	return &Refusal{Code: CodeBareRepository, Path: commonDir, Retry: "custody -C CHECKOUT ...",
		Message: fmt.Sprintf("%s is a bare repository: custody keeps worktrees beside a main checkout, which a bare repository lacks", commonDir)}
}

// AmbiguousRepositoryRefusal refuses the repository found from dir, whose
// common dir or main checkout cannot be identified exactly; why says
// what disagreed.
func AmbiguousRepositoryRefusal(dir, why string) *Refusal {
	return &Refusal{Code: CodeAmbiguousRepository, Path: dir, Retry: "custody doctor", Message: why}
}

// RegistryLockSymlinkRefusal refuses git's worktree registry lock at
// path, which is a symbolic link: nothing is written through it.
func RegistryLockSymlinkRefusal(path string) *Refusal {
	return &Refusal{Code: CodeUnsafeTarget, Path: path, Retry: Command("rm", "--", path),
		Message: fmt.Sprintf("the worktree registry lock %s is a symlink; custody writes nothing through it and changed nothing (the lock holds nothing of value: remove the link)", path)}
}

// RegistryLockNotRegularRefusal refuses git's worktree registry lock at
// path, which is not a regular file.
func RegistryLockNotRegularRefusal(path string) *Refusal {
	return &Refusal{Code: CodeLockTimeout, Path: path, Retry: Command("rm", "--", path),
		Message: fmt.Sprintf("the worktree registry lock %s is not a regular file; custody changed nothing", path)}
}

// RegistryLockHeldRefusal refuses to wait longer than waited for git's
// worktree registry lock at path, held by holder (its note); retry is the
// command again with a longer --lock-timeout.
func RegistryLockHeldRefusal(path string, waited time.Duration, holder, retry string) *Refusal {
	return &Refusal{Code: CodeLockTimeout, Path: path, Retry: retry,
		Message: fmt.Sprintf("the worktree registry lock %s stayed held for %s (%s); another custody is changing this repository's worktrees", path, waited, holder)}
}
