package machine

import (
	"fmt"
	"strings"
)

// The refusals of archives: creating one of a tree, checking it, pruning
// it or stripping its build output, and restoring it.

// ArchiveVerifyRetry checks the archive in dir again.
func ArchiveVerifyRetry(dir string) string {
	return "custody archive verify " + QuotePath(dir)
}

// ArchiveRestoreRetry restores the archive in dir into target again.
func ArchiveRestoreRetry(dir, target string) string {
	return "custody archive restore " + QuotePath(dir) + " " + QuotePath(target)
}

// ArchivesDirUnsafeRefusal refuses writing archives into dir, a symlink or
// not a directory.
func ArchivesDirUnsafeRefusal(dir string) *Refusal {
	return &Refusal{Code: CodeUnsafeTarget, Path: dir, Retry: "custody archive list",
		Message: fmt.Sprintf("%s is a symlink or not a directory; archives are written only into a real directory", EscapeControl(dir))}
}

// ArchiveWrongStateRefusal refuses archiving record id (rec), which is
// neither active nor finished.
func ArchiveWrongStateRefusal(id string, rec Record) *Refusal {
	return &Refusal{Code: CodeWrongState, Path: rec.Path, Retry: CommandOn([]string{"custody", "show"}, id),
		Message: fmt.Sprintf("cannot archive %s: it is %s; only an active or finished tree is archived", id, rec.State)}
}

// ArchiveTreeMissingRefusal refuses archiving record id, whose tree at
// path is not a directory (err, nil when it is something else).
func ArchiveTreeMissingRefusal(id, path string, err error) *Refusal {
	return &Refusal{Code: CodeWorktreeMissing, Path: path, Retry: CommandOn([]string{"custody", "show"}, id),
		Message: fmt.Sprintf("cannot archive %s: %s is not a directory (%v)", id, EscapeControl(path), err)}
}

// ArchiveHeadUnknownRefusal refuses archiving record id, whose tree at
// path has a HEAD that cannot be read (err).
func ArchiveHeadUnknownRefusal(id, path string, err error) *Refusal {
	return &Refusal{Code: CodeHeadUnknown, Path: path, Retry: CommandOn([]string{"custody", "archive", "create"}, id),
		Message: fmt.Sprintf("cannot archive %s: HEAD of %s cannot be read: %v", id, EscapeControl(path), err)}
}

// ArchiveUnsupportedRefusal refuses archiving record id, whose tree at
// tree holds what no archive restores byte for byte (what), the first of
// it at entry.
func ArchiveUnsupportedRefusal(id, tree, entry, what string) *Refusal {
	return &Refusal{Code: CodeArchiveUnsupported, Path: entry,
		Retry: CommandOn([]string{"custody", "archive", "create"}, id),
		Message: fmt.Sprintf("cannot archive %s: %s holds %s, which no archive can restore byte for byte; move it out of the tree",
			id, EscapeControl(tree), EscapeControl(what))}
}

// ArchiveScratchUnsafeRefusal refuses removing scratch, the scratch
// directory archive id's intent names, which is not .scratch-<id> beside
// the archive's directory.
func ArchiveScratchUnsafeRefusal(id, scratch string) *Refusal {
	return &Refusal{Code: CodeUnsafeTarget, Path: scratch, Retry: CommandOn([]string{"custody", "show"}, id),
		Message: fmt.Sprintf("archive %s's scratch %s is not .scratch-%s beside its directory; custody removes nothing else", id, EscapeControl(scratch), id)}
}

// ArchiveProofFailedRefusal reports that the archive of record rec could
// not be checked (err): it proves nothing.
func ArchiveProofFailedRefusal(rec Record, err error) *Refusal {
	return &Refusal{Code: CodeProofFailed, Path: rec.Path, Retry: CommandOn([]string{"custody", "archive", "verify"}, rec.ID),
		Message: fmt.Sprintf("the archive of %s could not be checked: %v", rec.ID, err)}
}

// ArchiveUncomparedRefusal reports that the tree at path could not be
// compared with archive id (fresh says how the comparison ended).
func ArchiveUncomparedRefusal(path, id, fresh string) *Refusal {
	return &Refusal{Code: CodeArchiveStale, Path: path, Retry: CommandOn([]string{"custody", "archive", "verify"}, id),
		Message: fmt.Sprintf("%s could not be compared with archive %s (%s)", path, id, fresh)}
}

