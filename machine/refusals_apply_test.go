package machine

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestApplyRefusals(t *testing.T) {
	t.Parallel()
	const (
		id   = "x-1a2b3c"
		path = "/r/.worktrees/x-1a2b3c"
	)
	adopted := Record{ID: id, Path: "/w/elsewhere/x"}
	checkRefusals(t, []refusalCase{
		{"wrong repository", WrongRepositoryRefusal("r-a", "/w/a/.git", "r-b", "/w/b/.git"), &Refusal{Code: CodeWrongRepository, Path: "/w/a/.git", Retry: "custody plan -o plan.json",
			Message: "the plan is for repository r-a (/w/a/.git), not this one (r-b, /w/b/.git); nothing was done"}},
		{"not in plan", NotInPlanRefusal("nosuch-123456"), &Refusal{Code: CodeNotInPlan, Retry: "custody plan -o plan.json",
			Message: "--only nosuch-123456: the plan has no item with that id; nothing was done"}},
		{"external tree, the default plan file", ExternalTreeRefusal(adopted, "/w/repo/.worktrees", ""), &Refusal{Code: CodeExternalTree, Path: "/w/elsewhere/x",
			Retry:   "custody apply --allow-external-retirement --only " + id + " plan.json",
			Message: "/w/elsewhere/x is an adopted tree outside the managed root /w/repo/.worktrees; custody removes it only when you confirm with --allow-external-retirement"}},
		{"external tree, a plan file and an id to quote", ExternalTreeRefusal(Record{ID: "-a b", Path: "/w/x"}, "/w/root", "my plan's.json"), &Refusal{Code: CodeExternalTree, Path: "/w/x",
			Retry:   `custody apply --allow-external-retirement --only '-a b' 'my plan'\''s.json'`,
			Message: "/w/x is an adopted tree outside the managed root /w/root; custody removes it only when you confirm with --allow-external-retirement"}},
		{"proof gone", ProofGoneRefusal(path, "1111111111111111111111111111111111111111"), &Refusal{Code: CodeStale, Path: path, Retry: "custody plan",
			Message: "the proof no longer covers 1111111111111111111111111111111111111111"}},
	})
}

