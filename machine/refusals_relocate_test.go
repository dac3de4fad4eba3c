package machine

import (
	"errors"
	"testing"
)

func TestRelocateTargetRefusals(t *testing.T) {
	t.Parallel()
	const id = "x-1a2b3c"
	retry := "custody relocate " + id + " --to DIR"
	const tail = "; nothing was moved: name another destination"
	checkRefusals(t, []refusalCase{
		{"parent unresolved", DestinationUnresolvedRefusal(id, "/d/x", "/d", errors.New("permission denied")), &Refusal{Code: CodeUnsafeTarget, Path: "/d/x", Retry: retry,
			Message: "the destination's parent /d cannot be resolved: permission denied" + tail}},
		{"under a symlink", DestinationUnderSymlinkRefusal(id, "/l/x", "/l", "/real"), &Refusal{Code: CodeSymlink, Path: "/l/x", Retry: retry,
			Message: "the destination /l/x lies under a symlink (/l resolves to /real); custody moves trees only to a real path" + tail}},
		{"parent not a directory", DestinationParentNotDirectoryRefusal(id, "/f/x", "/f"), &Refusal{Code: CodeUnsafeTarget, Path: "/f/x", Retry: retry,
			Message: "the destination's parent /f is not a directory" + tail}},
		{"parent a symlink", DestinationParentSymlinkRefusal(id, "/l/x"), &Refusal{Code: CodeSymlink, Path: "/l/x", Retry: retry,
			Message: "the destination /l/x lies under a symlink; custody moves trees only to a real path" + tail}},
		{"inside the tree", DestinationInTreeRefusal(id, "/t/x/in", "/t/x"), &Refusal{Code: CodeUnsafeTarget, Path: "/t/x/in", Retry: retry,
			Message: "the destination /t/x/in is inside the tree /t/x itself" + tail}},
		{"inside the git directory", DestinationInGitDirRefusal(id, "/r/.git/x"), &Refusal{Code: CodeUnsafeTarget, Path: "/r/.git/x", Retry: retry,
			Message: "the destination /r/.git/x is inside the repository's git directory" + tail}},
		{"inside a worktree", DestinationInWorktreeRefusal(id, "/w/repo/x", "/w/repo"), &Refusal{Code: CodeUnsafeTarget, Path: "/w/repo/x", Retry: retry,
			Message: "the destination /w/repo/x is inside the worktree /w/repo" + tail}},
		// The message is escaped, never the path; the id is quoted in the
		// retry, and "--" keeps one that reads as a flag an operand.
		{"odd bytes escaped in the message only", DestinationInWorktreeRefusal("-a b", "/w/x\ny\xff", "/w/a\tb\\c"), &Refusal{Code: CodeUnsafeTarget,
			Path: "/w/x\ny\xff", Retry: "custody relocate -- '-a b' --to DIR",
			Message: `the destination /w/x\ny\xff is inside the worktree /w/a\tb\\c` + tail}},
	})
}

func TestRelocationRefusals(t *testing.T) {
	t.Parallel()
	const (
		id   = "x-1a2b3c"
		path = "/r/.worktrees/x-1a2b3c"
	)
	retry := "custody relocate " + id + " --to /d/x"
	moveErr := errors.New("exit status 128: fatal: '/d/x' already exists")
	checkRefusals(t, []refusalCase{
		{"interrupted", RelocationInterruptedRefusal(path, "/d/x", errors.New("signal: killed")), &Refusal{Code: CodeIntentPending, Path: path, Retry: "custody resume",
			Message: "interrupted while git worktree move was moving " + path + " to /d/x (signal: killed); its relocation intent stays, and custody resume finishes or steps back"}},
		{"git failed", RelocationFailedRefusal(id, path, "/d/x", moveErr, false, retry), &Refusal{Code: CodeRelocationFailed, Path: path, Retry: "git worktree list --porcelain",
			Message: "git worktree move did not move " + path + " to /d/x (exit status 128: fatal: '/d/x' already exists); the tree stays where it was and " + id + " is active there"}},
		{"git reported nothing", RelocationFailedRefusal(id, path, "/d/x", nil, false, retry), &Refusal{Code: CodeRelocationFailed, Path: path, Retry: "git worktree list --porcelain",
			Message: "git worktree move did not move " + path + " to /d/x (git reported no error, yet the tree did not move); the tree stays where it was and " + id + " is active there"}},
		{"not tried: relocate again", RelocationFailedRefusal(id, path, "/d/x", errors.New("the destination appeared after it was observed"), true, retry), &Refusal{Code: CodeRelocationFailed, Path: path,
			Retry:   retry,
			Message: "git worktree move did not move " + path + " to /d/x (the destination appeared after it was observed); the tree stays where it was and " + id + " is active there"}},
		{"git failed, odd bytes escaped", RelocationFailedRefusal(id, "/r/a\nb", "/d/\x1b[2J", errors.New("no\rway"), false, retry), &Refusal{Code: CodeRelocationFailed, Path: "/r/a\nb",
			Retry:   "git worktree list --porcelain",
			Message: `git worktree move did not move /r/a\nb to /d/\e[2J (no\rway); the tree stays where it was and ` + id + " is active there"}},
		{"left in a state", RelocationLeftRefusal(id, path, StateRelocating), &Refusal{Code: CodeResumeUnmatched, Path: path, Retry: "custody show " + id,
			Message: "after git worktree move, " + id + " was left relocating; its relocation intent stays for custody resume"}},
		{"moved elsewhere", RelocatedElsewhereRefusal(id, "/d/x", "/r/.git/worktrees/x"), &Refusal{Code: CodeResumeUnmatched, Path: "/d/x", Retry: "custody show " + id,
			Message: id + " is relocating, and the directory it moved is at /d/x, unregistered, but its .git file does not name the admin entry /r/.git/worktrees/x; which repository it belongs to is the person's to say, custody will not guess"}},
		{"moved elsewhere, odd bytes escaped", RelocatedElsewhereRefusal(id, "/d/x\x7f", "/r/.git/worktrees/x"), &Refusal{Code: CodeResumeUnmatched, Path: "/d/x\x7f", Retry: "custody show " + id,
			Message: id + ` is relocating, and the directory it moved is at /d/x\x7f, unregistered, but its .git file does not name the admin entry /r/.git/worktrees/x; which repository it belongs to is the person's to say, custody will not guess`}},
	})
}
