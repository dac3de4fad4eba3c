package machine

import (
	"errors"
	"testing"
)

func TestArchiveCreateRefusals(t *testing.T) {
	t.Parallel()
	const (
		id   = "x-1a2b3c"
		path = "/r/.worktrees/x-1a2b3c"
	)
	rec := Record{ID: id, Path: path, State: StateRemoving}
	checkRefusals(t, []refusalCase{
		{"archives directory unsafe", ArchivesDirUnsafeRefusal("/a/arch\x1bives"), &Refusal{Code: CodeUnsafeTarget, Path: "/a/arch\x1bives", Retry: "custody archive list",
			Message: `/a/arch\eives is a symlink or not a directory; archives are written only into a real directory`}},
		{"wrong state", ArchiveWrongStateRefusal(id, rec), &Refusal{Code: CodeWrongState, Path: path, Retry: "custody show " + id,
			Message: "cannot archive " + id + ": it is removing; only an active or finished tree is archived"}},
		{"tree missing", ArchiveTreeMissingRefusal(id, path, errors.New("lstat: no such file or directory")), &Refusal{Code: CodeWorktreeMissing, Path: path,
			Retry: "custody show " + id, Message: "cannot archive " + id + ": " + path + " is not a directory (lstat: no such file or directory)"}},
		{"tree not a directory", ArchiveTreeMissingRefusal(id, "/r/a\nb", nil), &Refusal{Code: CodeWorktreeMissing, Path: "/r/a\nb",
			Retry: "custody show " + id, Message: "cannot archive " + id + `: /r/a\nb is not a directory (<nil>)`}},
		{"HEAD unknown", ArchiveHeadUnknownRefusal(id, path, errors.New("exit status 128")), &Refusal{Code: CodeHeadUnknown, Path: path,
			Retry: "custody archive create " + id, Message: "cannot archive " + id + ": HEAD of " + path + " cannot be read: exit status 128"}},
		{"unsupported", ArchiveUnsupportedRefusal(id, path, path+"/fifo", "a fifo fi\tfo"), &Refusal{Code: CodeArchiveUnsupported, Path: path + "/fifo",
			Retry:   "custody archive create " + id,
			Message: "cannot archive " + id + ": " + path + ` holds a fifo fi\tfo, which no archive can restore byte for byte; move it out of the tree`}},
		{"scratch unsafe", ArchiveScratchUnsafeRefusal("a-1", "/a/elsewhere\x7f"), &Refusal{Code: CodeUnsafeTarget, Path: "/a/elsewhere\x7f", Retry: "custody show a-1",
			Message: `archive a-1's scratch /a/elsewhere\x7f is not .scratch-a-1 beside its directory; custody removes nothing else`}},
		{"proof failed", ArchiveProofFailedRefusal(rec, errors.New("EIO")), &Refusal{Code: CodeProofFailed, Path: path, Retry: "custody archive verify " + id,
			Message: "the archive of " + id + " could not be checked: EIO"}},
		{"uncompared", ArchiveUncomparedRefusal(path, "a-1", "unreadable"), &Refusal{Code: CodeArchiveStale, Path: path, Retry: "custody archive verify a-1",
			Message: path + " could not be compared with archive a-1 (unreadable)"}},
	})
}

func TestArchiveCheckRefusals(t *testing.T) {
	t.Parallel()
	const dir = "/a/repo/x-1a2b3c-1"
	verify := "custody archive verify '" + dir + "'"
	checkRefusals(t, []refusalCase{
		{"no archive", NoArchiveRefusal("nosuch", "/a"), &Refusal{Code: CodeUnknownRecord, Retry: "custody archive list",
			Message: `no archive "nosuch" in this repository or under /a`}},
		{"missing", ArchiveMissingRefusal("/a/gone\n"), &Refusal{Code: CodeArchiveIncomplete, Path: "/a/gone\n", Retry: "custody archive list",
			Message: `/a/gone\n does not exist`}},
		{"manifest digest", ArchiveManifestDigestRefusal(dir, dir+"/manifest.json", "bb", "a-1", "aa"), &Refusal{Code: CodeArchiveDigestMismatch, Path: dir + "/manifest.json",
			Retry: verify, Message: dir + "/manifest.json has SHA-256 bb; archive a-1 was sealed with aa"}},
		{"a directory with a quote", ArchiveMissingRefusal("/a/it's"), &Refusal{Code: CodeArchiveIncomplete, Path: "/a/it's", Retry: "custody archive list",
			Message: "/a/it's does not exist"}},
	})
	if got, want := ArchiveVerifyRetry("/a/it's"), `custody archive verify '/a/it'\''s'`; got != want {
		t.Errorf("verify retry %q, want %q", got, want)
	}
	if got, want := ArchiveRestoreRetry("/a/x", "/w/new dir"), "custody archive restore '/a/x' '/w/new dir'"; got != want {
		t.Errorf("restore retry %q, want %q", got, want)
	}
}