// NoArchiveRefusal refuses ref, which names no archive of this repository
// nor one under root.
func NoArchiveRefusal(ref, root string) *Refusal {
	return &Refusal{Code: CodeUnknownRecord, Retry: "custody archive list",
		Message: fmt.Sprintf("no archive %q in this repository or under %s", ref, root)}
}

// ArchiveMissingRefusal refuses checking the archive in dir, which does
// not exist.
func ArchiveMissingRefusal(dir string) *Refusal {
	return &Refusal{Code: CodeArchiveIncomplete, Path: dir, Retry: "custody archive list",
		Message: fmt.Sprintf("%s does not exist", EscapeControl(dir))}
}

// ArchiveManifestDigestRefusal reports that the manifest at manifest, of
// the archive in dir, has SHA-256 sum though archive id was sealed with
// sealed.
func ArchiveManifestDigestRefusal(dir, manifest, sum, id, sealed string) *Refusal {
	return &Refusal{Code: CodeArchiveDigestMismatch, Path: manifest, Retry: ArchiveVerifyRetry(dir),
		Message: fmt.Sprintf("%s has SHA-256 %s; archive %s was sealed with %s", manifest, sum, id, sealed)}
}

// noArchiveDirMessage says no archive directory name is under root.
func noArchiveDirMessage(name, root string) string {
	return fmt.Sprintf("no archive directory %q under %s", name, root)
}

// NoArchiveDirToPruneRefusal refuses pruning name, which names no archive
// directory (dir) under root.
func NoArchiveDirToPruneRefusal(dir, name, root string) *Refusal {
	return &Refusal{Code: CodeUnknownRecord, Path: dir, Retry: "custody archive prune", Message: noArchiveDirMessage(name, root)}
}

// NoArchiveDirToStripRefusal refuses stripping name, which names no
// archive directory (dir) under root.
func NoArchiveDirToStripRefusal(dir, name, root string) *Refusal {
	return &Refusal{Code: CodeUnknownRecord, Path: dir, Retry: "custody archive prune --strip-build-output", Message: noArchiveDirMessage(name, root)}
}

// UnrecordedArchiveToPruneRefusal refuses pruning the archive id in dir,
// which this repository holds no record of.
func UnrecordedArchiveToPruneRefusal(id, dir string) *Refusal {
	return &Refusal{Code: CodeUnknownRecord, Path: dir, Retry: "custody archive list",
		Message: fmt.Sprintf("this repository holds no record of archive %s at %s; custody prunes only the archives it made", id, dir)}
}

// UnrecordedArchiveToStripRefusal refuses stripping the archive id in
// dir, which this repository holds no record of.
func UnrecordedArchiveToStripRefusal(id, dir string) *Refusal {
	return &Refusal{Code: CodeUnknownRecord, Path: dir, Retry: "custody archive list",
		Message: fmt.Sprintf("this repository holds no record of archive %s at %s; custody strips only the archives it made", id, dir)}
}

// ArchiveBecameSymlinkRefusal stops deleting the archive in dir, which
// became a symbolic link; nothing was deleted.
func ArchiveBecameSymlinkRefusal(dir string) *Refusal {
	return &Refusal{Code: CodeArchiveInvalid, Path: dir, Retry: ArchiveVerifyRetry(dir), Message: fmt.Sprintf("%s became a symbolic link; nothing was deleted", dir)}
}

// ManifestChangedBeforeDeleteRefusal stops deleting the archive in dir,
// whose manifest changed since it was assessed; nothing was deleted.
func ManifestChangedBeforeDeleteRefusal(dir string) *Refusal {
	return &Refusal{Code: CodeArchiveInvalid, Path: dir, Retry: ArchiveVerifyRetry(dir),
		Message: fmt.Sprintf("%s/%s changed since it was assessed; nothing was deleted", dir, ArchiveManifestName)}
}

// ManifestChangedBeforeSwapRefusal stops a strip of the archive in dir,
// whose manifest changed since it was assessed; nothing was swapped.
func ManifestChangedBeforeSwapRefusal(dir string) *Refusal {
	return &Refusal{Code: CodeArchiveInvalid, Path: dir, Retry: ArchiveVerifyRetry(dir),
		Message: fmt.Sprintf("%s/%s changed since it was assessed; nothing was swapped", dir, ArchiveManifestName)}
}