func TestRemovalRefusals(t *testing.T) {
	t.Parallel()
	const (
		id   = "x-1a2b3c"
		path = "/r/.worktrees/x-1a2b3c"
	)
	show := "custody show " + id
	unsafe := func(p, msg string) *Refusal {
		return &Refusal{Code: CodeUnsafeTarget, Path: p, Retry: show, Message: msg}
	}
	checkRefusals(t, []refusalCase{
		{"root", RemovalRootRefusal(id, "/"), unsafe("/", "/ is a filesystem root or not absolute")},
		{"home", RemovalHomeRefusal(id, "/home/u"), unsafe("/home/u", "/home/u is the home directory")},
		{"encloses the repository", RemovalEnclosesRepositoryRefusal(id, "/w"), unsafe("/w", "/w contains the main checkout or the git directory")},
		{"home by identity", RemovalHomeIdentityRefusal(id, "/h"), unsafe("/h", "/h is the home directory (by device and inode)")},
		{"encloses the repository by identity", RemovalEnclosesRepositoryIdentityRefusal(id, "/b"),
			unsafe("/b", "/b contains the main checkout or the git directory (by device and inode, through a symlink or bind mount)")},
		{"not a plain directory", RemovalNotPlainDirectoryRefusal(id, path), unsafe(path, path+" is not a plain directory")},
		{"unreadable", RemovalUnreadableRefusal(id, path), unsafe(path, path+" cannot be read, so what removal would delete is unknown")},
		{"another directory", RemovalOtherDirectoryRefusal(id, path, WorktreeObservation{Dev: 1, Ino: 22}, Intent{Dev: 1, Ino: 21}),
			unsafe(path, path+" is another directory than the one observed at plan (device+inode 1:22, intent 1:21)")},
		{"an id that reads as a flag", RemovalRootRefusal("-x", "rel"), &Refusal{Code: CodeUnsafeTarget, Path: "rel", Retry: "custody show -- -x",
			Message: "rel is a filesystem root or not absolute"}},
		{"partly removed", PartlyRemovedRefusal(path, []string{"a.txt", "b.txt"}, "x-1a2b3c changed since plan: HEAD moved"), &Refusal{Code: CodeResumeUnmatched, Path: path,
			Retry:   "git -C " + path + " ls-files -z --deleted | git -C " + path + " checkout-index -z --stdin && custody resume",
			Message: path + " was partly removed (2 tracked files gone, e.g. a.txt) and no longer matches its removal intent (x-1a2b3c changed since plan: HEAD moved); restore the deleted files, then resume"}},
		{"partly removed, a path to quote", PartlyRemovedRefusal("/w/a b", []string{"f"}, "why"), &Refusal{Code: CodeResumeUnmatched, Path: "/w/a b",
			Retry:   "git -C '/w/a b' ls-files -z --deleted | git -C '/w/a b' checkout-index -z --stdin && custody resume",
			Message: "/w/a b was partly removed (1 tracked files gone, e.g. f) and no longer matches its removal intent (why); restore the deleted files, then resume"}},
		{"git refused", RemoveRefusedRefusal(path, errors.New("exit status 128: fatal: contains modified files")), &Refusal{Code: CodeRemovalFailed, Path: path, Retry: "custody plan",
			Message: "git worktree remove refused " + path + " and removed nothing: exit status 128: fatal: contains modified files"}},
		{"unfinished, present and registered", RemovalUnfinishedRefusal(path, WorktreeObservation{PathState: PathPresent, Registered: true}, "2 entries, e.g. a"),
			&Refusal{Code: CodeRemovalFailed, Path: path, Retry: "custody resume",
				Message: "removal of " + path + " did not finish: path present, holding 2 entries, e.g. a, still registered with git"}},
		{"unfinished, unknown", RemovalUnfinishedRefusal(path, WorktreeObservation{PathState: PathUnknown, PathError: "permission denied"}, "ignored"),
			&Refusal{Code: CodeRemovalFailed, Path: path, Retry: "custody resume",
				Message: "removal of " + path + " did not finish: path unknown (permission denied)"}},
		{"unfinished, the admin entry left", RemovalUnfinishedRefusal(path, WorktreeObservation{PathState: PathAbsent, AdminPresent: true}, ""),
			&Refusal{Code: CodeRemovalFailed, Path: path, Retry: "custody resume",
				Message: "removal of " + path + " did not finish: path absent, still registered with git"}},
		{"admin entry elsewhere", AdminEntryElsewhereRefusal("/r/.git/worktrees/x", "/w/other/.git", path), &Refusal{Code: CodeRemovalFailed, Path: "/r/.git/worktrees/x",
			Retry: "git worktree list", Message: "admin entry /r/.git/worktrees/x names /w/other/.git, not " + path + "; custody leaves it alone"}},
	})
}

