package machine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/machine"
)

// refusalKey is the part of a refusal scripts match on.
type refusalKey struct {
	Code  machine.Code
	Path  string
	Retry string
}

func keysOf(rs []machine.Refusal) []refusalKey {
	var out []refusalKey
	for _, r := range rs {
		out = append(out, refusalKey{r.Code, r.Path, r.Retry})
	}
	return out
}

func key(c machine.Code, retry string) refusalKey {
	return refusalKey{Code: c, Path: testPath, Retry: retry}
}

const (
	retryPlan = "custody plan"
	retryPush = "git -C " + testPath + " push -u origin " + testBranch
	// retryStash is the stash of tracked and staged changes.
	retryStash = "git -C " + testPath + " stash push"
	// retryReRecord records the directory now at the path (finished).
	retryReRecord = "custody reopen " + testID + " && custody finish " + testID
)

func TestAssessRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		mutate func(*machine.Record, *machine.WorktreeObservation)
		pol    *machine.Policy
		want   []refusalKey
		// msg must appear in the first refusal's message.
		msg string
	}{
		{
			name:   "not-finished",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) { r.State = machine.StateActive },
			want:   []refusalKey{key(machine.CodeNotFinished, "custody finish "+testID)},
			msg:    testID + " is active",
		},
		{
			name: "not-finished/active-lease-absent-even-if-clean",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				r.State = machine.StateActive
				o.Lease = nil
			},
			want: []refusalKey{key(machine.CodeNotFinished, "custody finish "+testID)},
		},
		{
			name: "lease-live/active",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				r.State = machine.StateActive
				o.Lease = lease(testNow.Add(time.Hour))
			},
			want: []refusalKey{key(machine.CodeLeaseLive, retryPlan)},
			msg:  "leased by agent-7 until 2026-11-29T13:00:00Z",
		},
		{
			name: "lease-live/finished-collects-more",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				o.Lease = lease(testNow.Add(time.Minute))
				o.Locked = true
			},
			want: []refusalKey{
				key(machine.CodeLeaseLive, retryPlan),
				key(machine.CodeLocked, "git worktree unlock "+testPath),
			},
			msg: "agent-7",
		},
		{
			name: "intent-pending",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				r.Intent = removalIntent(*o)
				o.Locked = true // not reached: a pending intent is decisive
			},
			want: []refusalKey{key(machine.CodeIntentPending, "custody resume")},
			msg:  "unfinished removal intent",
		},
		{
			name: "intent-pending/before-state",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				r.State = machine.StateActive
				r.Intent = relocationIntent()
			},
			want: []refusalKey{key(machine.CodeIntentPending, "custody resume")},
			msg:  "relocation",
		},
		{
			name: "path-unknown",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				o.PathState = machine.PathUnknown
				o.PathError = "permission denied"
			},
			want: []refusalKey{key(machine.CodePathUnknown, retryPlan)},
			msg:  "permission denied",
		},
		{
			// Deleted by hand, still registered: remove that one registration, then plan settles.
			name:   "worktree-missing",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) { o.PathState = machine.PathAbsent },
			want:   []refusalKey{key(machine.CodeWorktreeMissing, machine.Command("git", "worktree", "remove", testPath))},
			msg:    testPath + " is gone, but git still registers it",
		},
		{
			name: "worktree-missing/admin-entry-left",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				o.PathState, o.Registered = machine.PathAbsent, false
			},
			want: []refusalKey{key(machine.CodeWorktreeMissing, machine.Command("git", "worktree", "remove", testPath))},
		},
		{
			name: "worktree-missing/pruned-branch-elsewhere",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				o.PathState, o.Registered, o.AdminPresent, o.Proof = machine.PathAbsent, false, false, nil
				o.BranchTip = otherHead
			},
			want: []refusalKey{key(machine.CodeWorktreeMissing, "custody abandon --acknowledge-unrecoverable "+headCommit+" "+testID)},
			msg:  "nothing proves its last known commit",
		},
		{
			name: "worktree-missing/pruned-remote-unavailable",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				o.PathState, o.Registered, o.AdminPresent, o.Proof = machine.PathAbsent, false, false, nil
				o.Remote.Unavailable = []machine.RemoteFailure{{Remote: "origin", Error: "timeout"}}
			},
			want: []refusalKey{key(machine.CodeRemoteUnavailable, "git ls-remote --refs origin")},
			msg:  "whether " + headCommit[:12] + " is published is unknown",
		},
		{
			name: "moved",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				o.PathState, o.MovedTo = machine.PathAbsent, "/elsewhere/x"
			},
			want: []refusalKey{key(machine.CodeMoved, "git worktree move /elsewhere/x "+testPath)},
			msg:  "/elsewhere/x",
		},
		{
			name:   "symlink",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) { o.IsSymlink = true },
			want:   []refusalKey{key(machine.CodeSymlink, retryPlan)},
		},
		{
			name:   "symlink/file-replaced-dir",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) { o.IsDir = false },
			want:   []refusalKey{key(machine.CodeSymlink, retryPlan)},
		},
		{
			name:   "not-registered",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) { o.Registered = false },
			want:   []refusalKey{key(machine.CodeNotRegistered, "git worktree list")},
		},
		{
			// A created record is owned only under admin key == id, so
			// the mismatch also withdraws ownership.
			name:   "admin-key-mismatch",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) { o.AdminKey = "other-ffffff" },
			want: []refusalKey{
				key(machine.CodeAdminKeyMismatch, retryPlan),
				key(machine.CodeNotOwned, "custody show "+testID),
			},
			msg: `"other-ffffff"`,
		},
		{
			name:   "identity-changed/inode",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) { o.Ino = 1 },
			want:   []refusalKey{key(machine.CodeIdentityChanged, retryReRecord)},
			msg:    "42:1, recorded 42:4242",
		},
		{
			name:   "identity-changed/device",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) { o.Dev = 7 },
			want:   []refusalKey{key(machine.CodeIdentityChanged, retryReRecord)},
		},
		{
			// An expired lease's active record is finished, not reopened.
			name: "identity-changed/active-lease-expired",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				r.State = machine.StateActive
				o.Lease = &machine.Lease{Record: testID, Holder: "agent", Expires: testNow.Add(-time.Hour)}
				o.Ino = 1
			},
			want: []refusalKey{key(machine.CodeIdentityChanged, "custody finish "+testID)},
		},
		{
			// The branch was renamed: custody's branch is gone.
			name: "not-owned/branch-renamed",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				o.Branch, o.BranchTip = "my-feature", ""
			},
			want: []refusalKey{key(machine.CodeNotOwned, "git -C "+testPath+" branch -m my-feature "+testBranch)},
			msg:  "is on branch my-feature, not custody's " + testBranch,
		},
		{
			// Another branch was checked out: custody's branch is there.
			name: "not-owned/branch-switched",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				o.Branch = "someone-elses"
			},
			want: []refusalKey{key(machine.CodeNotOwned, "git -C "+testPath+" switch "+testBranch)},
			msg:  "switch back to it",
		},
		{
			name:   "not-owned/no-marker",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) { o.Marker = "" },
			want:   []refusalKey{key(machine.CodeNotOwned, "custody show "+testID)},
		},
		{
			name:   "not-owned/marker-of-another-record",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) { o.Marker = "other-ffffff" },
			want:   []refusalKey{key(machine.CodeNotOwned, "custody show "+testID)},
		},
		{
			name:   "not-owned/branch-not-prefix-plus-id",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {},
			pol:    &machine.Policy{BranchPrefix: "wt/"},
			want:   []refusalKey{key(machine.CodeNotOwned, "custody show "+testID)},
		},
		{
			name:   "not-owned/unknown-origin",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) { r.Origin = "" },
			want:   []refusalKey{key(machine.CodeNotOwned, "custody show "+testID)},
		},
		{
			name: "not-owned/adopted-without-marker",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				r.Origin = machine.OriginAdopted
				o.Marker = ""
			},
			want: []refusalKey{key(machine.CodeNotOwned, "custody show "+testID)},
		},
		{
			name: "locked",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				o.Locked = true
				o.LockReason = "on a USB disk"
			},
			want: []refusalKey{key(machine.CodeLocked, "git worktree unlock "+testPath)},
			msg:  "on a USB disk",
		},
		{
			name:   "locked/no-reason",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) { o.Locked = true },
			want:   []refusalKey{key(machine.CodeLocked, "git worktree unlock "+testPath)},
			msg:    "(no reason given)",
		},
		{
			name:   "prunable",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) { o.Prunable = true },
			want:   []refusalKey{key(machine.CodePrunable, "git worktree repair")},
		},
		{
			// A failed status hides the lists: nothing said about them.
			name: "status-failed",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				o.StatusErr = "fatal: index file corrupt"
				o.Status.Changed = []string{"a.go"}
			},
			want: []refusalKey{key(machine.CodeStatusFailed, retryPlan)},
			msg:  "index file corrupt",
		},
		{
			name:   "unmerged-paths",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) { o.Status.Unmerged = []string{"go.mod"} },
			want:   []refusalKey{key(machine.CodeUnmerged, retryPlan)},
			msg:    "1 unresolved conflicts: go.mod",
		},
		{
			name: "tracked-changes",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				o.Status.Changed = []string{"a.go", "b.go"}
				o.Status.Staged = 1
			},
			want: []refusalKey{key(machine.CodeTrackedChanges, retryStash)},
			msg:  "2 changed tracked files (1 staged): a.go, b.go",
		},
		{
			name: "untracked-files",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				o.Status.Untracked = []string{"n1", "n2", "n3", "n4", "n5"}
			},
			want: []refusalKey{key(machine.CodeUntrackedFiles, retryStash+" --include-untracked -- n1 n2 n3 n4 n5")},
			msg:  "5 untracked files: n1, n2, n3 and 2 more",
		},
		{
			// More than a handful is the person's to sort.
			name: "untracked-files/many",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				o.Status.Untracked = strings.Split("a b c d e f g h i", " ")
			},
			want: []refusalKey{key(machine.CodeUntrackedFiles, retryPlan)},
		},
		{
			name:   "ignored-files",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) { o.Status.Ignored = []string{".env"} },
			want:   []refusalKey{key(machine.CodeIgnoredFiles, retryStash+" --all -- .env")},
			msg:    ".env",
		},
		{
			name: "status/all-four-in-order",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				o.Status = machine.Status{Changed: []string{"c"}, Unmerged: []string{"u"}, Untracked: []string{"n"}, Ignored: []string{"i"}}
			},
			want: []refusalKey{
				key(machine.CodeUnmerged, retryPlan),
				key(machine.CodeTrackedChanges, retryStash),
				key(machine.CodeUntrackedFiles, retryStash+" --include-untracked -- n"),
				key(machine.CodeIgnoredFiles, retryStash+" --all -- i"),
			},
		},
		{
			name: "in-use",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				o.InUse = []machine.Process{{PID: 31, Command: "vim", Via: "cwd"}, {PID: 32, Command: "gopls", Via: "cwd"}}
			},
			want: []refusalKey{key(machine.CodeInUse, retryPlan), key(machine.CodeInUse, retryPlan)},
			msg:  "process 31 (vim)",
		},
		{
			// A hidden code is reported as the observer named it, at
			// the path it found.
			name: "hidden",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				o.Hidden = []machine.Hidden{{Code: "operation-in-progress", Path: testPath + "/.git/rebase-merge", Detail: "rebase"}}
			},
			want: []refusalKey{{Code: "operation-in-progress", Path: testPath + "/.git/rebase-merge", Retry: retryPlan}},
			msg:  "rebase",
		},
		{
			// A refs/worktree/ ref is kept as a branch, then deleted;
			// a bisect ref is the person's (its bisect is in progress).
			name: "hidden/per-worktree-ref",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				o.Hidden = []machine.Hidden{
					{Code: machine.CodePerWorktreeRef, Path: testPath, Detail: "refs/worktree/wip exists only in this worktree"},
					{Code: machine.CodePerWorktreeRef, Path: testPath, Detail: "refs/bisect/bad exists only in this worktree"},
				}
			},
			want: []refusalKey{
				key(machine.CodePerWorktreeRef, "git -C "+testPath+" branch kept/"+testID+"/wip refs/worktree/wip && git -C "+testPath+" update-ref -d refs/worktree/wip"),
				key(machine.CodePerWorktreeRef, retryPlan),
			},
		},
		{
			// A nested repository is not swept into a stash.
			name: "hidden/nested-git-no-stash",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				o.Status.Untracked = []string{"vendor/"}
				o.Status.Ignored = []string{"build/"}
				o.Hidden = []machine.Hidden{{Code: machine.CodeNestedGit, Path: testPath + "/vendor/.git"}}
			},
			want: []refusalKey{
				key(machine.CodeUntrackedFiles, retryPlan),
				key(machine.CodeIgnoredFiles, retryPlan),
				{Code: machine.CodeNestedGit, Path: testPath + "/vendor/.git", Retry: retryPlan},
			},
		},
		{
			// Index bits are cleared so status shows what they hid;
			// staged content is not stashed while they hide entries.
			name: "hidden/index-bits-and-staged",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				o.Hidden = []machine.Hidden{
					{Code: machine.CodeAssumeUnchanged, Path: testPath + "/a b.go"},
					{Code: machine.CodeSkipWorktree, Path: testPath + "/dir/c.go"},
					{Code: machine.CodeStagedDiffers, Path: testPath + "/d.go"},
				}
			},
			want: []refusalKey{
				{Code: machine.CodeAssumeUnchanged, Path: testPath + "/a b.go", Retry: "git -C " + testPath + " update-index --no-assume-unchanged -- 'a b.go'"},
				{Code: machine.CodeSkipWorktree, Path: testPath + "/dir/c.go", Retry: "git -C " + testPath + " update-index --no-skip-worktree -- dir/c.go"},
				{Code: machine.CodeStagedDiffers, Path: testPath + "/d.go", Retry: retryPlan},
			},
		},
		{
			name: "hidden/staged-differs-stashed",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				o.Status.Changed = []string{"d.go"}
				o.Hidden = []machine.Hidden{{Code: machine.CodeStagedDiffers, Path: testPath + "/d.go"}}
			},
			want: []refusalKey{
				key(machine.CodeTrackedChanges, retryStash),
				{Code: machine.CodeStagedDiffers, Path: testPath + "/d.go", Retry: retryStash},
			},
		},
		{
			// Entries git skips: a stash would not hold them as seen.
			name: "hidden/skip-worktree-no-stash",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				o.Status.Changed = []string{"a.go"}
				o.Hidden = []machine.Hidden{{Code: machine.CodeSkipWorktree, Path: testPath + "/b.go"}}
			},
			want: []refusalKey{
				key(machine.CodeTrackedChanges, retryPlan),
				{Code: machine.CodeSkipWorktree, Path: testPath + "/b.go", Retry: "git -C " + testPath + " update-index --no-skip-worktree -- b.go"},
			},
		},
		{
			// HEAD unknown ends the assessment: no proof refusal
			// although there is no proof either.
			name: "head-unknown",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				o.Head = ""
				o.Proof = nil
			},
			want: []refusalKey{key(machine.CodeHeadUnknown, retryPlan)},
		},
		{
			name: "no-remote",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				o.Proof = nil
				o.Remote = machine.RemoteEvidence{}
			},
			want: []refusalKey{key(machine.CodeNoRemote, retryPlan)},
			msg:  headCommit[:12],
		},
		{
			name: "remote-unavailable",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				o.Proof = nil
				o.Remote.Unavailable = []machine.RemoteFailure{{Remote: "backup", Error: "connection timed out"}}
			},
			want: []refusalKey{key(machine.CodeRemoteUnavailable, "git ls-remote --refs backup")},
			msg:  "connection timed out",
		},
		{
			name: "detached-head",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				o.Proof = nil
				o.Detached = true
				o.Branch = ""
			},
			want: []refusalKey{key(machine.CodeDetachedHead, "git -C "+testPath+" push origin 'HEAD:refs/heads/"+testBranch+"'")},
		},
		{
			name:   "unpushed-commits",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) { o.Proof = nil },
			want:   []refusalKey{key(machine.CodeUnpushedCommits, retryPush)},
			msg:    testBranch,
		},
		{
			// origin is pushed to when there is one.
			name: "unpushed-commits/origin-among-remotes",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				o.Proof = nil
				o.Remote.Remotes = []string{"backup", "origin"}
			},
			want: []refusalKey{key(machine.CodeUnpushedCommits, retryPush)},
		},
		{
			// The branch the tree is on, which may not be the record's.
			name: "unpushed-commits/other-remote-and-branch",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				r.Origin = machine.OriginAdopted
				r.Branch = "topic"
				o.Branch = "topic"
				o.Proof = nil
				o.Remote.Remotes = []string{"upstream"}
			},
			want: []refusalKey{key(machine.CodeUnpushedCommits, "git -C "+testPath+" push -u upstream topic")},
		},
		{
			// The push target names a remote whose push lands where
			// another remote is read from (a pushurl that remote reads).
			name: "unpushed-commits/push-lands-on-another-remote",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				o.Proof = nil
				o.Remote.Remotes = []string{"origin", "mine"}
				o.Remote.Push = &machine.PushTarget{Remote: "origin", Proves: "mine"}
			},
			want: []refusalKey{key(machine.CodeUnpushedCommits, retryPush)},
			msg:  "remote mine",
		},
		{
			// A relative URL, resolved, pushed to by its path.
			name: "unpushed-commits/push-by-url",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				o.Proof = nil
				o.Remote.Push = &machine.PushTarget{URL: "/srv/with space.git", Proves: "origin"}
			},
			want: []refusalKey{key(machine.CodeUnpushedCommits, "git -C "+testPath+" push '/srv/with space.git' "+testBranch)},
			msg:  "where remote origin is read from",
		},
		{
			// A pushurl no remote reads: added as a remote first.
			name: "unpushed-commits/push-adds-the-fork",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				o.Proof = nil
				o.Remote.Push = &machine.PushTarget{Remote: "origin", URL: "ssh://git@example.com/me/fork.git", AddAs: "fork", Proves: "fork"}
			},
			want: []refusalKey{key(machine.CodeUnpushedCommits,
				"git -C "+testPath+" remote add fork 'ssh://git@example.com/me/fork.git' && git -C "+testPath+" push -u origin "+testBranch)},
			msg: "is added as remote fork",
		},
		{
			// A remote name that would read as an option.
			name: "unpushed-commits/push-dash-name",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				o.Proof = nil
				o.Remote.Remotes = []string{"-odd"}
				o.Remote.Push = &machine.PushTarget{Remote: "-odd", Proves: "-odd"}
			},
			want: []refusalKey{key(machine.CodeUnpushedCommits, "git -C "+testPath+" push -u -- -odd "+testBranch)},
		},
		{
			// No push lands where a remote custody reads: said, and
			// plan is the retry.
			name: "unpushed-commits/no-push-lands",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				o.Proof = nil
				o.Remote.Remotes = []string{"mirror"}
				o.Remote.Push = &machine.PushTarget{Why: "shallow remote mirror holds no history past its shallow boundary"}
			},
			want: []refusalKey{key(machine.CodeUnpushedCommits, retryPlan)},
			msg:  "shallow remote mirror",
		},
		{
			name: "detached-head/push-by-url",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				o.Proof = nil
				o.Detached = true
				o.Branch = ""
				o.Remote.Push = &machine.PushTarget{URL: "/srv/origin.git", Proves: "origin"}
			},
			want: []refusalKey{key(machine.CodeDetachedHead, "git -C "+testPath+" push /srv/origin.git 'HEAD:refs/heads/"+testBranch+"'")},
		},
		{
			name: "detached-head/no-push-lands",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				o.Proof = nil
				o.Detached = true
				o.Branch = ""
				o.Remote.Push = &machine.PushTarget{Why: "no remote's push lands where a remote custody reads is read from"}
			},
			want: []refusalKey{key(machine.CodeDetachedHead, retryPlan)},
			msg:  "no remote's push lands",
		},
		{
			// A remote name with shell characters is quoted.
			name: "remote-unavailable/odd-name",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				o.Proof = nil
				o.Remote.Unavailable = []machine.RemoteFailure{{Remote: "a b;$(x)", Error: "gone"}}
			},
			want: []refusalKey{key(machine.CodeRemoteUnavailable, `git ls-remote --refs 'a b;$(x)'`)},
		},
		{
			name:   "unpushed-commits/proof-of-another-head",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) { o.Proof.Head = otherHead },
			want:   []refusalKey{key(machine.CodeUnpushedCommits, retryPush)},
		},
		{
			name:   "unpushed-commits/proof-without-kind",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) { o.Proof.Kind = "" },
			want:   []refusalKey{key(machine.CodeUnpushedCommits, retryPush)},
		},
		{
			name: "proof-failed",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				o.Proof = nil
				o.ProofErr = "git merge-base: exit 128"
				o.Remote.Unavailable = []machine.RemoteFailure{{Remote: "origin", Error: "x"}}
			},
			want: []refusalKey{key(machine.CodeProofFailed, retryPlan)},
			msg:  "exit 128",
		},
		{
			// Prunable: git -C the tree would reach the repository
			// around it, so nothing is stashed there.
			name: "collects-every-reason",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				o.Prunable = true
				o.Status.Untracked = []string{"x"}
				o.InUse = []machine.Process{{PID: 9, Command: "sh", Via: "cwd"}}
				o.Proof = nil
			},
			want: []refusalKey{
				key(machine.CodePrunable, "git worktree repair"),
				key(machine.CodeUntrackedFiles, retryPlan),
				key(machine.CodeInUse, retryPlan),
				key(machine.CodeUnpushedCommits, retryPush),
			},
		},
		{
			name: "retry-quotes-path",
			mutate: func(r *machine.Record, o *machine.WorktreeObservation) {
				r.Path = "/repo/my tree's"
				o.Path = r.Path
				o.Locked = true
			},
			want: []refusalKey{{Code: machine.CodeLocked, Path: "/repo/my tree's", Retry: `git worktree unlock '/repo/my tree'\''s'`}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec, obs := removableRecord(), removableObs()
			tt.mutate(&rec, &obs)
			pol := machine.DefaultPolicy()
			if tt.pol != nil {
				pol = *tt.pol
			}
			v := machine.Assess(rec, obs, pol, testNow)
			if v.Action != machine.ActionKeep {
				t.Errorf("Action = %q, want keep", v.Action)
			}
			if v.Proof != nil {
				t.Errorf("Proof = %+v on a keep verdict", v.Proof)
			}
			if diff := cmp.Diff(tt.want, keysOf(v.Refusals)); diff != "" {
				t.Errorf("refusals (-want +got):\n%s", diff)
			}
			for _, r := range v.Refusals {
				if r.Message == "" || strings.Contains(r.Message, "\n") {
					t.Errorf("refusal %s: message %q is not one line", r.Code, r.Message)
				}
			}
			p := v.Primary()
			if p == nil {
				t.Fatal("Primary() = nil for a keep verdict")
			}
			if diff := cmp.Diff(v.Refusals[0], *p); diff != "" {
				t.Errorf("Primary() is not the first refusal (-want +got):\n%s", diff)
			}
			if !strings.Contains(p.Message, tt.msg) {
				t.Errorf("message %q does not contain %q", p.Message, tt.msg)
			}
		})
	}
}