// ManifestSwapDigestRefusal stops a strip of the archive id in dir, whose
// manifest has SHA-256 sum though it was sealed with sealed.
func ManifestSwapDigestRefusal(dir, sum, id, sealed string) *Refusal {
	return &Refusal{Code: CodeArchiveDigestMismatch, Path: dir, Retry: ArchiveVerifyRetry(dir),
		Message: fmt.Sprintf("%s/%s has SHA-256 %s; archive %s was sealed with %s, so the strip was not swapped in", dir, ArchiveManifestName, sum, id, sealed)}
}

// ArchiveFileNotRegularRefusal stops deleting the archive in dir at p, a
// file its manifest names that is not a regular file; it was kept.
func ArchiveFileNotRegularRefusal(dir, p string) *Refusal {
	return &Refusal{Code: CodeArchiveInvalid, Path: p, Retry: ArchiveVerifyRetry(dir), Message: fmt.Sprintf("%s is not a regular file; it was kept", p)}
}

// ArchiveHoldsUnnamedRefusal reports that the archive directory dir was
// kept: it holds what its manifest did not name (err, of its rmdir).
func ArchiveHoldsUnnamedRefusal(dir string, err error) *Refusal {
	return &Refusal{Code: CodeArchiveInvalid, Path: dir, Retry: ArchiveVerifyRetry(dir),
		Message: fmt.Sprintf("%s holds what its manifest did not name, so it was kept: %v", dir, err)}
}

// NestedImageUnreadableRefusal refuses restoring the archive in dir: the
// image image (at path) of its nested repository nested cannot be read
// (err); nothing was written.
func NestedImageUnreadableRefusal(dir, path, image, nested string, err error) *Refusal {
	return &Refusal{Code: CodeArchiveInvalid, Path: path, Retry: ArchiveVerifyRetry(dir),
		Message: fmt.Sprintf("the image %s of nested repository %s cannot be read, nothing was written: %v", image, nested, err)}
}

// BundlePrerequisitesGoneRefusal refuses restoring from bundle, which
// stands on commits prerequisites that neither the recorded remotes nor
// the repository at common hold now.
func BundlePrerequisitesGoneRefusal(bundle, retry string, prerequisites []string, common string) *Refusal {
	return &Refusal{Code: CodeArchiveBundleInvalid, Path: bundle, Retry: retry,
		Message: fmt.Sprintf("%s stands on commits %s, which neither the recorded remotes nor %s hold now", bundle,
			strings.Join(prerequisites, ", "), common)}
}

// ArchiveHeadGoneRefusal refuses restoring archive id in dir, whose HEAD
// head is neither in its bundle nor on its remotes now (err).
func ArchiveHeadGoneRefusal(dir, retry, head, id string, err error) *Refusal {
	return &Refusal{Code: CodeArchiveIncomplete, Path: dir, Retry: retry,
		Message: fmt.Sprintf("HEAD %s of archive %s is neither in its bundle nor on its remotes now: %v", head, id, err)}
}

// ArchiveHeadTreeGoneRefusal refuses stripping archive id in dir, whose
// HEAD's tree headTree is nowhere to be had now.
func ArchiveHeadTreeGoneRefusal(dir, retry, headTree, id string) *Refusal {
	return &Refusal{Code: CodeArchiveIncomplete, Path: dir, Retry: retry,
		Message: fmt.Sprintf("HEAD's tree %s of archive %s is neither in its repository, its bundle nor on its remotes now, so its patch cannot be rewritten", headTree, id)}
}

// PatchNotApplyingRefusal refuses an archive whose patch at patch does not
// apply to HEAD's tree (err).
func PatchNotApplyingRefusal(patch, retry string, err error) *Refusal {
	return &Refusal{Code: CodeArchiveInvalid, Path: patch, Retry: retry,
		Message: fmt.Sprintf("%s does not apply to HEAD's tree: %v", patch, err)}
}

// PatchTreeMismatchRefusal refuses an archive whose HEAD's tree with its
// patch at patch applied is got, not the want its manifest records.
func PatchTreeMismatchRefusal(patch, retry, got, want string) *Refusal {
	return &Refusal{Code: CodeArchiveInvalid, Path: patch, Retry: retry,
		Message: fmt.Sprintf("HEAD's tree with %s is %s; the manifest records %s", patch, got, want)}
}

// RestoreTargetTakenRefusal refuses restoring into target, which exists
// and is not an empty directory.
func RestoreTargetTakenRefusal(target, retry string) *Refusal {
	return &Refusal{Code: CodeUnsafeTarget, Path: target, Retry: retry,
		Message: fmt.Sprintf("%s exists and is not an empty directory; a restore writes only into a new one", EscapeControl(target))}
}