func TestQuarantineRefusals(t *testing.T) {
	t.Parallel()
	const (
		id   = "x-1a2b3c"
		path = "/r/.worktrees/x-1a2b3c"
		q    = "/r/.git/custody/quarantine/x-1a2b3c"
	)
	checkRefusals(t, []refusalCase{
		{"unlisted", QuarantineUnlistedRefusal(path, errors.New("ls-tree: exit 128")), &Refusal{Code: CodeRemovalFailed, Path: path, Retry: "custody plan",
			Message: "what " + path + " may hold cannot be listed, so nothing was removed: ls-tree: exit 128"}},
		{"move failed", QuarantineMoveFailedRefusal(path, q, errors.New("EXDEV")), &Refusal{Code: CodeRemovalFailed, Path: path, Retry: "custody plan",
			Message: path + " could not be moved into quarantine " + q + ", so nothing was removed: EXDEV"}},
		{"unobserved", QuarantineUnobservedRefusal(q, id, errors.New("EACCES")), &Refusal{Code: CodeRemovalFailed, Path: q, Retry: "custody resume",
			Message: "the quarantine " + q + " of " + id + " cannot be observed: EACCES"}},
		{"changed", QuarantineChangedRefusal(path+"/new.txt", id, "not in the manifest", path, false), &Refusal{Code: CodeQuarantineChanged, Path: path + "/new.txt",
			Retry: "custody plan", Message: path + "/new.txt appeared or changed in " + id + " after the final observation (not in the manifest); the tree was kept at " + path + " with nothing of it deleted"}},
		{"changed, settling", QuarantineChangedRefusal(q, id, "why", q, true), &Refusal{Code: CodeQuarantineChanged, Path: q, Retry: "custody plan",
			Message: q + " appeared or changed in " + id + " after the final observation (why); the tree was kept at " + q + " with nothing more of it deleted than the run stopped before had deleted"}},
		{"in use by one", QuarantineInUseRefusal(id, path, []Process{{PID: 7, Command: "vim", Via: "cwd"}}, nil, nil), &Refusal{Code: CodeInUse, Path: path, Retry: "custody plan",
			Message: id + " is in use (process 7 (vim) uses it through its cwd), so nothing of it was deleted; the tree was kept at " + path + ". End what uses it, then plan again"}},
		{"in use by three, not moved back", QuarantineInUseRefusal(id, q, []Process{{PID: 7, Command: "vim", Via: "cwd"}, {}, {}}, nil, errors.New("the path is taken")),
			&Refusal{Code: CodeInUse, Path: q, Retry: "custody plan",
				Message: id + " is in use (process 7 (vim) uses it through its cwd, and 2 more; the path is taken), so nothing of it was deleted; the tree was kept at " + q + ". End what uses it, then plan again"}},
		{"processes unobserved", QuarantineInUseRefusal(id, path, nil, errors.New("no /proc"), nil), &Refusal{Code: CodeInUse, Path: path, Retry: "custody plan",
			Message: id + " is in use (no /proc), so nothing of it was deleted; the tree was kept at " + path + ". End what uses it, then plan again"}},
	})
}

func TestStoppedRemovalRefusal(t *testing.T) {
	t.Parallel()
	const (
		id   = "x-1a2b3c"
		path = "/r/.worktrees/x-1a2b3c"
	)
	entry := path + "/a.txt"
	stuck := errors.New("operation not permitted")
	restore := func(then string) string {
		return "git -C " + path + " ls-files -z --deleted | git -C " + path + " checkout-index -z --stdin && " + then
	}
	kept := entry + " appeared or changed in " + id + " after the final observation (its size changed); the tree was kept at " + path
	failed := entry + " could not be deleted (operation not permitted), so the removal of " + id + " stopped; the tree was put back at " + path
	const deletable = ". Make it deletable (chattr -i, unmount, fix its permissions), then plan again"
	checkRefusals(t, []refusalCase{
		{"changed, nothing deleted", StoppedRemovalRefusal(StoppedRemoval{ID: id, Entry: entry, Where: path, Why: "its size changed"}),
			&Refusal{Code: CodeQuarantineChanged, Path: entry, Retry: "custody plan", Message: kept + " with nothing of it deleted"}},
		{"changed, settling", StoppedRemovalRefusal(StoppedRemoval{ID: id, Entry: entry, Where: path, Why: "its size changed", Settling: true}),
			&Refusal{Code: CodeQuarantineChanged, Path: entry, Retry: "custody plan", Message: kept + " with nothing more of it deleted than the run stopped before had deleted"}},
		{"changed, tracked files restored", StoppedRemovalRefusal(StoppedRemoval{ID: id, Entry: entry, Where: path, Why: "its size changed", Deleted: 3, Tracked: 3}),
			&Refusal{Code: CodeQuarantineChanged, Path: entry, Retry: "custody plan",
				Message: kept + ", and the 3 tracked files its removal had already deleted (each identical to HEAD) were restored from its index"}},
		{"changed, only build output deleted", StoppedRemovalRefusal(StoppedRemoval{ID: id, Entry: entry, Where: path, Why: "its size changed", Deleted: 2}),
			&Refusal{Code: CodeQuarantineChanged, Path: entry, Retry: "custody plan",
				Message: kept + "; 2 files of build output were deleted with it and are not restored (a build makes them again)"}},
		{"changed, some not restored, an archive's", StoppedRemovalRefusal(StoppedRemoval{ID: id, Entry: entry, Where: path, Why: "its size changed",
			Proof: &Proof{Kind: ProofArchive, Ref: "a-1"}, Deleted: 4, Tracked: 3, Left: []string{"b.txt", "c.txt"}}),
			&Refusal{Code: CodeQuarantineChanged, Path: entry, Retry: restore("custody plan"),
				Message: kept + "; its removal had already deleted 3 tracked files (each held byte for byte by archive a-1), and 2 of them could not be restored, e.g. b.txt: the retry restores them" +
					"; 1 files of build output were deleted with it and are not restored (a build makes them again)"}},
		{"not deletable, nothing deleted", StoppedRemovalRefusal(StoppedRemoval{ID: id, Entry: entry, Where: path, Err: stuck}),
			&Refusal{Code: CodeRemovalFailed, Path: entry, Retry: "custody plan", Message: failed + " with nothing of it deleted" + deletable}},
		{"not deletable, some not restored", StoppedRemovalRefusal(StoppedRemoval{ID: id, Entry: entry, Where: path, Err: stuck,
			Proof: &Proof{Kind: ProofAncestry}, Deleted: 1, Tracked: 1, Left: []string{"b.txt"}}),
			&Refusal{Code: CodeRemovalFailed, Path: entry, Retry: restore("custody resume"),
				Message: failed + "; its removal had already deleted 1 tracked files (each identical to HEAD), and 1 of them could not be restored, e.g. b.txt: the retry restores them" + deletable}},
	})
}

