package machine

import "fmt"

// The refusals of the repository's custody setup: a managed root custody
// will not place trees under, git's exclude file it cannot write, and a
// custody.toml whose commands no person approved.

// rootRefusal refuses the managed root root (unsafe-target).
func rootRefusal(root, format string, args ...any) *Refusal {
	return &Refusal{Code: CodeUnsafeTarget, Path: root, Retry: "custody init",
		Message: EscapeControl(fmt.Sprintf(format, args...)) + "; set [worktree] root in custody.toml to a real directory"}
}

// RootUnresolvedRefusal refuses the managed root root, whose nearest
// existing ancestor cannot be resolved (err).
func RootUnresolvedRefusal(root string, err error) *Refusal {
	return rootRefusal(root, "the managed root %s cannot be resolved: %v", root, err)
}

// RootUnderSymlinkRefusal refuses the managed root root, whose nearest
// existing ancestor existing resolves to real.
func RootUnderSymlinkRefusal(root, existing, real string) *Refusal {
	return rootRefusal(root, "the managed root %s lies under a symlink (%s resolves to %s); custody places worktrees only on a real path", root, existing, real)
}

// RootNotExcludableRefusal refuses a managed root inside the main checkout
// that no line of git's exclude file can name (its name holds a newline):
// git in the main checkout would see every tree there.
func RootNotExcludableRefusal(root string) *Refusal {
	return &Refusal{Code: CodeConfigInvalid, Path: root, Retry: "custody init",
		Message: EscapeControl(fmt.Sprintf("the managed root %s lies in the main checkout and its name holds a newline, which git's exclude file cannot name (one pattern a line), so git there would see every tree in it", root)) +
			"; set [worktree] root in custody.toml to a directory whose name has none"}
}

// RootNotDirectoryRefusal refuses the managed root root, a symlink or not
// a directory.
func RootNotDirectoryRefusal(root string) *Refusal {
	return &Refusal{Code: CodeSymlink, Path: root, Retry: "custody init",
		Message: fmt.Sprintf("the managed root %s is a symlink or not a directory; custody places worktrees only under a real directory: move it aside, or set [worktree] root in custody.toml", EscapeControl(root))}
}

// excludeRefusal refuses adding line to git's exclude file at path: msg
// says why, retry what to do.
func excludeRefusal(path, line, msg, retry string) *Refusal {
	return &Refusal{Code: CodeUnsafeTarget, Path: path, Retry: retry,
		Message: fmt.Sprintf("custody adds %s to git's exclude file, but %s", line, msg)}
}

// notRegularRetry makes path a regular file, for the person to run the
// command again.
func notRegularRetry(path string) string {
	return "make " + QuoteArg(path) + " a regular file, then run the command again"
}

// ExcludeDirRefusal refuses adding line to git's exclude file at path,
// whose directory is not a directory of the git directory's own (err).
func ExcludeDirRefusal(path, line string, err error) *Refusal {
	return excludeRefusal(path, line, err.Error()+"; make it a directory of the git directory's own", "custody doctor")
}

// ExcludeLinkRefusal refuses adding line to git's exclude file at path, a
// link that cannot be followed (err is why it is not a regular file).
func ExcludeLinkRefusal(path, line string, err error) *Refusal {
	return excludeRefusal(path, line, fmt.Sprintf("%v; custody writes nothing through it", err), notRegularRetry(path))
}

// ExcludeLinkedRefusal refuses adding line to git's exclude file at path,
// a link to target (err is why it is not a regular file): the retry
// appends the line to target, the person's own choice to write there.
func ExcludeLinkedRefusal(path, line, target string, err error) *Refusal {
	return excludeRefusal(path, line, fmt.Sprintf("%v (to %s); custody writes nothing through a link under the git directory: add the line to %s yourself, or make the link a regular file", err, target, target),
		Command("printf", `%s\n`, line)+" >> "+QuoteArg(target))
}

// ExcludeNotRegularRefusal refuses adding line to git's exclude file at
// path, which became something else than a regular file (err) while
// custody wrote it.
func ExcludeNotRegularRefusal(path, line string, err error) *Refusal {
	return excludeRefusal(path, line, err.Error(), notRegularRetry(path))
}

// ConfigUntrustedRefusal refuses running the resource commands the
// configuration file at path (ConfigFile when "") with SHA-256 digest
// ("unknown" when "") declares: no person approved this content.
func ConfigUntrustedRefusal(path, digest string) *Refusal {
	if path == "" {
		path = ConfigFile
	}
	if digest == "" {
		digest = "unknown"
	}
	return &Refusal{Code: CodeConfigUntrusted, Path: path, Retry: "custody trust",
		Message: fmt.Sprintf("%s (sha256 %s) declares resource commands that were never approved in this content; nothing was run or made: read it, then approve it with custody trust",
			EscapeControl(path), digest)}
}