func TestAssessRemove(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		mutate func(*machine.Record, *machine.WorktreeObservation)
	}{
		{"finished", func(*machine.Record, *machine.WorktreeObservation) {}},
		{"active-with-expired-lease", func(r *machine.Record, o *machine.WorktreeObservation) {
			r.State = machine.StateActive
			o.Lease = lease(testNow.Add(-time.Second))
		}},
		{"active-lease-expiring-exactly-now", func(r *machine.Record, o *machine.WorktreeObservation) {
			r.State = machine.StateActive
			o.Lease = lease(testNow)
		}},
		{"finished-with-expired-lease", func(r *machine.Record, o *machine.WorktreeObservation) {
			o.Lease = lease(testNow.Add(-time.Hour))
		}},
		{"adopted", func(r *machine.Record, o *machine.WorktreeObservation) {
			// A person enrolled an existing worktree: its admin key and
			// branch are whatever git and the person chose.
			r.Origin = machine.OriginAdopted
			r.AdminKey = "legacy"
			r.Branch = "feature/login"
			o.AdminKey = "legacy"
			o.Branch = "feature/login"
		}},
		{"record-without-identity", func(r *machine.Record, o *machine.WorktreeObservation) {
			r.Dev, r.Ino = 0, 0
		}},
		{"patch-equivalent-proof", func(r *machine.Record, o *machine.WorktreeObservation) {
			o.Proof.Kind = machine.ProofPatchEquivalent
			o.Proof.Commits = []string{headCommit}
		}},
		{"proof-wins-over-unavailable-remote", func(r *machine.Record, o *machine.WorktreeObservation) {
			o.Remote.Unavailable = []machine.RemoteFailure{{Remote: "backup", Error: "timeout"}}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec, obs := removableRecord(), removableObs()
			tt.mutate(&rec, &obs)
			got := machine.Assess(rec, obs, machine.DefaultPolicy(), testNow)
			want := machine.Verdict{Action: machine.ActionRemove, Proof: obs.Proof}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Assess (-want +got):\n%s", diff)
			}
			if got.Proof != obs.Proof {
				t.Errorf("verdict proof is not the observation's proof")
			}
			if p := got.Primary(); p != nil {
				t.Errorf("Primary() = %+v on a remove verdict", p)
			}
		})
	}
}