func TestRecoveryRefusals(t *testing.T) {
	t.Parallel()
	const admin = "/r/.git/worktrees/x"
	checkRefusals(t, []refusalCase{
		{"admin entry unlisted", AdminEntryUnlistedRefusal(admin, errors.New("EACCES")), &Refusal{Code: CodeRecoveryFailed, Path: admin, Retry: "custody plan",
			Message: "the admin entry " + admin + " cannot be listed (EACCES), so what would die with the tree is unknown; the tree is kept"}},
		{"admin lock file appeared", AdminAppearedRefusal(Hidden{Code: CodeAdminLockFile, Path: admin + "/index.lock", Detail: "a git process is writing the tree's state"}),
			&Refusal{Code: CodeAdminLockFile, Path: admin + "/index.lock", Retry: "custody plan",
				Message: admin + "/index.lock: a git process is writing the tree's state; it was not there when the tree was observed, and it would die with the tree"}},
		{"unknown admin file appeared", AdminAppearedRefusal(Hidden{Code: CodeUnknownAdminFile, Path: admin + "/notes", Admin: admin, Detail: "custody does not know it"}),
			&Refusal{Code: CodeUnknownAdminFile, Path: admin + "/notes", Retry: "mkdir -p -- /r/.git/custody/admin-files/x && mv -n -- " + admin + "/notes /r/.git/custody/admin-files/x/notes && custody plan",
				Message: admin + "/notes: custody does not know it; it was not there when the tree was observed, and it would die with the tree"}},
		{"pseudoref unreadable", PseudorefUnreadableRefusal(admin+"/ORIG_HEAD", errors.New("EIO")), &Refusal{Code: CodeRecoveryFailed, Path: admin + "/ORIG_HEAD", Retry: "custody plan",
			Message: admin + "/ORIG_HEAD cannot be read (EIO), so custody cannot keep the objects it names; the tree is kept"}},
		{"pseudoref not regular", PseudorefNotRegularRefusal(admin + "/ORIG_HEAD"), &Refusal{Code: CodeRecoveryFailed, Path: admin + "/ORIG_HEAD", Retry: "custody plan",
			Message: admin + "/ORIG_HEAD cannot be read (not a regular file), so custody cannot keep the objects it names; the tree is kept"}},
		{"pseudoref line", PseudorefLineRefusal(admin+"/FETCH_HEAD", 3), &Refusal{Code: CodeRecoveryFailed, Path: admin + "/FETCH_HEAD", Retry: "custody plan",
			Message: admin + "/FETCH_HEAD cannot be read (line 3 names no object), so custody cannot keep the objects it names; the tree is kept"}},
		{"reflog unreadable", ReflogUnreadableRefusal(admin+"/logs/HEAD", errors.New("EIO")), &Refusal{Code: CodeRecoveryFailed, Path: admin + "/logs/HEAD", Retry: "custody resume",
			Message: "the reflog " + admin + "/logs/HEAD cannot be read (EIO), so custody cannot tell which commits only it holds; the tree is kept"}},
		{"reflog not regular", ReflogNotRegularRefusal(admin + "/logs/HEAD"), &Refusal{Code: CodeRecoveryFailed, Path: admin + "/logs/HEAD", Retry: "custody resume",
			Message: "the reflog " + admin + "/logs/HEAD cannot be read (not a regular file), so custody cannot tell which commits only it holds; the tree is kept"}},
		{"kept file unreadable", KeptFileUnreadableRefusal(admin+"/config.worktree", errors.New("EIO")), &Refusal{Code: CodeRecoveryFailed, Path: admin + "/config.worktree",
			Retry: "custody resume", Message: admin + "/config.worktree cannot be read: EIO, so what it holds cannot be kept; the tree is kept"}},
		{"kept file not regular", KeptFileNotRegularRefusal(admin + "/config.worktree"), &Refusal{Code: CodeRecoveryFailed, Path: admin + "/config.worktree",
			Retry: "custody resume", Message: admin + "/config.worktree is not a regular file, so what it holds cannot be kept; the tree is kept"}},
	})
}

