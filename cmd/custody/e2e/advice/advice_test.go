//go:build unix

package advice

// Advice that works: for every refusal code (machine.SortedCodes), the
// retry custody prints is pasted into a shell as it is, in the directory
// the person is in, and custody is run again. The retry must succeed, and
// what custody says next must not be the same advice again (the same code
// with the same retry about the same tree). Where what custody says next
// is another refusal of the same tree with a retry of its own, that one is
// pasted too, until custody has nothing more to say about the tree or the
// next step is a person's: no advice may come round twice.
//
// A code with no case in adCases fails TestAdviceCoversEveryCode. A code
// whose only honest next step is a person's edit or choice says why in
// person; one about a value the person typed (an id, a revision, a file)
// says so in input, and its retry, which shows the values to choose from,
// must run; one that no command can be made to give on a repository a
// test builds here says why in elsewhere, naming the test that provokes
// it. Helpers are prefixed ad.

import (
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/cmd/custody/internal/output"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
)

// adWorld is a repository in which a custody command gives a refusal.
type adWorld struct {
	r *fixtures.Repo
	// dir is where the person runs custody and pastes the retry; "" is
	// the main checkout.
	dir string
	// args is the custody command that gives the refusal.
	args []string
	// again, when set, is the custody command run after the retry instead
	// of args (a stale plan's retry makes a new plan: it is what is run
	// again, the old plan file stays stale).
	again []string
	// tree is the path the advice is about: the chain of retries follows
	// refusals at it or below it ("" follows none beyond the first).
	tree string
	// before, when set, runs right before the first retry is pasted: what
	// the refusal says must happen first (another custody finishing).
	before func()
}

// adCase is how one code's advice is checked. Exactly one of setup,
// person and elsewhere is set; input goes with setup.
type adCase struct {
	setup func(t *testing.T) adWorld
	// input says why the refusal is about a value the person typed: the
	// retry lists the values to choose from; it must exit 0.
	input string
	// person says why the only honest next step is a person's edit or
	// choice.
	person string
	// elsewhere says why no command gives the code on a repository built
	// here, and which test provokes it.
	elsewhere string
}

// adRepo makes a repository with custody initialized.
func adRepo(t *testing.T) *fixtures.Repo {
	t.Helper()
	r := fixtures.New(t, fixtures.Options{Name: clitest.SpacedRepoName})
	clitest.MustCustody(t, r, 0, "init")
	return r
}

// adFinished makes a finished managed tree on the published main commit,
// after change (when set) did something to it while it was active.
func adFinished(t *testing.T, r *fixtures.Repo, name string, change func(path string)) (id, path string) {
	t.Helper()
	id, path = clitest.NewTree(t, r, name)
	if change != nil {
		change(path)
	}
	clitest.MustCustody(t, r, 0, "finish", id)
	return id, path
}

// adPlan is a plan over r about tree.
func adPlan(r *fixtures.Repo, tree string) adWorld {
	return adWorld{r: r, args: []string{"plan"}, tree: tree}
}

