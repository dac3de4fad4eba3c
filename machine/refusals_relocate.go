package machine

import "fmt"

// The refusals of relocate: a destination it will not move a tree to, and
// a move git did not make.

// relocateTargetRefusal refuses to move record id's tree to dst; nothing
// was moved.
func relocateTargetRefusal(code Code, id, dst, format string, args ...any) *Refusal {
	return &Refusal{Code: code, Path: dst, Retry: CommandOn([]string{"custody", "relocate"}, id) + " --to DIR",
		Message: EscapeControl(fmt.Sprintf(format, args...)) + "; nothing was moved: name another destination"}
}

// DestinationUnresolvedRefusal refuses dst, the destination of record id's
// tree, whose nearest existing ancestor parent cannot be resolved (err).
func DestinationUnresolvedRefusal(id, dst, parent string, err error) *Refusal {
	return relocateTargetRefusal(CodeUnsafeTarget, id, dst, "the destination's parent %s cannot be resolved: %v", parent, err)
}

// DestinationUnderSymlinkRefusal refuses dst, the destination of record
// id's tree, whose nearest existing ancestor existing resolves to real.
func DestinationUnderSymlinkRefusal(id, dst, existing, real string) *Refusal {
	return relocateTargetRefusal(CodeSymlink, id, dst, "the destination %s lies under a symlink (%s resolves to %s); custody moves trees only to a real path", dst, existing, real)
}

// DestinationParentNotDirectoryRefusal refuses dst, the destination of
// record id's tree, whose nearest existing ancestor parent is not a
// directory.
func DestinationParentNotDirectoryRefusal(id, dst, parent string) *Refusal {
	return relocateTargetRefusal(CodeUnsafeTarget, id, dst, "the destination's parent %s is not a directory", parent)
}

// DestinationParentSymlinkRefusal refuses dst, the destination of record
// id's tree, whose parent does not resolve to itself.
func DestinationParentSymlinkRefusal(id, dst string) *Refusal {
	return relocateTargetRefusal(CodeSymlink, id, dst, "the destination %s lies under a symlink; custody moves trees only to a real path", dst)
}

// DestinationInTreeRefusal refuses dst, inside the very tree (at tree) of
// record id that is to move.
func DestinationInTreeRefusal(id, dst, tree string) *Refusal {
	return relocateTargetRefusal(CodeUnsafeTarget, id, dst, "the destination %s is inside the tree %s itself", dst, tree)
}

// DestinationInGitDirRefusal refuses dst, the destination of record id's
// tree, inside the repository's git directory.
func DestinationInGitDirRefusal(id, dst string) *Refusal {
	return relocateTargetRefusal(CodeUnsafeTarget, id, dst, "the destination %s is inside the repository's git directory", dst)
}

// DestinationInWorktreeRefusal refuses dst, the destination of record id's
// tree, inside the worktree at worktree.
func DestinationInWorktreeRefusal(id, dst, worktree string) *Refusal {
	return relocateTargetRefusal(CodeUnsafeTarget, id, dst, "the destination %s is inside the worktree %s", dst, worktree)
}

// RelocationInterruptedRefusal reports a relocation of the tree at path to
// target interrupted while git moved it (moveErr): its intent stays.
func RelocationInterruptedRefusal(path, target string, moveErr error) *Refusal {
	return &Refusal{Code: CodeIntentPending, Path: path, Retry: "custody resume",
		Message: fmt.Sprintf("interrupted while git worktree move was moving %s to %s (%v); its relocation intent stays, and custody resume finishes or steps back", path, target, moveErr)}
}

// RelocationFailedRefusal reports that git worktree move did not move
// record id's tree from path to target, and the record stepped back.
// moveErr is why (nil when git reported no error); notTried says the move
// was not made at all (what was checked right before it stood in the
// way), so relocate itself, retry, is what to run again.
func RelocationFailedRefusal(id, path, target string, moveErr error, notTried bool, retry string) *Refusal {
	why := "git reported no error, yet the tree did not move"
	if moveErr != nil {
		why = moveErr.Error()
	}
	again := "git worktree list --porcelain"
	if notTried {
		again = retry
	}
	return &Refusal{Code: CodeRelocationFailed, Path: path, Retry: again,
		Message: EscapeControl(fmt.Sprintf("git worktree move did not move %s to %s (%s); the tree stays where it was and %s is active there", path, target, why, id))}
}

// RelocationLeftRefusal reports record id (tree at path) left in state
// after git worktree move, with its relocation intent kept for resume.
func RelocationLeftRefusal(id, path string, state State) *Refusal {
	return &Refusal{Code: CodeResumeUnmatched, Path: path, Retry: CommandOn([]string{"custody", "show"}, id),
		Message: fmt.Sprintf("after git worktree move, %s was left %s; its relocation intent stays for custody resume", id, state)}
}

// RelocatedElsewhereRefusal refuses to repair record id's relocation: the
// directory it moved is at dest, unregistered, but its .git file does not
// name the admin entry admin.
func RelocatedElsewhereRefusal(id, dest, admin string) *Refusal {
	return &Refusal{Code: CodeResumeUnmatched, Path: dest, Retry: CommandOn([]string{"custody", "show"}, id),
		Message: EscapeControl(fmt.Sprintf("%s is relocating, and the directory it moved is at %s, unregistered, but its .git file does not name the admin entry %s; which repository it belongs to is the person's to say, custody will not guess", id, dest, admin))}
}