// TestRemovalAmendments: each amendment changes the refusal it is given,
// in place, and returns it.
func TestRemovalAmendments(t *testing.T) {
	t.Parallel()
	const path = "/r/.worktrees/x-1a2b3c"
	restore := "git -C " + path + " ls-files -z --deleted | git -C " + path + " checkout-index -z --stdin && custody resume"
	for _, tc := range []struct {
		name  string
		amend func(*Refusal) *Refusal
		in    Refusal
		want  Refusal
	}{
		{"git remove said", func(r *Refusal) *Refusal { return GitRemoveSaidRefusal(r, errors.New("exit status 128")) },
			Refusal{Code: CodeRemovalFailed, Path: path, Retry: "custody resume", Message: "removal of " + path + " did not finish: path present"},
			Refusal{Code: CodeRemovalFailed, Path: path, Retry: "custody resume", Message: "removal of " + path + " did not finish: path present (git worktree remove said: exit status 128)"}},
		{"admin entry kept, plan becomes resume", func(r *Refusal) *Refusal { return AdminEntryKeptRefusal(r, path) },
			Refusal{Code: CodeUnknownAdminFile, Path: "/r/.git/worktrees/x/notes", Retry: "mv -n -- a b && custody plan", Message: "notes appeared"},
			Refusal{Code: CodeUnknownAdminFile, Path: "/r/.git/worktrees/x/notes", Retry: "mv -n -- a b && custody resume",
				Message: "notes appeared; the tree at " + path + " is already gone, and its admin entry is kept until this is settled"}},
		{"admin entry kept, no retry", func(r *Refusal) *Refusal { return AdminEntryKeptRefusal(r, path) },
			Refusal{Code: CodeRecoveryFailed, Path: path, Message: "m"},
			Refusal{Code: CodeRecoveryFailed, Path: path, Retry: "custody resume", Message: "m; the tree at " + path + " is already gone, and its admin entry is kept until this is settled"}},
		{"already deleted", func(r *Refusal) *Refusal { return AlreadyDeletedRefusal(r, path, []string{"a.txt", "b.txt"}) },
			Refusal{Code: CodeQuarantineChanged, Path: path, Retry: "custody plan", Message: "m"},
			Refusal{Code: CodeQuarantineChanged, Path: path, Retry: restore, Message: "m; 2 tracked files were already deleted (each identical to HEAD), e.g. a.txt"}},
	} {
		r := tc.in
		got := tc.amend(&r)
		if got != &r {
			t.Errorf("%s: returned another refusal than the one it amends", tc.name)
		}
		if diff := cmp.Diff(tc.want, r); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}