func TestArchivePruneRefusals(t *testing.T) {
	t.Parallel()
	const dir = "/a/repo/x-1a2b3c-1"
	verify := "custody archive verify '" + dir + "'"
	manifest := dir + "/" + ArchiveManifestName
	checkRefusals(t, []refusalCase{
		{"no directory to prune", NoArchiveDirToPruneRefusal("/a/repo/nosuch", "nosuch", "/a/repo"), &Refusal{Code: CodeUnknownRecord, Path: "/a/repo/nosuch",
			Retry: "custody archive prune", Message: `no archive directory "nosuch" under /a/repo`}},
		{"no directory to strip", NoArchiveDirToStripRefusal("/a/repo/a/b", "a/b", "/a/repo"), &Refusal{Code: CodeUnknownRecord, Path: "/a/repo/a/b",
			Retry: "custody archive prune --strip-build-output", Message: `no archive directory "a/b" under /a/repo`}},
		{"unrecorded, prune", UnrecordedArchiveToPruneRefusal("a-1", dir), &Refusal{Code: CodeUnknownRecord, Path: dir, Retry: "custody archive list",
			Message: "this repository holds no record of archive a-1 at " + dir + "; custody prunes only the archives it made"}},
		{"unrecorded, strip", UnrecordedArchiveToStripRefusal("a-1", dir), &Refusal{Code: CodeUnknownRecord, Path: dir, Retry: "custody archive list",
			Message: "this repository holds no record of archive a-1 at " + dir + "; custody strips only the archives it made"}},
		{"became a symlink", ArchiveBecameSymlinkRefusal(dir), &Refusal{Code: CodeArchiveInvalid, Path: dir, Retry: verify,
			Message: dir + " became a symbolic link; nothing was deleted"}},
		{"manifest changed, delete", ManifestChangedBeforeDeleteRefusal(dir), &Refusal{Code: CodeArchiveInvalid, Path: dir, Retry: verify,
			Message: manifest + " changed since it was assessed; nothing was deleted"}},
		{"manifest changed, swap", ManifestChangedBeforeSwapRefusal(dir), &Refusal{Code: CodeArchiveInvalid, Path: dir, Retry: verify,
			Message: manifest + " changed since it was assessed; nothing was swapped"}},
		{"manifest digest, swap", ManifestSwapDigestRefusal(dir, "bb", "a-1", "aa"), &Refusal{Code: CodeArchiveDigestMismatch, Path: dir, Retry: verify,
			Message: manifest + " has SHA-256 bb; archive a-1 was sealed with aa, so the strip was not swapped in"}},
		{"not a regular file", ArchiveFileNotRegularRefusal(dir, dir+"/bundle"), &Refusal{Code: CodeArchiveInvalid, Path: dir + "/bundle", Retry: verify,
			Message: dir + "/bundle is not a regular file; it was kept"}},
		{"holds what is not named", ArchiveHoldsUnnamedRefusal(dir, errors.New("directory not empty")), &Refusal{Code: CodeArchiveInvalid, Path: dir, Retry: verify,
			Message: dir + " holds what its manifest did not name, so it was kept: directory not empty"}},
	})
}

func TestArchiveRestoreRefusals(t *testing.T) {
	t.Parallel()
	const (
		dir   = "/a/repo/x-1a2b3c-1"
		retry = "custody archive restore '/a/repo/x-1a2b3c-1' '/w/new'"
		head  = "1111111111111111111111111111111111111111"
	)
	patch := dir + "/" + ArchivePatchName
	checkRefusals(t, []refusalCase{
		{"nested image", NestedImageUnreadableRefusal(dir, dir+"/nested-0.img", "nested-0.img", "vendor/lib", errors.New("truncated")), &Refusal{Code: CodeArchiveInvalid,
			Path: dir + "/nested-0.img", Retry: "custody archive verify '" + dir + "'",
			Message: "the image nested-0.img of nested repository vendor/lib cannot be read, nothing was written: truncated"}},
		{"prerequisites gone", BundlePrerequisitesGoneRefusal(dir+"/bundle", retry, []string{"aaa", "bbb"}, "/w/repo/.git"), &Refusal{Code: CodeArchiveBundleInvalid,
			Path: dir + "/bundle", Retry: retry, Message: dir + "/bundle stands on commits aaa, bbb, which neither the recorded remotes nor /w/repo/.git hold now"}},
		{"HEAD gone", ArchiveHeadGoneRefusal(dir, retry, head, "a-1", errors.New("exit status 128")), &Refusal{Code: CodeArchiveIncomplete, Path: dir, Retry: retry,
			Message: "HEAD " + head + " of archive a-1 is neither in its bundle nor on its remotes now: exit status 128"}},
		{"HEAD's tree gone", ArchiveHeadTreeGoneRefusal(dir, "custody archive verify x", "2222", "a-1"), &Refusal{Code: CodeArchiveIncomplete, Path: dir,
			Retry:   "custody archive verify x",
			Message: "HEAD's tree 2222 of archive a-1 is neither in its repository, its bundle nor on its remotes now, so its patch cannot be rewritten"}},
		{"patch does not apply", PatchNotApplyingRefusal(patch, retry, errors.New("corrupt patch at line 3")), &Refusal{Code: CodeArchiveInvalid, Path: patch, Retry: retry,
			Message: patch + " does not apply to HEAD's tree: corrupt patch at line 3"}},
		{"patched tree differs", PatchTreeMismatchRefusal(patch, retry, "3333", "4444"), &Refusal{Code: CodeArchiveInvalid, Path: patch, Retry: retry,
			Message: "HEAD's tree with " + patch + " is 3333; the manifest records 4444"}},
		{"target taken, escaped", RestoreTargetTakenRefusal("/w/ta\x1bken", retry), &Refusal{Code: CodeUnsafeTarget, Path: "/w/ta\x1bken", Retry: retry,
			Message: `/w/ta\eken exists and is not an empty directory; a restore writes only into a new one`}},
	})
}