func TestRemovable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		state machine.State
		lease *machine.Lease
		want  bool
	}{
		{machine.StateFinished, nil, true},
		{machine.StateFinished, lease(testNow.Add(time.Hour)), true},
		{machine.StateActive, nil, false},
		{machine.StateActive, lease(testNow.Add(time.Hour)), false},
		{machine.StateActive, lease(testNow.Add(-time.Hour)), true},
		{machine.StateActive, lease(testNow), true},
		{machine.StateProvisioning, lease(testNow.Add(-time.Hour)), false},
		{machine.StateRelocating, nil, false},
		{machine.StateRemoving, nil, false},
		{machine.StateTombstoned, nil, false},
		{machine.StateNone, nil, false},
	}
	for _, tt := range tests {
		rec := removableRecord()
		rec.State = tt.state
		if got := machine.Removable(rec, tt.lease, testNow); got != tt.want {
			t.Errorf("Removable(%s, %+v) = %v, want %v", tt.state, tt.lease, got, tt.want)
		}
	}
}

func TestOwned(t *testing.T) {
	t.Parallel()
	pol := machine.DefaultPolicy()
	tests := []struct {
		name   string
		mutate func(*machine.Record, *machine.WorktreeObservation)
		want   bool
	}{
		{"created", func(*machine.Record, *machine.WorktreeObservation) {}, true},
		{"created/no-marker", func(r *machine.Record, o *machine.WorktreeObservation) { o.Marker = "" }, false},
		{"created/obs-admin-key", func(r *machine.Record, o *machine.WorktreeObservation) { o.AdminKey = "x" }, false},
		{"created/record-admin-key", func(r *machine.Record, o *machine.WorktreeObservation) { r.AdminKey = "x" }, false},
		{"created/branch", func(r *machine.Record, o *machine.WorktreeObservation) { r.Branch = "custody/other" }, false},
		// A record that says where its branch came from is owned on
		// that branch, whatever its name: new --branch, new --checkout.
		{"created/named-branch", func(r *machine.Record, o *machine.WorktreeObservation) {
			r.Branch, r.BranchOrigin, o.Branch = "feature/login", machine.BranchOriginCreated, "feature/login"
		}, true},
		{"created/existing-branch", func(r *machine.Record, o *machine.WorktreeObservation) {
			r.Branch, r.BranchOrigin, o.Branch = "topic", machine.BranchOriginExisting, "topic"
		}, true},
		{"created/named-branch-switched", func(r *machine.Record, o *machine.WorktreeObservation) {
			r.Branch, r.BranchOrigin, o.Branch = "feature/login", machine.BranchOriginCreated, "main"
		}, false},
		{"created/named-branch-detached", func(r *machine.Record, o *machine.WorktreeObservation) {
			r.Branch, r.BranchOrigin, o.Branch, o.Detached = "feature/login", machine.BranchOriginCreated, "", true
		}, true},
		{"created/no-branch", func(r *machine.Record, o *machine.WorktreeObservation) {
			r.Branch, r.BranchOrigin, o.Branch, o.Detached = "", machine.BranchOriginCreated, "", true
		}, false},
		// A record written before the origin was recorded keeps its rule.
		{"created/legacy-other-name", func(r *machine.Record, o *machine.WorktreeObservation) {
			r.Branch, o.Branch = "feature/login", "feature/login"
		}, false},
		{"adopted", func(r *machine.Record, o *machine.WorktreeObservation) {
			r.Origin, r.AdminKey, o.AdminKey, r.Branch = machine.OriginAdopted, "legacy", "legacy", "main"
		}, true},
		{"adopted/admin-key", func(r *machine.Record, o *machine.WorktreeObservation) {
			r.Origin, r.AdminKey, o.AdminKey = machine.OriginAdopted, "legacy", "other"
		}, false},
		{"unknown-origin", func(r *machine.Record, o *machine.WorktreeObservation) { r.Origin = "guessed" }, false},
	}
	for _, tt := range tests {
		rec, obs := removableRecord(), removableObs()
		tt.mutate(&rec, &obs)
		if got := machine.Owned(rec, obs, pol); got != tt.want {
			t.Errorf("%s: Owned = %v, want %v", tt.name, got, tt.want)
		}
	}
}