func adCases() map[machine.Code]adCase {
	plan := func(change func(t *testing.T, r *fixtures.Repo, id, path string)) func(t *testing.T) adWorld {
		return func(t *testing.T) adWorld {
			r := adRepo(t)
			id, path := adFinished(t, r, "tree", nil)
			change(t, r, id, path)
			return adPlan(r, path)
		}
	}
	return map[machine.Code]adCase{
		// Plan: a finished tree kept.
		machine.CodeNotFinished: {setup: func(t *testing.T) adWorld {
			r := adRepo(t)
			_, path := clitest.NewTree(t, r, "active")
			return adPlan(r, path)
		}},
		machine.CodeIntentPending: {setup: func(t *testing.T) adWorld {
			r := adRepo(t)
			_, path := adFinished(t, r, "interrupted", nil)
			clitest.MustBeKilled(t, r, "apply/after-intent", "apply", clitest.PlanOutside(t, r, 0))
			return adPlan(r, path)
		}},
		machine.CodeNotOwned: {setup: plan(func(t *testing.T, r *fixtures.Repo, id, path string) {
			r.GitIn(path, "branch", "-m", "my-feature")
		})},
		machine.CodeWorktreeMissing: {setup: func(t *testing.T) adWorld {
			// Deleted by hand with a commit only on its branch: prune,
			// then plan settles the record, keeping the branch.
			r := adRepo(t)
			_, path := adFinished(t, r, "deleted", func(path string) { r.Commit(path, "mine.txt", "only here\n") })
			if err := os.RemoveAll(path); err != nil {
				t.Fatal(err)
			}
			return adPlan(r, path)
		}},
		machine.CodeMoved: {setup: plan(func(t *testing.T, r *fixtures.Repo, id, path string) {
			r.Git("worktree", "move", path, filepath.Join(r.Root, "moved here"))
		})},
		machine.CodeIdentityChanged: {setup: plan(func(t *testing.T, r *fixtures.Repo, id, path string) {
			// Restored from a copy: the same content in a new directory.
			if err := os.Rename(path, path+".bak"); err != nil {
				t.Fatal(err)
			}
			if err := os.CopyFS(path, os.DirFS(path+".bak")); err != nil {
				t.Fatal(err)
			}
			if err := os.RemoveAll(path + ".bak"); err != nil {
				t.Fatal(err)
			}
		})},
		machine.CodeLocked: {setup: plan(func(t *testing.T, r *fixtures.Repo, id, path string) {
			r.Git("worktree", "lock", "--reason", "on a usb disk", path)
		})},
		machine.CodePrunable: {setup: plan(func(t *testing.T, r *fixtures.Repo, id, path string) {
			if err := os.Remove(filepath.Join(path, ".git")); err != nil {
				t.Fatal(err)
			}
		})},
		machine.CodeTrackedChanges: {setup: plan(func(t *testing.T, r *fixtures.Repo, id, path string) {
			r.WriteFile(path, "README", "edited\n")
		})},
		machine.CodeUntrackedFiles: {setup: plan(func(t *testing.T, r *fixtures.Repo, id, path string) {
			r.WriteFile(path, "notes/todo.txt", "mine\n")
		})},
		machine.CodeIgnoredFiles: {setup: plan(func(t *testing.T, r *fixtures.Repo, id, path string) {
			clitest.Exclude(t, r, "*.secret")
			r.WriteFile(path, "db/local.secret", "password\n")
		})},
		machine.CodeDetachedHead: {setup: plan(func(t *testing.T, r *fixtures.Repo, id, path string) {
			r.GitIn(path, "checkout", "-q", "--detach")
			r.Commit(path, "detached.txt", "detached work\n")
		})},
		machine.CodeUnpushedCommits: {setup: plan(func(t *testing.T, r *fixtures.Repo, id, path string) {
			r.Commit(path, "unpushed.txt", "only here\n")
		})},
		machine.CodeAssumeUnchanged: {setup: plan(func(t *testing.T, r *fixtures.Repo, id, path string) {
			r.GitIn(path, "update-index", "--assume-unchanged", "README")
			r.WriteFile(path, "README", "edited, hidden from status\n")
		})},
		machine.CodeSkipWorktree: {setup: plan(func(t *testing.T, r *fixtures.Repo, id, path string) {
			r.GitIn(path, "update-index", "--skip-worktree", "README")
			r.WriteFile(path, "README", "edited, hidden from status\n")
		})},
		machine.CodeStagedDiffers: {setup: plan(func(t *testing.T, r *fixtures.Repo, id, path string) {
			r.WriteFile(path, "README", "staged\n")
			r.GitIn(path, "add", "README")
			r.WriteFile(path, "README", "changed again\n")
		})},
		machine.CodePerWorktreeRef: {setup: plan(func(t *testing.T, r *fixtures.Repo, id, path string) {
			// A ref under refs/worktree/ dies with the tree.
			r.Commit(path, "wip.txt", "work in progress\n")
			r.GitIn(path, "update-ref", "refs/worktree/wip", "HEAD")
			r.GitIn(path, "reset", "-q", "--hard", "HEAD~1")
		})},
		machine.CodeUnknownAdminFile: {setup: plan(func(t *testing.T, r *fixtures.Repo, id, path string) {
			// A member of the admin entry git does not put there today.
			p := filepath.Join(r.Dir, ".git", "worktrees", id, "info", "FUTURE")
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("what a later git keeps\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		})},
		machine.CodeForeign: {setup: func(t *testing.T) adWorld {
			// Adopted, then finished, then removable: three retries.
			r := adRepo(t)
			path := filepath.Join(r.Dir, ".worktrees", "by-hand")
			r.Git("worktree", "add", "-q", "-b", "by-hand", path)
			return adPlan(r, path)
		}},

		// Apply.
		machine.CodeStale: {setup: func(t *testing.T) adWorld {
			r := adRepo(t)
			_, path := adFinished(t, r, "late", nil)
			file := clitest.PlanOutside(t, r, 0)
			r.WriteFile(path, "late.txt", "written after plan\n")
			return adWorld{r: r, args: []string{"apply", file}, again: []string{"plan"}, tree: path}
		}},
		machine.CodeExternalTree: {setup: func(t *testing.T) adWorld {
			r := adRepo(t)
			path := filepath.Join(r.Root, "outside")
			r.Git("worktree", "add", "-q", "-b", "outside", path)
			clitest.MustCustody(t, r, 0, "adopt", path)
			clitest.MustCustody(t, r, 0, "finish", filepath.Base(path))
			return adWorld{r: r, args: []string{"apply", clitest.PlanOutside(t, r, 0)}, tree: path}
		}},

		// Commands and their input.
		machine.CodeNotInitialized: {setup: func(t *testing.T) adWorld {
			return adWorld{r: fixtures.New(t, fixtures.Options{Name: clitest.SpacedRepoName}), args: []string{"list"}}
		}},
		machine.CodeConfigUntrusted: {setup: func(t *testing.T) adWorld {
			r := adRepo(t)
			r.WriteFile(r.Dir, "custody.toml", "[resources.db]\ncreate = 'true'\ndestroy = 'true'\n")
			return adWorld{r: r, args: []string{"new", "fix"}}
		}},
		machine.CodeInProgress: {setup: func(t *testing.T) adWorld {
			// An apply holds the removal intent, alive, paused after it: a
			// second apply of the same plan waits for it in vain (resume
			// alone reports it in progress, refusing nothing). Once the
			// first is done, resume finds nothing left to do and the apply
			// run again reports the tree already removed.
			r := adRepo(t)
			_, path := adFinished(t, r, "held", nil)
			plan := clitest.PlanOutside(t, r, 0)
			release, wait := clitest.Paused(t, r, "apply/after-intent", "apply", plan)
			done := func() {
				release()
				if res := wait(); res.Code != 0 {
					t.Fatalf("the paused apply: %s", res)
				}
			}
			return adWorld{r: r, args: []string{"--lock-timeout", "200ms", "apply", plan}, again: []string{"apply", plan}, tree: path, before: done}
		}},
		machine.CodeStateCorrupt: {setup: func(t *testing.T) adWorld {
			// The retry keeps the damaged file aside and starts afresh.
			r := adRepo(t)
			r.WriteFile(filepath.Join(r.Dir, ".git", "custody"), "state.db", "not a store\n")
			return adWorld{r: r, args: []string{"list"}}
		}},
		machine.CodeLockTimeout: {setup: func(t *testing.T) adWorld {
			// Another custody holds the state file; once it is done, the
			// retry (with a longer wait) runs.
			r := adRepo(t)
			release := clitest.HoldLock(t, filepath.Join(r.Dir, ".git", "custody", "state.db"))
			return adWorld{r: r, args: []string{"--lock-timeout", "50ms", "list"}, again: []string{"list"}, before: release}
		}},
		machine.CodeUnknownRecord: {input: "the id is the person's; custody list shows the ids there are",
			setup: func(t *testing.T) adWorld { return adWorld{r: adRepo(t), args: []string{"show", "nosuch-123456"}} }},
		machine.CodeUnknownRevision: {input: "the revision is the person's; git branch --all shows the names there are",
			setup: func(t *testing.T) adWorld {
				return adWorld{r: adRepo(t), args: []string{"new", "fix", "--from", "no-such-rev"}}
			}},
		machine.CodeNotInWorktree: {input: "finish names the tree to finish when run outside one; custody list shows them",
			setup: func(t *testing.T) adWorld {
				r := adRepo(t)
				clitest.NewTree(t, r, "somewhere")
				return adWorld{r: r, args: []string{"finish"}}
			}},
		machine.CodeNotInPlan: {input: "--only names ids of the plan; a fresh plan lists them",
			setup: func(t *testing.T) adWorld {
				r := adRepo(t)
				return adWorld{r: r, args: []string{"apply", clitest.PlanOutside(t, r, 0), "--only", "nosuch-123456"}}
			}},
		machine.CodeWrongRepository: {input: "the plan file named is another repository's; the retry makes this one's",
			setup: func(t *testing.T) adWorld {
				a, b := adRepo(t), adRepo(t)
				return adWorld{r: b, args: []string{"apply", clitest.PlanOutside(t, a, 0)}}
			}},
		machine.CodePlanInvalid: {input: "the file named is not a plan; the retry makes one",
			setup: func(t *testing.T) adWorld {
				r := adRepo(t)
				r.WriteFile(r.Root, "garbage.json", "not a plan\n")
				return adWorld{r: r, args: []string{"apply", filepath.Join(r.Root, "garbage.json")}}
			}},
		machine.CodeWrongState: {input: "the path named is in custody already; the retry shows its record",
			setup: func(t *testing.T) adWorld {
				r := adRepo(t)
				_, path := clitest.NewTree(t, r, "mine")
				return adWorld{r: r, args: []string{"adopt", path}}
			}},
		machine.CodeAmbiguousReference: {input: "the reference is the person's; the retry lists the trees it could mean",
			setup: func(t *testing.T) adWorld {
				r := adRepo(t)
				clitest.NewTree(t, r, "same")
				clitest.NewTree(t, r, "same")
				return adWorld{r: r, args: []string{"show", "same"}}
			}},
		machine.CodeUsage: {input: "the command line is the person's; the retry shows the usage",
			setup: func(t *testing.T) adWorld { return adWorld{r: adRepo(t), args: []string{"list", "--frobnicate"}} }},

		// A session's live lease: finishing again would change nothing
		// while it lives; the retry ends the lease as the session's end
		// would, then finishes the tree.
		machine.CodeLeaseLive: {setup: func(t *testing.T) adWorld {
			r := adRepo(t)
			id, path := clitest.NewTree(t, r, "leased")
			if res := clitest.RunBin(t, clitest.Bin(), r, path, nil, "hook", "session-start", "--session", "agent-7"); !strings.Contains(res.Stdout, `"acquired"`) {
				t.Fatalf("session-start: %s", res)
			}
			return adWorld{r: r, args: []string{"finish", id}, tree: path}
		}},

		// A person's edit or choice.
		machine.CodeInUse:               {person: "a process working in the tree is the person's to end; custody never kills it"},
		machine.CodeUnmerged:            {person: "resolving a conflict is an edit only the person can make; aborting would throw the resolution away"},
		machine.CodeOperationInProgress: {person: "a rebase, merge, cherry-pick, revert or bisect is the person's to continue or abort; either choice drops something"},
		machine.CodeSymlink:             {person: "what belongs at the path (the symlink's target or something else) is the person's to decide"},
		machine.CodeNotRegistered:       {person: "git's admin entry for the directory is gone: it is no worktree any more, and whether its files are kept is the person's choice"},
		machine.CodeAdminKeyMismatch:    {person: "another worktree was made at the record's path; which of the two is the record's tree is the person's to say"},
		machine.CodeNoRemote:            {person: "which remote the work is pushed to (a URL) is the person's to name; custody cannot know it"},
		machine.CodeObservationTimedOut: {person: "finding what the timed-out command waits for (a filter, hook or helper git runs) is the person's step; the retry then runs the same command with a longer deadline (TestPlanKeepsTreeWhoseFilterHangs checks the retry and the kept tree)"},
		machine.CodeRemoteUnavailable:   {person: "a remote that does not answer is the network's or the person's to fix; the retry asks it again"},
		machine.CodeNestedGit:           {person: "a repository inside the tree has its own commits and remotes; where they go is the person's to decide"},
		machine.CodeSubmoduleChanges:    {person: "changes inside a submodule are committed or dropped by the person, in the submodule"},
		machine.CodeSubmoduleUnpushed:   {person: "a submodule's commits are pushed by the person to the submodule's own remote"},
		machine.CodeSubmodules:          {person: "submodule repositories in the tree's admin entry hold their own objects; keeping or dropping them is the person's choice"},
		machine.CodeUntrackedContent:    {person: "an entry git cannot see (an empty directory, a special file) cannot be committed or stashed; the person moves it out"},
		machine.CodeContentDiffers:      {person: "bytes on disk that differ from HEAD behind git's back (a clean filter, eol conversion) are the person's to commit or restore"},
		machine.CodeContentUnreadable:   {person: "an entry custody cannot read is the person's to make readable or move out"},
		machine.CodeConfigInvalid:       {person: "a custody.toml that cannot be used is the person's to edit; custody doctor names its file, line and key"},
		machine.CodeSchemaNewer:         {person: "a state file a newer custody wrote needs that custody installed"},
		machine.CodeJournalBroken:       {person: "an export that does not verify was changed after the fact; only the person knows which copy to trust"},
		machine.CodeSignatureInvalid:    {person: "a head signature that does not verify was made by another key or for another journal; only the person knows which signer to trust (journal_report_refused_signature covers it)"},
		machine.CodeUnsafeTarget:        {person: "an unsafe managed root or output file is the person's to change in custody.toml or on the command line"},
		machine.CodeNotARepository:      {person: "the repository to work in is the person's to name with -C"},
		machine.CodeBareRepository:      {person: "a bare repository has no main checkout; the person runs custody in a clone with one"},
		machine.CodeResourceFailed:      {person: "a resource command that fails is the project's to fix in custody.toml"},
		machine.CodeCreateFailed:        {person: "creation fails when a required resource command fails: the project's to fix; the retry makes the tree again"},
		machine.CodeGCDisabled:          {person: "gc = false is the project's declared choice; the person destroys such a resource"},
		machine.CodeUnexpandedToken:     {person: "an @token@ custody does not know is the project's to fix in custody.toml"},
		machine.CodeResumeUnmatched:     {person: "an interrupted intent meets a world no rule fits (a person's directory where new was to make its tree): what it is, and where it goes, is the person's to say"},
		machine.CodeStatusFailed:        {person: "git status fails on a damaged index; repairing it (git reset drops what was staged) is the person's choice"},
		machine.CodeAdminLockFile:       {person: "a lock file in the admin entry is a git process's, writing the tree's state; whether one still runs (or died and left it) is the person's to tell, and custody never deletes it (TestAdminEntryOthersKeepTheTree)"},
		machine.CodeRecoveryFailed:      {person: "what would die with the tree cannot be read (a config.worktree that is a symlink): the person makes it a plain file or drops it (TestRecoveryUnreadableConfigKeepsTree)"},
		machine.CodeReadOnlyFileSystem:  {person: "a command that writes on a read-only file system: remounting it read-write, or moving to a writable copy, is the person's step, after which the retry (the command itself) runs; the commands that only read work as they are (TestReadOnlyRepositoryRefusesWrites)"},
		machine.CodeNotWritable:         {person: "a command that writes where this user may not: running it as a user who may write there is the person's step, which root, that tests run as here, never needs (TestUnwritableIsDescribed)"},
		machine.CodeStateUnreadable:     {person: "a state file that cannot be opened (its permissions, its filesystem, a dangling symlink) is the person's to fix; moving it aside would lose the records (state_unreadable_symlink.txtar)"},
		machine.CodeAmbiguousRelocation: {person: "git reports both the source and the destination of an interrupted move: which registration is the tree is the person's to say (relocate_ambiguous.txtar removes the other, then resumes)"},
		machine.CodeUnsafeToken:         {person: "an @token@ where its value would be read as code is the project's to move in custody.toml"},

		// Not given by any command on a repository built here.
		machine.CodePathUnknown:         {elsewhere: "needs lstat to fail other than ENOENT (a permission denied), which root never sees; machine's TestAssessRefusals/path-unknown"},
		machine.CodeHeadUnknown:         {elsewhere: "needs HEAD unreadable while status reads; machine's TestAssessRefusals/head-unknown"},
		machine.CodeProofFailed:         {elsewhere: "needs git to fail while looking for a proof (a failing git); machine's TestAssessRefusals/proof-failed"},
		machine.CodeObservationFailed:   {elsewhere: "needs an observer to fail part-way; observe's hidden-state tests"},
		machine.CodeWorktreeLive:        {elsewhere: "a resource whose worktree is live is not an orphan: gc reports it and acts on nothing; TestResource*"},
		machine.CodeMigrationFailed:     {elsewhere: "an older state file that fails to upgrade; TestMigrationFailedIsDescribed"},
		machine.CodeAmbiguousRepository: {elsewhere: "a common dir or main checkout git cannot name exactly; observe's discovery tests"},
		machine.CodeGuardFailed:         {elsewhere: "a transition whose guard failed between observation and commit (a race); machine's guard tests"},
		machine.CodeRemovalFailed:       {elsewhere: "needs git worktree remove to fail part-way; TestQuarantine* and steps' remove tests"},
		machine.CodeRelocationFailed:    {elsewhere: "needs git worktree move itself to fail (a destination on another filesystem); TestRelocateMoveFails"},
		machine.CodeQuarantineChanged:   {elsewhere: "needs a writer inside the tree while it is quarantined (TestQuarantineConcurrentWriter) or a file that cannot be deleted, whose retry TestAdvicePartialRemoval pastes"},
		// Archives: each is provoked by damaging an archive or its tree (e2e/archive).
		machine.CodeArchiveStale:          {elsewhere: "a file added after the archive; TestArchiveVerifyRefusals, TestArchiveBackedRemoval (the retry captures a new archive)"},
		machine.CodeArchiveDigestMismatch: {elsewhere: "a flipped byte in an archived file; TestArchiveVerifyRefusals"},
		machine.CodeArchiveIncomplete:     {elsewhere: "a deleted bundle; TestArchiveVerifyRefusals, archive_list_refused_incomplete.txtar"},
		machine.CodeArchiveBundleInvalid:  {elsewhere: "a bundle without its parents; TestArchiveVerifyRefusals"},
		machine.CodeArchiveInvalid:        {elsewhere: "a symlinked archive dir, unrecorded content, a manifest naming paths outside; TestArchiveVerifyRefusals, TestArchivePrune"},
		machine.CodeArchiveUnsupported:    {elsewhere: "a fifo in the tree; TestArchiveCreateRefusesUnsupported"},
		machine.CodeArchiveTreePresent:    {elsewhere: "prune of an archive whose tree exists; TestArchivePrune, archive_prune_refused_tree_present.txtar"},
		machine.CodeArchiveNested:         {elsewhere: "prune of an archive with a nested repository; TestArchivePrune"},
		machine.CodeArchiveUncommitted:    {elsewhere: "prune of an archive with a non-empty patch; TestArchivePrune"},
		machine.CodeArchiveStatusUnknown:  {elsewhere: "a strip of an archive made before its tree's index and status were recorded, which this custody never writes; machine's TestDecideArchiveStrip"},

		// Migrate.
		machine.CodeDiscoveryIncomplete:   {elsewhere: "a scan limit below the parent's entries; migrate_discover_refused_scan_limit.txtar pastes its retry"},
		machine.CodeMigrateChanged:        {person: "the candidate changed after a person approved it: only a person reviews the new audit and disposes of it again (TestMigrateChangedNeedsNewDisposition)"},
		machine.CodeMigrateDigestMismatch: {person: "the digest names an audit other than the one to decide on: a person reads the newest audit and disposes of it (TestMigrateDisposeRefusals)"},
		machine.CodeMigrateNotCandidate: {input: "the id was typed: migrate status lists the candidates (migrate_dispose_refused_unknown_candidate.txtar)", setup: func(t *testing.T) adWorld {
			r := adRepo(t)
			return adWorld{r: r, args: []string{"migrate", "dispose", "nosuch", "--approve", "--digest", "sha256:00"}}
		}},
		machine.CodeDispositionNotAllowed: {person: "the audit does not permit the disposition asked for: a person chooses one it permits (TestMigrateDisposeRefusals)"},
		machine.CodeLandNoTarget:          {person: "which remote or branch to land on is the person's: add a remote custody reads or name the branch with --onto (machine's TestDecideLandTarget)"},
		machine.CodeLandDiverged: {setup: func(t *testing.T) adWorld {
			// main moved on since the tree's branch left it: the retry
			// rebases the tree's commit onto it, lands and removes it.
			r := adRepo(t)
			id, path := clitest.NewTree(t, r, "diverged")
			r.Commit(path, "work.txt", "the tree's\n")
			r.Commit(r.Dir, "theirs.txt", "main moved on\n")
			r.Git("push", "-q", "origin", "main")
			return adWorld{r: r, args: []string{"land", id, "--yes"}, tree: path}
		}},
		machine.CodeLandConflict:       {person: "only a person resolves a conflict (steps/land TestLandRefusals)"},
		machine.CodeLandRaced:          {elsewhere: "the remote moves while land is held before its push; TestLandRaced in e2e/crash"},
		machine.CodeLandPushFailed:     {person: "the remote refuses the push or does not show it: a person settles the remote"},
		machine.CodeLandCheckFailed:    {person: "what the pre-land check reports is the person's to fix (steps/land TestLandCheck)"},
		machine.CodeLandNoIdentity:     {person: "git's identity is the person's to configure"},
		machine.CodeLandFailed:         {person: "the review branch is taken or the remote refuses the push: a person settles the remote (TestMigrateRelocationAndLandRefusals)"},
		machine.CodeMigrateNotApproved: {person: "only a person approves a disposition; the retry is the dispose command to run once they have reviewed the audit (TestMigrateLegacyLayout)"},
		// Generated files: the retry writes the copy --check found stale.
		machine.CodeGeneratedStale: {setup: func(t *testing.T) adWorld {
			r := adRepo(t)
			r.WriteFile(r.Dir, "skills/custody/agents/openai.yaml", "interface: {}\n")
			return adWorld{r: r, args: []string{"skill", "--out", "skills/custody", "--check"}}
		}},
		// Integrations and input.
		machine.CodeCodexEnvironmentStale: {setup: func(t *testing.T) adWorld {
			// The Codex app rewrote its file without custody's scripts:
			// the retry writes them back, and --check then passes.
			r := adRepo(t)
			r.WriteFile(r.Dir, ".codex/environments/environment.toml", "version = 1\nname = \"app\"\n")
			return adWorld{r: r, args: []string{"integrate", "codex", "--check"}}
		}},
		machine.CodeCodexEnvironmentInvalid: {person: "an environment.toml that is not TOML, or gives [setup] or [cleanup] a shape custody does not edit, is the person's (or the Codex app's) to fix; TestCodexRefusesWhatItCannotEdit"},
		machine.CodeEmptyName:               {person: "the name of a new worktree is the person's to choose; new_refused_empty_name.txtar"},
		// The branches of new: the retry makes a tree another way (on the
		// existing branch, from it, on custody's own) or lists the
		// branches there are; which one is wanted is the person's.
		machine.CodeBranchInvalid: {input: "the branch name is the person's; the retry makes the tree on a branch custody names",
			setup: func(t *testing.T) adWorld {
				return adWorld{r: adRepo(t), args: []string{"new", "fix", "--branch", "a..b"}}
			}},
		machine.CodeBranchExists: {input: "the branch name is the person's; the retry makes the tree on the branch that exists",
			setup: func(t *testing.T) adWorld {
				r := adRepo(t)
				r.Git("branch", "topic")
				return adWorld{r: r, args: []string{"new", "fix", "--branch", "topic"}}
			}},
		machine.CodeBranchMissing: {input: "the branch name is the person's; the retry lists the local branches there are",
			setup: func(t *testing.T) adWorld {
				return adWorld{r: adRepo(t), args: []string{"new", "fix", "--checkout", "no-such-branch"}}
			}},
		machine.CodeBranchCheckedOut: {input: "the branch is another worktree's; the retry starts a tree on a branch of custody's own from it",
			setup: func(t *testing.T) adWorld {
				r := adRepo(t)
				r.Git("worktree", "add", "-q", "-b", "topic", filepath.Join(r.Root, "elsewhere"))
				return adWorld{r: r, args: []string{"new", "fix", "--checkout", "topic"}}
			}},
		// Agents' hooks and integrations.
		machine.CodeLeaseHeld: {person: "another live session holds the lease until it ends or expires; show names the holder and the expiry, and waiting is the agent's (TestHookLeaseRules)"},
		machine.CodeHookPayloadInvalid: {input: "the payload is the agent's to send; the hook's help shows the payload and the flags that stand in for it",
			setup: func(t *testing.T) adWorld {
				r := adRepo(t)
				_, path := clitest.NewTree(t, r, "agent")
				return adWorld{r: r, dir: path, args: []string{"hook", "session-end"}}
			}},
		machine.CodeClaudeSettingsInvalid: {person: "a .claude/settings.json that is not a JSON object is the person's to fix or move aside; integrate never guesses what they meant (TestIntegrateClaudeRefusals)"},
		// A script of the person's that runs without custody's line: the
		// retry merges custody's line into it.
		machine.CodeCodexScriptOwn: {setup: func(t *testing.T) adWorld {
			r := adRepo(t)
			r.WriteFile(r.Dir, ".codex/environments/environment.toml", "version = 1\nname = \"app\"\n\n[setup]\nscript = \"make deps\"\n")
			return adWorld{r: r, args: []string{"integrate", "codex"}}
		}},
		machine.CodeClaudeSettingsStale: {setup: func(t *testing.T) adWorld {
			return adWorld{r: adRepo(t), args: []string{"integrate", "claude", "--check"}}
		}},
		machine.CodeResourcesFrozen: {person: "the tree's resources froze its path into their commands; it stays where it is while they live, and whether to keep it there or end it with its resources is the person's choice (TestRelocateRefusedWithResources)"},
		// The registry: another key's entry naming the tree's path, its
		// HEAD at a commit nothing else reaches. The retry keeps it under
		// a ref and removes the entry; the next plan removes the tree.
		machine.CodeDuplicateAdminEntry: {setup: plan(func(t *testing.T, r *fixtures.Repo, id, path string) {
			lone := r.Git("commit-tree", "-m", "only here", "HEAD^{tree}")
			dup := filepath.Join(r.Dir, ".git", "worktrees", "stray")
			if err := os.MkdirAll(dup, 0o755); err != nil {
				t.Fatal(err)
			}
			for name, content := range map[string]string{"gitdir": filepath.Join(path, ".git") + "\n", "commondir": "../..\n", "HEAD": lone + "\n"} {
				r.WriteFile(dup, name, content)
			}
		})},
		machine.CodeStaleCacheTree: {setup: func(t *testing.T) adWorld {
			// The retry writes d's entries again, so git sees the staged
			// change, which the next retry stashes.
			r := adRepo(t)
			r.Commit(r.Dir, "d/x.txt", "in HEAD\n")
			r.Push(r.Dir, "main")
			id, path := adFinished(t, r, "tree", nil)
			clitest.LyingCacheTree(t, r, id, path)
			return adPlan(r, path)
		}},
	}
}

// TestAdviceCoversEveryCode: every refusal code machine lists has exactly
// one way its advice is checked, with a reason where it is not run.
func TestAdviceCoversEveryCode(t *testing.T) {
	t.Parallel()
	cases := adCases()
	for _, code := range machine.SortedCodes() {
		c, ok := cases[code]
		if !ok {
			t.Errorf("refusal code %s has no case in adCases: build the situation and let its retry be pasted, or say why the next step is a person's", code)
			continue
		}
		ways := 0
		for _, set := range []bool{c.setup != nil, c.person != "", c.elsewhere != ""} {
			if set {
				ways++
			}
		}
		if ways != 1 || c.input != "" && c.setup == nil {
			t.Errorf("refusal code %s: a case sets exactly one of setup, person and elsewhere (input goes with setup)", code)
		}
	}
	for code := range cases {
		if _, ok := machine.Codes()[code]; !ok {
			t.Errorf("adCases has a case for %s, which machine does not list", code)
		}
	}
	t.Logf("of %d codes: %d pasted and followed, %d about a typed value, %d a person's step, %d provoked elsewhere", len(cases),
		adCount(cases, func(c adCase) bool { return c.setup != nil && c.input == "" }), adCount(cases, func(c adCase) bool { return c.input != "" }),
		adCount(cases, func(c adCase) bool { return c.person != "" }), adCount(cases, func(c adCase) bool { return c.elsewhere != "" }))
}

func adCount(cases map[machine.Code]adCase, f func(adCase) bool) int {
	n := 0
	for _, c := range cases {
		if f(c) {
			n++
		}
	}
	return n
}

// TestAdviceWorks pastes the advice of every code that has a setup. When
// the human form of a retry differs from the JSON one (its paths relative
// to where custody ran), that form is pasted too, in a world of its own:
// for every third code in order bounded, for every code under
// fixtures.Full (each world is a repository built again).
func TestAdviceWorks(t *testing.T) {
	t.Parallel()
	cases := adCases()
	for i, code := range slices.Sorted(maps.Keys(cases)) {
		c := cases[code]
		if c.setup == nil {
			continue
		}
		pasteHuman := fixtures.Full() || i%3 == 0
		t.Run(string(code), func(t *testing.T) {
			t.Parallel()
			w := c.setup(t)
			if w.dir == "" {
				w.dir = w.r.Dir
			}
			first, human := adAdvice(t, w, w.args, code, "")
			if human != first.Retry && pasteHuman {
				// The human form prints another line (paths relative to
				// where custody ran): it is pasted too, in a world of its
				// own, as that world's custody prints it there.
				w2 := c.setup(t)
				if w2.dir == "" {
					w2.dir = w2.r.Dir
				}
				first2, human2 := adAdvice(t, w2, w2.args, code, "")
				adFollow(t, w2, c, adJSONRefusal{Code: string(code), Retry: human2, Path: first2.Path})
			}
			adFollow(t, w, c, first)
		})
	}
}

// adJSONRefusal is one piece of advice: a refusal's code, retry and path.
type adJSONRefusal = clitest.JSONRefusal

// adAdvice runs args in w (human and --json) and returns the refusal with
// code (about w.tree or below it, when tree is set) and the retry the human
// form prints for it.
func adAdvice(t *testing.T, w adWorld, args []string, code machine.Code, tree string) (adJSONRefusal, string) {
	t.Helper()
	refs, res := adRefusals(t, w, args)
	i := slices.IndexFunc(refs, func(r adJSONRefusal) bool { return r.Code == string(code) && adAbout(r, tree) })
	if i < 0 {
		t.Fatalf("custody %s gives no refusal [%s]%s:\n%s", strings.Join(args, " "), code, adAt(tree), res)
	}
	// Plan's summary names each kept tree's first reason; --verbose
	// prints every refusal with its retry.
	human := [][]string{args}
	if args[0] == "plan" {
		human = append(human, append(slices.Clip(args), "--verbose"))
	}
	var hres clitest.Result
	for _, h := range human {
		hres = clitest.RunBin(t, clitest.Bin(), w.r, w.dir, nil, h...)
		lines := strings.Split(hres.Stdout+hres.Stderr, "\n")
		for j, l := range lines {
			if !strings.Contains(l, "["+string(code)+"]") {
				continue
			}
			// A hook's refusal is one line, its retry after "; next: ".
			if k := strings.LastIndex(l, "; next: "); strings.HasPrefix(l, "custody hook ") && k >= 0 {
				return refs[i], l[k+len("; next: "):]
			}
			for _, next := range lines[j+1:] {
				if retry, ok := strings.CutPrefix(next, "\tto retry: "); ok {
					return refs[i], retry
				}
				// Plan's next group: this one's trees each print their own
				// retry under them, which --verbose prints as a refusal's.
				if strings.HasPrefix(next, "kept [") || strings.HasPrefix(next, "next: ") {
					break
				}
			}
		}
	}
	t.Fatalf("custody %s prints no [%s] followed by a \\tto retry: line (or, for a hook, ending with its retry):\n%s", strings.Join(args, " "), code, hres)
	return adJSONRefusal{}, ""
}

// adRefusals runs args with --json in w and returns every refusal of its
// envelope (stdout, or stderr on exit 1).
func adRefusals(t *testing.T, w adWorld, args []string) ([]adJSONRefusal, clitest.Result) {
	t.Helper()
	res := clitest.RunBin(t, clitest.Bin(), w.r, w.dir, nil, append(slices.Clip(args), "--json")...)
	if res.Code != 0 && res.Code != 1 && res.Code != 3 {
		t.Fatalf("custody %s --json: exit %d\n%s", strings.Join(args, " "), res.Code, res)
	}
	envelope := res.Stdout
	if res.Code == output.ExitError {
		envelope = res.Stderr
	}
	var v any
	if err := json.Unmarshal([]byte(envelope), &v); err != nil {
		t.Fatalf("custody %s --json: not one JSON envelope: %v\n%s", strings.Join(args, " "), err, res)
	}
	return clitest.JSONRefusals(v), res
}

// adAbout reports whether r is about tree (at it or below it); every
// refusal is about "".
func adAbout(r adJSONRefusal, tree string) bool {
	return tree == "" || r.Path == tree || strings.HasPrefix(r.Path, tree+string(os.PathSeparator))
}

func adAt(tree string) string {
	if tree == "" {
		return ""
	}
	return " about " + tree
}

// adFollow pastes first's retry, runs custody again and follows the advice
// about the same tree until there is none, it is a person's, or it came
// round again (a failure).
func adFollow(t *testing.T, w adWorld, c adCase, first adJSONRefusal) {
	t.Helper()
	cases := adCases()
	again := w.args
	if w.again != nil {
		again = w.again
	}
	seen := map[string]bool{}
	cur := first
	if w.before != nil {
		w.before()
	}
	for step := 0; step < 8; step++ {
		key := cur.Code + "\x00" + cur.Retry + "\x00" + cur.Path
		if seen[key] {
			t.Fatalf("the advice came round again: [%s] %q about %s", cur.Code, cur.Retry, cur.Path)
		}
		seen[key] = true
		sh := clitest.RunBin(t, "sh", w.r, w.dir, []string{clitest.PathEnv(filepath.Dir(clitest.Bin()))}, "-c", cur.Retry)
		t.Logf("pasted [%s] %q:\n%s", cur.Code, cur.Retry, sh)
		// plan exits 3 while it keeps a tree (it is to exit 0 for any
		// plan it produced): both are a plan made.
		planned := strings.HasPrefix(cur.Retry, "custody plan") && !strings.Contains(cur.Retry, "&&") && sh.Code == output.ExitPending
		if sh.Code != 0 && !planned {
			t.Fatalf("the retry of [%s] %q failed when pasted in %s:\n%s", cur.Code, cur.Retry, w.dir, sh)
		}
		if c.input != "" {
			if strings.TrimSpace(sh.Stdout+sh.Stderr) == "" && !strings.Contains(cur.Retry, " -o ") {
				t.Errorf("the retry of [%s] %q shows nothing to choose from", cur.Code, cur.Retry)
			}
			return // the person now types another value
		}
		refs, res := adRefusals(t, w, again)
		for _, r := range refs {
			if r.Code == cur.Code && r.Retry == cur.Retry && r.Path == cur.Path {
				t.Fatalf("after the retry %q, custody %s gives the same advice [%s] again:\n%s", cur.Retry, strings.Join(again, " "), cur.Code, res)
			}
		}
		if w.tree == "" {
			return
		}
		i := slices.IndexFunc(refs, func(r adJSONRefusal) bool { return adAbout(r, w.tree) })
		if i < 0 {
			adSettled(t, w, again, res)
			return
		}
		next := refs[i]
		if nc, ok := cases[machine.Code(next.Code)]; !ok || nc.setup == nil || nc.input != "" {
			t.Logf("the next advice about %s is a person's: [%s] %q", w.tree, next.Code, next.Retry)
			return
		}
		cur = next
	}
	t.Fatalf("the advice about %s did not settle within 8 retries", w.tree)
}

// adSettled checks, when the command run again is plan, that plan says
// nothing about the tree because it is to be removed, its record to be
// settled (its tree vanished, decision 0226), or custody settled it (no
// item): not because custody lost sight of it.
func adSettled(t *testing.T, w adWorld, again []string, res clitest.Result) {
	t.Helper()
	if again[0] != "plan" {
		return
	}
	p := clitest.DecodeResult[machine.Plan](t, res, "plan")
	if it := clitest.PlanItemAt(p, w.tree); it != nil && it.Action != machine.ActionRemove && it.Action != machine.ActionSettle {
		t.Errorf("after the advice, plan's item for %s is %s with no refusal about the tree: %+v", w.tree, it.Action, *it)
	}
	if it := clitest.PlanItemAt(p, w.tree); it == nil {
		for _, rec := range clitest.ListRecords(t, w.r, true) {
			if rec.Path == w.tree && rec.State != machine.StateTombstoned {
				t.Errorf("after the advice, plan has no item for %s, whose record %s is %s", w.tree, rec.ID, rec.State)
			}
		}
	}
}

// TestAdvicePartialRemoval: a removal that stops part-way (a file that
// cannot be deleted) says so, names the entry and why, keeps the tree's
// .git file to the end and restores what it had deleted, so git still
// knows the whole tree. Making the file deletable is the person's step;
// then the retry, pasted as printed, plans the tree's removal again, and
// that plan's apply completes it.
func TestAdvicePartialRemoval(t *testing.T) {
	t.Parallel()
	r := adRepo(t)
	id, path := clitest.NewTree(t, r, "partial")
	r.WriteFile(path, "a.txt", "a\n")
	r.WriteFile(path, "sub/stuck.txt", "stuck\n")
	r.WriteFile(path, "z.txt", "z\n")
	r.CommitAll(path, "three files")
	r.Push(path, "main")
	clitest.MustCustody(t, r, 0, "finish", id)
	stuck := filepath.Join(path, "sub", "stuck.txt")
	if out, err := exec.Command("chattr", "+i", stuck).CombinedOutput(); err != nil {
		t.Skipf("cannot make a file undeletable here (chattr +i): %v %s", err, out)
	}
	unstick := func() { _ = exec.Command("chattr", "-i", stuck).Run() }
	t.Cleanup(unstick)

	res := clitest.Custody(t, r, "apply", clitest.PlanOutside(t, r, 0), "--json")
	if res.Code != output.ExitPending {
		t.Fatalf("apply over an undeletable file: %s", res)
	}
	var v any
	if err := json.Unmarshal([]byte(res.Stdout), &v); err != nil {
		t.Fatal(err)
	}
	refs := clitest.JSONRefusals(v)
	if len(refs) != 1 {
		t.Fatalf("want one refusal, got %+v\n%s", refs, res)
	}
	msg := clitest.DecodeResult[map[string]any](t, res, "apply")
	text, _ := json.Marshal(msg)
	for _, want := range []string{stuck + " could not be deleted", "operation not permitted", "put back at " + path, "restored"} {
		if !strings.Contains(string(text), want) {
			t.Errorf("the refusal does not say %q:\n%s", want, res)
		}
	}
	if _, err := os.Lstat(filepath.Join(path, ".git")); err != nil {
		t.Errorf("the tree's .git file was deleted before the removal stopped: %v", err)
	}

	unstick()
	sh := clitest.RunBin(t, "sh", r, r.Dir, []string{clitest.PathEnv(filepath.Dir(clitest.Bin()))}, "-c", refs[0].Retry)
	if sh.Code != 0 {
		t.Fatalf("the retry %q failed when pasted:\n%s", refs[0].Retry, sh)
	}
	if st := r.GitIn(path, "status", "--porcelain", "--ignored"); st != "" {
		t.Errorf("the tree is not whole after the stopped removal:\n%s", st)
	}
	clitest.Custody(t, r, "apply", clitest.PlanOutside(t, r, 0))
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Errorf("after the retry and a new plan's apply the tree is still there: %v", err)
	}
	if st := clitest.RecordState(t, r, id); st != "tombstoned" {
		t.Errorf("after the retry and a new plan's apply the record is %s, want tombstoned", st)
	}
}
