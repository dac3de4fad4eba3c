package machine

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Code is a refusal's stable kebab-case name. Scripts match on it; it never
// changes meaning once released.
type Code string

// Refusal is an expected "no": custody declined to act on one thing. It is
// data, never a panic. Every refusal names the exact path, ref or commit, a
// one-line reason and the command that retries.
type Refusal struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
	Path    string `json:"path,omitempty"`
	Retry   string `json:"retry,omitempty"`
}

// Error renders the refusal the go-command way: the fact, then the command
// on an indented line.
func (r *Refusal) Error() string {
	if r.Retry == "" {
		return fmt.Sprintf("%s [%s]", r.Message, r.Code)
	}
	return fmt.Sprintf("%s [%s]\n\tto retry: %s", r.Message, r.Code, r.Retry)
}

// Is makes errors.Is match refusals by code.
func (r *Refusal) Is(target error) bool {
	t, ok := target.(*Refusal)
	return ok && t.Code == r.Code && t.Message == ""
}

// AsError returns a comparable sentinel for code, for use with errors.Is.
func (c Code) AsError() error { return &Refusal{Code: c} }

// Refusals of a worktree's assessment (plan), in the order they are checked.
const (
	// CodeNotFinished is returned when a record is still active: its
	// worktree is in use by whoever created it.
	CodeNotFinished Code = "not-finished"
	// CodeLeaseLive is returned when a live lease holds the worktree.
	CodeLeaseLive Code = "lease-live"
	// CodeIntentPending is returned when a record still carries an intent
	// from an interrupted command.
	CodeIntentPending Code = "intent-pending"
	// CodeInProgress is returned when another live custody process holds
	// the record's intent.
	CodeInProgress Code = "in-progress"
	// CodeNotOwned is returned when the record, ready marker and branch do
	// not together prove custody created the worktree.
	CodeNotOwned Code = "not-owned"
	// CodePathUnknown is returned when the worktree path could not be
	// observed (permission, I/O error): unknown is never absent.
	CodePathUnknown Code = "path-unknown"
	// CodeWorktreeMissing is returned when the worktree path is absent.
	CodeWorktreeMissing Code = "worktree-missing"
	// CodeMoved is returned when git moved the worktree away from the
	// record's path (`git worktree move`); custody does not follow moves.
	CodeMoved Code = "moved"
	// CodeSymlink is returned when the worktree path is a symlink.
	CodeSymlink Code = "symlink"
	// CodeNotRegistered is returned when the path exists but git does not
	// register it as a worktree.
	CodeNotRegistered Code = "not-registered"
	// CodeAdminKeyMismatch is returned when git registers the path under a
	// different admin key than the record's.
	CodeAdminKeyMismatch Code = "admin-key-mismatch"
	// CodeIdentityChanged is returned when the directory's device+inode
	// differ from the ones recorded.
	CodeIdentityChanged Code = "identity-changed"
	// CodeLocked is returned when the worktree is locked (`git worktree lock`).
	CodeLocked Code = "locked"
	// CodePrunable is returned when git considers the registration prunable.
	CodePrunable Code = "prunable"
	// CodeStatusFailed is returned when `git status` could not be read.
	CodeStatusFailed Code = "status-failed"
	// CodeUnmerged is returned when the index holds unresolved conflicts.
	CodeUnmerged Code = "unmerged-paths"
	// CodeTrackedChanges is returned for staged or unstaged tracked changes.
	CodeTrackedChanges Code = "tracked-changes"
	// CodeUntrackedFiles is returned when untracked files exist.
	CodeUntrackedFiles Code = "untracked-files"
	// CodeIgnoredFiles is returned when ignored files exist: removal would
	// delete them.
	CodeIgnoredFiles Code = "ignored-files"
	// CodeInUse is returned when a process works inside the tree.
	CodeInUse Code = "in-use"
	// CodeHeadUnknown is returned when the tree's HEAD could not be read.
	CodeHeadUnknown Code = "head-unknown"
	// CodeNoRemote is returned when the repository has no remote at all.
	CodeNoRemote Code = "no-remote"
	// CodeRemoteUnavailable is returned when a remote did not answer and
	// no answering remote proves the work published.
	CodeRemoteUnavailable Code = "remote-unavailable"
	// CodeDetachedHead is returned for a detached HEAD without proof.
	CodeDetachedHead Code = "detached-head"
	// CodeUnpushedCommits is returned when HEAD is on no advertised ref.
	CodeUnpushedCommits Code = "unpushed-commits"
	// CodeProofFailed is returned when looking for a proof failed.
	CodeProofFailed Code = "proof-failed"
	// CodeDuplicateAdminEntry is returned when another of git's admin
	// entries (another key) names the tree's path too: a removal would
	// leave it registering a gone path, its HEAD perhaps the only thing
	// that keeps a commit.
	CodeDuplicateAdminEntry Code = "duplicate-admin-entry"
)

// Refusals of hidden state: what `git status` does not report but removal
// would destroy. Observers put them in WorktreeObservation.Hidden.
const (
	// CodeAssumeUnchanged is returned for an index entry with the
	// assume-unchanged bit: its changes are invisible to status.
	CodeAssumeUnchanged Code = "assume-unchanged"
	// CodeSkipWorktree is returned for an index entry with the skip-worktree
	// bit.
	CodeSkipWorktree Code = "skip-worktree"
	// CodeStagedDiffers is returned when staged content differs from both
	// HEAD and the working copy: the staged version exists nowhere else.
	CodeStagedDiffers Code = "staged-differs"
	// CodeNestedGit is returned for a .git (file or directory) below the
	// tree's root: a repository there may hold commits no remote has.
	CodeNestedGit Code = "nested-git"
	// CodePerWorktreeRef is returned for a ref under refs/worktree/,
	// refs/bisect/ or refs/rewritten/, which dies with the worktree.
	CodePerWorktreeRef Code = "per-worktree-ref"
	// CodeOperationInProgress is returned while a rebase, merge,
	// cherry-pick, revert or bisect is in progress.
	CodeOperationInProgress Code = "operation-in-progress"
	// CodeSubmoduleChanges is returned for a submodule with changes.
	CodeSubmoduleChanges Code = "submodule-changes"
	// CodeSubmoduleUnpushed is returned for a submodule whose HEAD is on no
	// ref its remotes advertise.
	CodeSubmoduleUnpushed Code = "submodule-unpushed"
	// CodeSubmodules is returned for a worktree holding submodule
	// repositories (in its admin entry's modules/).
	CodeSubmodules Code = "submodules"
	// CodeObservationFailed is returned when part of the tree could not be
	// observed: unknown is never clean.
	CodeObservationFailed Code = "observation-failed"
	// CodeObservationTimedOut is returned when a command observing the
	// tree (git status and the filters it runs, a proof's git) was still
	// running at its deadline: it was killed, and what it would have said
	// is unknown.
	CodeObservationTimedOut Code = "observation-timed-out"
	// CodeForeign is returned for a registered worktree custody has no
	// record of: it is listed, never planned for removal.
	CodeForeign Code = "foreign"
	// CodeStaleCacheTree is returned when the index's cache tree names
	// another tree or entry count for a directory than its entries make:
	// git status, diff --cached, stash and commit trust it, so what is
	// staged there is not what git shows.
	CodeStaleCacheTree Code = "stale-cache-tree"
	// CodeUnknownAdminFile is returned for a member of the tree's admin
	// entry (<common>/worktrees/<key>/) that custody does not know git
	// keeps there: what it holds would die with the tree.
	CodeUnknownAdminFile Code = "unknown-admin-file"
	// CodeAdminLockFile is returned for a *.lock file in the tree's admin
	// entry: a git process is writing the tree's state, or died doing it.
	CodeAdminLockFile Code = "admin-lock-file"
)

// Refusals of resources.
const (
	// CodeGCDisabled is returned for a ledger entry with gc = false.
	CodeGCDisabled Code = "gc-disabled"
	// CodeWorktreeLive is returned when a resource's worktree (or its path
	// or handle) is still live, so the resource is not an orphan.
	CodeWorktreeLive Code = "worktree-live"
	// CodeUnexpandedToken is returned for a frozen command that still
	// carries an @token@.
	CodeUnexpandedToken Code = "unexpanded-token"
	// CodeResourceFailed is returned when a resource command failed.
	CodeResourceFailed Code = "resource-failed"
)

// Errors of a whole command (exit 1), as codes in the error envelope.
const (
	// CodeUsage is returned for a command line custody cannot parse.
	CodeUsage Code = "usage"
	// CodeConfigInvalid is returned when custody.toml cannot be used.
	CodeConfigInvalid Code = "config-invalid"
	// CodeStateCorrupt is returned when the state file cannot be read.
	CodeStateCorrupt Code = "state-corrupt"
	// CodeSchemaNewer is returned for a state file a newer custody wrote.
	CodeSchemaNewer Code = "schema-newer"
	// CodeLockTimeout is returned when another process (custody or not)
	// held the state file past the lock timeout.
	CodeLockTimeout Code = "lock-timeout"
	// CodeNotInitialized is returned where custody never ran.
	CodeNotInitialized Code = "not-initialized"
	// CodePlanInvalid is returned for a plan file that is not a valid,
	// unedited custody.plan/1.
	CodePlanInvalid Code = "plan-invalid"
	// CodeJournalBroken is returned when an exported journal does not
	// verify.
	CodeJournalBroken Code = "journal-broken"
	// CodeStateUnreadable is returned when the state file exists but cannot
	// be opened (permissions, a read-only filesystem); it is not corrupt.
	CodeStateUnreadable Code = "state-unreadable"
	// CodeReadOnlyFileSystem is returned when a command that writes runs
	// where the repository's file system is mounted read-only; nothing was
	// changed, and the commands that only read work there.
	CodeReadOnlyFileSystem Code = "read-only-file-system"
	// CodeNotWritable is returned when a command that writes runs where
	// this user may not write the repository's custody state (permissions
	// on a writable file system); nothing was changed.
	CodeNotWritable Code = "not-writable"
	// CodeMigrationFailed is returned when upgrading an older state file to
	// this custody's schema failed; the file was left as it was.
	CodeMigrationFailed Code = "state-migration-failed"
	// CodeSignatureInvalid is returned when a journal head signature does
	// not verify against the allowed signers, or cannot be made.
	CodeSignatureInvalid Code = "signature-invalid"
	// CodeGeneratedStale is returned when a generated file (the skill's
	// SKILL.md or agents/openai.yaml) is missing or differs from what this
	// custody generates; nothing was written.
	CodeGeneratedStale Code = "generated-stale"
	// CodeCodexEnvironmentInvalid is returned when the Codex app's
	// environment.toml cannot be edited safely (not TOML, or [setup] or
	// [cleanup] in a shape custody does not edit); nothing was written.
	CodeCodexEnvironmentInvalid Code = "codex-environment-invalid"
	// CodeCodexEnvironmentStale is returned by integrate codex --check when
	// environment.toml lacks what custody would write.
	CodeCodexEnvironmentStale Code = "codex-environment-stale"
	// CodeCodexScriptOwn is returned (exit 3) by integrate codex when a
	// script of the person's in a table the Codex app runs ([setup],
	// [cleanup], or a darwin or linux override of them) lacks custody's
	// line: integrate left it as it was, and --merge puts the line in.
	CodeCodexScriptOwn Code = "codex-script-own"
	// CodeEmptyName is returned when new is given a name with nothing an
	// id can be made of (empty, only spaces or only punctuation).
	CodeEmptyName Code = "empty-name"
	// CodeBranchInvalid is returned when new --branch names no valid
	// branch name (git check-ref-format --branch would refuse it); nothing
	// was made.
	CodeBranchInvalid Code = "branch-invalid"
	// CodeBranchExists is returned when new --branch names a branch that
	// exists already; nothing was made.
	CodeBranchExists Code = "branch-exists"
	// CodeBranchMissing is returned when new --checkout names no existing
	// local branch; nothing was made.
	CodeBranchMissing Code = "branch-missing"
	// CodeBranchCheckedOut is returned when new --checkout names a branch
	// another worktree has checked out, as git would refuse it; nothing
	// was made.
	CodeBranchCheckedOut Code = "branch-checked-out"
)

// Refusals about the repository itself.
const (
	// CodeNotARepository is returned when the directory is not inside a git
	// repository.
	CodeNotARepository Code = "not-a-repository"
	// CodeBareRepository is returned for a bare repository: it has no main
	// checkout to keep worktrees beside.
	CodeBareRepository Code = "bare-repository"
	// CodeAmbiguousRepository is returned when the common dir or the main
	// checkout cannot be identified exactly.
	CodeAmbiguousRepository Code = "ambiguous-repository"
)

// Refusals of apply.
const (
	// CodeStale is returned when the tree's observation no longer equals the
	// fingerprint plan reviewed.
	CodeStale Code = "stale"
	// CodeNotInPlan is returned when --only names an id the plan lacks.
	CodeNotInPlan Code = "not-in-plan"
	// CodeUnknownRecord is returned when a plan names a record the store
	// does not hold.
	CodeUnknownRecord Code = "unknown-record"
	// CodeNotInWorktree is returned when a command that defaults to "this
	// worktree" runs outside every managed worktree.
	CodeNotInWorktree Code = "not-in-worktree"
	// CodeWrongState is returned when a record is in a state the requested
	// transition does not start from.
	CodeWrongState Code = "wrong-state"
	// CodeGuardFailed is returned when a transition's guard did not hold.
	CodeGuardFailed Code = "guard-failed"
	// CodeRemovalFailed is returned when removal did not end with the path
	// absent and unregistered.
	CodeRemovalFailed Code = "removal-failed"
	// CodeCreateFailed is returned when creation did not end with exactly the
	// intended registration, HEAD and marker.
	CodeCreateFailed Code = "create-failed"
	// CodeWrongRepository is returned when a plan was made for another
	// repository; the whole plan is refused.
	CodeWrongRepository Code = "wrong-repository"
	// CodeUnsafeTarget is returned when custody refuses the target of a
	// destructive or writing step: a removal's filesystem root, home
	// directory, path containing the main checkout or git dir, symlink or
	// replaced directory; or an output file (-o) that exists and is not a
	// regular file (a device, a FIFO, a directory, a symlink).
	CodeUnsafeTarget Code = "unsafe-target"
	// CodeUnknownRevision is returned when --from names no commit.
	CodeUnknownRevision Code = "unknown-revision"
	// CodeResumeUnmatched is returned when an interrupted intent's
	// observation fits no resume rule.
	CodeResumeUnmatched Code = "resume-unmatched"
	// CodeAmbiguousRelocation is returned when an interrupted relocation
	// finds git reporting both its source and its destination.
	CodeAmbiguousRelocation Code = "ambiguous-relocation"
	// CodeConfigUntrusted is returned when custody.toml declares commands
	// (a resource's create, destroy or ensure) and its exact content, by
	// sha256, was never approved with `custody trust`: nothing runs, and
	// nothing is made, until a person approves it.
	CodeConfigUntrusted Code = "config-untrusted"
	// CodeRecoveryFailed is returned when something that would die with a
	// removed tree (a reflog, its per-worktree config) cannot be read or
	// kept; the tree is kept.
	CodeRecoveryFailed Code = "recovery-failed"
	// CodeExternalTree is returned when apply would remove an adopted tree
	// outside the managed root without --allow-external-retirement.
	CodeExternalTree Code = "external-tree"
	// CodeQuarantineChanged is returned when a tree moved into quarantine
	// holds an entry the final observation did not see (a file written
	// meanwhile); the tree is moved back and kept.
	CodeQuarantineChanged Code = "quarantine-changed"
	// CodeUnsafeToken is returned when a resource command's @token@ stands
	// where its value would be read as code (a quoted heredoc, single
	// quotes with a value that is not plain text, $((…)) with a value that
	// is not a number); the command is refused when it is frozen.
	CodeUnsafeToken Code = "unsafe-token"
	// CodeUntrackedContent is returned when walking the tree on the
	// filesystem finds an entry HEAD does not track (a file, a directory
	// holding no tracked path, a special file) that git status did not
	// report.
	CodeUntrackedContent Code = "untracked-content"
	// CodeContentDiffers is returned when a tracked file's raw bytes or
	// mode on disk differ from HEAD's blob though git status called it
	// clean (a clean filter, eol conversion, core.fileMode, the stat cache).
	CodeContentDiffers Code = "content-differs"
	// CodeContentUnreadable is returned when an entry in the tree cannot be
	// read to account for its content.
	CodeContentUnreadable Code = "content-unreadable"
	// CodeAmbiguousReference is returned when a tree reference (an id
	// prefix, a directory name, a path) names more than one tree; the
	// refusal lists them and nothing is done.
	CodeAmbiguousReference Code = "ambiguous-reference"
	// CodeArchiveStale is returned when the tree no longer equals the
	// archive's fingerprint (HEAD, the tree of its files, a nested
	// repository's image): a file was added or changed after the capture.
	CodeArchiveStale Code = "archive-stale"
	// CodeArchiveDigestMismatch is returned when an archive file's size or
	// SHA-256 differs from what its manifest records.
	CodeArchiveDigestMismatch Code = "archive-digest-mismatch"
	// CodeArchiveIncomplete is returned when an archive lacks its manifest
	// or a file its manifest records.
	CodeArchiveIncomplete Code = "archive-incomplete"
	// CodeArchiveBundleInvalid is returned when an archive's bundle does
	// not index, or lacks objects its commits need (a parent omitted).
	CodeArchiveBundleInvalid Code = "archive-bundle-invalid"
	// CodeArchiveInvalid is returned when an archive directory is a
	// symlink, unreadable, holds what its manifest does not name, or its
	// manifest does not parse or names paths outside it.
	CodeArchiveInvalid Code = "archive-invalid"
	// CodeArchiveUnsupported is returned when a tree holds an entry no
	// archive can restore byte for byte (a fifo, socket or device), or
	// one that could not be read; the tree is not archived.
	CodeArchiveUnsupported Code = "archive-unsupported"
	// CodeArchiveTreePresent is returned when prune finds the archived
	// tree still on disk: the archive is not pruned while its tree exists.
	CodeArchiveTreePresent Code = "archive-tree-present"
	// CodeArchiveStatusUnknown is returned when a strip finds an archive
	// whose manifest does not record what git's index and status said of
	// its tree when it was captured (an archive made before they were
	// recorded): its build output cannot be told from a person's work by
	// the rules its tree was classified by, so nothing is stripped.
	CodeArchiveStatusUnknown Code = "archive-status-unknown"
	// CodeArchiveNested is returned when prune finds an archive holding
	// nested repositories, whose commits no remote is asked about.
	CodeArchiveNested Code = "archive-nested"
	// CodeArchiveUncommitted is returned when prune finds an archive
	// holding uncommitted state (a non-empty patch, empty directories),
	// which no remote holds.
	CodeArchiveUncommitted Code = "archive-uncommitted"
	// CodeRelocationFailed is returned when git worktree move did not move
	// a tree; the tree stays where it was and its record steps back.
	CodeRelocationFailed Code = "relocation-failed"
	// CodeLeaseHeld is returned when a session hook asks to take, renew
	// or release a lease another session holds live; nothing is changed.
	CodeLeaseHeld Code = "lease-held"
	// CodeHookPayloadInvalid is returned when a hook's stdin is not a
	// payload it can use (not JSON, larger than the bound, no session id,
	// no name); the hook changes nothing and still exits 0.
	CodeHookPayloadInvalid Code = "hook-payload-invalid"
	// CodeClaudeSettingsInvalid is returned when .claude/settings.json
	// exists but cannot be merged (not JSON, hooks not an object, a
	// symlink); nothing is written.
	CodeClaudeSettingsInvalid Code = "claude-settings-invalid"
	// CodeClaudeSettingsStale is returned by integrate claude --check when
	// .claude/settings.json lacks custody's hooks as integrate writes them.
	CodeClaudeSettingsStale Code = "claude-settings-stale"
	// CodeResourcesFrozen is returned when a tree to be relocated has
	// resources whose commands were frozen with its path.
	CodeResourcesFrozen Code = "resources-frozen"
)

// Refusals of migrate.
const (
	// CodeDiscoveryIncomplete is returned when a bounded collection of
	// migrate discover (the scan of the main checkout's parent) was cut
	// short: an incomplete inventory is never a complete one.
	CodeDiscoveryIncomplete Code = "discovery-incomplete"
	// CodeMigrateChanged is returned when a candidate's fresh audit no
	// longer equals the digest a person approved: the change is a new
	// observation that needs a new disposition.
	CodeMigrateChanged Code = "migrate-changed"
	// CodeMigrateDigestMismatch is returned when migrate dispose names a
	// digest that is not the candidate's newest audit.
	CodeMigrateDigestMismatch Code = "migrate-digest-mismatch"
	// CodeMigrateNotCandidate is returned when an id names no admitted
	// candidate of the migration.
	CodeMigrateNotCandidate Code = "migrate-not-candidate"
	// CodeDispositionNotAllowed is returned when a disposition is not one
	// the candidate's audit permits.
	CodeDispositionNotAllowed Code = "disposition-not-allowed"
	// CodeLandFailed is returned when pushing a candidate's HEAD to its
	// review branch failed; the tree is kept.
	CodeLandFailed Code = "land-failed"
	// CodeMigrateNotApproved is returned by migrate apply for a candidate
	// whose audit no person has disposed of: it is left as it is.
	CodeMigrateNotApproved Code = "migrate-not-approved"
)

// Refusals of custody land (docs/decisions/0259-land.md). The tree is kept
// as it was and nothing was pushed, unless the message says otherwise.
const (
	// CodeLandNoTarget is returned when land cannot tell where to
	// integrate: no push lands where a remote custody proves from is
	// read from, the proving remote did not answer, or it names no
	// default branch (or the --onto branch) exactly.
	CodeLandNoTarget Code = "land-no-target"
	// CodeLandDiverged is returned when the tree's branch cannot be
	// integrated by the method asked for: it diverged from the target
	// without a method, or a rebase meets merge commits.
	CodeLandDiverged Code = "land-diverged"
	// CodeLandConflict is returned when integrating conflicts; the
	// message lists the conflicting paths.
	CodeLandConflict Code = "land-conflict"
	// CodeLandRaced is returned when the target moved between the
	// integration and the push: the push's lease refused it, nothing was
	// pushed.
	CodeLandRaced Code = "land-raced"
	// CodeLandPushFailed is returned when the push failed otherwise, or
	// the proving remote did not show it landed.
	CodeLandPushFailed Code = "land-push-failed"
	// CodeLandCheckFailed is returned when the pre-land check of
	// custody.toml ([land] check) failed in the tree.
	CodeLandCheckFailed Code = "land-check-failed"
	// CodeLandNoIdentity is returned when git has no identity to write
	// a squash, merge or rebased commit under.
	CodeLandNoIdentity Code = "land-no-identity"
)

// Code reports every refusal code with a one-line meaning, sorted by code.
// docs/ renders it; tests check every code has a machine case.
func Codes() map[Code]string {
	m := map[Code]string{
		// custody land.
		CodeLandNoTarget:    "land cannot tell which branch of which proving remote to integrate into",
		CodeLandDiverged:    "the branch cannot be integrated by the method asked for",
		CodeLandConflict:    "integrating the branch conflicts",
		CodeLandRaced:       "the target moved between the integration and the push; nothing was pushed",
		CodeLandPushFailed:  "the push failed or the proving remote does not show it",
		CodeLandCheckFailed: "the pre-land check of custody.toml failed",
		CodeLandNoIdentity:  "git has no identity to write the landing's commits under",

		CodeNotFinished:         "the record is active; finish it first",
		CodeLeaseLive:           "a live lease holds the worktree",
		CodeIntentPending:       "an interrupted command left an intent; run custody resume",
		CodeInProgress:          "another live custody process is acting on the record",
		CodeNotOwned:            "record, ready marker and branch do not prove custody made it",
		CodePathUnknown:         "the path could not be observed",
		CodeWorktreeMissing:     "the worktree path is absent",
		CodeSymlink:             "the worktree path is a symlink",
		CodeNotRegistered:       "git does not register the path",
		CodeAdminKeyMismatch:    "git registers the path under another admin key",
		CodeIdentityChanged:     "the directory's device+inode changed",
		CodeLocked:              "the worktree is locked",
		CodePrunable:            "git considers the registration prunable",
		CodeStatusFailed:        "git status could not be read",
		CodeUnmerged:            "unresolved conflicts in the index",
		CodeTrackedChanges:      "staged or unstaged tracked changes",
		CodeUntrackedFiles:      "untracked files",
		CodeIgnoredFiles:        "ignored files that removal would delete",
		CodeHeadUnknown:         "HEAD could not be read",
		CodeInUse:               "a process works inside the tree",
		CodeNoRemote:            "the repository has no remote to prove against",
		CodeRemoteUnavailable:   "a remote did not answer",
		CodeDetachedHead:        "detached HEAD on no advertised ref",
		CodeUnpushedCommits:     "HEAD is on no advertised ref",
		CodeProofFailed:         "looking for a proof failed",
		CodeStale:               "the tree changed since plan",
		CodeNotARepository:      "not inside a git repository",
		CodeBareRepository:      "a bare repository has no main checkout",
		CodeAmbiguousRepository: "common dir or main checkout not identified exactly",
		CodeNotInPlan:           "--only named an id the plan lacks",
		CodeUnknownRecord:       "the plan names a record the store lacks",
		CodeWrongState:          "the record is in the wrong state for this transition",
		CodeGuardFailed:         "a transition's guard did not hold",
		CodeRemovalFailed:       "removal did not end absent and unregistered",
		CodeCreateFailed:        "creation did not end exactly as intended",
		CodeResumeUnmatched:     "an interrupted intent fits no resume rule",
		CodeAmbiguousRelocation: "an interrupted relocation finds both its source and destination registered",
		CodeWrongRepository:     "the plan is for another repository",
		CodeUnsafeTarget:        "the target of a removal or an output file is unsafe",
		CodeUnknownRevision:     "the revision names no commit",
		CodeAssumeUnchanged:     "an index entry is marked assume-unchanged",
		CodeSkipWorktree:        "an index entry is marked skip-worktree",
		CodeStagedDiffers:       "staged content differs from both HEAD and the working copy",
		CodeNestedGit:           "a nested .git below the tree's root",
		CodePerWorktreeRef:      "a per-worktree ref (refs/worktree, bisect, rewritten)",
		CodeOperationInProgress: "a rebase, merge, cherry-pick, revert or bisect is in progress",
		CodeSubmoduleChanges:    "a submodule has changes",
		CodeSubmoduleUnpushed:   "a submodule's HEAD is on no advertised ref",
		CodeObservationFailed:   "part of the tree could not be observed",
		CodeObservationTimedOut: "a command observing the tree ran out of its deadline and was killed",
		CodeForeign:             "a worktree custody did not make",
		CodeGCDisabled:          "the resource has gc = false",
		CodeWorktreeLive:        "the resource's worktree, path or handle is still live",
		CodeUnexpandedToken:     "a frozen command still carries an @token@",
		CodeResourceFailed:      "a resource command failed",
		CodeSubmodules:          "the worktree holds submodule repositories",
		CodeUsage:               "the command line cannot be parsed",
		CodeConfigInvalid:       "custody.toml cannot be used",
		CodeStateCorrupt:        "the state file is corrupt or not a custody store",
		CodeSchemaNewer:         "the state file was written by a newer custody",
		CodeLockTimeout:         "another process held the state file past the lock timeout",
		CodeNotInitialized:      "custody has no state in this repository yet",
		CodePlanInvalid:         "the plan file is not a valid, unedited plan",
		CodeJournalBroken:       "an exported journal does not verify",
		CodeStateUnreadable:     "the state file exists but cannot be opened",
		CodeReadOnlyFileSystem:  "a command that writes runs where the repository's file system is mounted read-only",
		CodeNotWritable:         "a command that writes runs where this user may not write the repository's custody state",
		CodeMigrationFailed:     "upgrading an older state file failed; it was left as it was",
		CodeMoved:               "git moved the worktree away from the record's path",
		CodeNotInWorktree:       "the command runs outside every managed worktree",
		CodeConfigUntrusted:     "custody.toml declares commands and this exact content was not approved with custody trust",
		CodeRecoveryFailed:      "what would die with the tree cannot be kept",
		CodeUnknownAdminFile:    "the tree's admin entry holds a member custody does not know",
		CodeAdminLockFile:       "a git lock file in the tree's admin entry: git is writing its state",
		CodeExternalTree:        "an adopted tree outside the managed root needs --allow-external-retirement",
		CodeQuarantineChanged:   "the tree changed while quarantined; it was moved back",
		CodeUnsafeToken:         "a resource command's @token@ stands where its value would be read as code",
		CodeUntrackedContent:    "an entry on disk HEAD does not track, unseen by git status",
		CodeContentDiffers:      "a file's raw bytes or mode differ from HEAD though git status is clean",
		CodeContentUnreadable:   "an entry in the tree cannot be read to account for it",
		CodeAmbiguousReference:  "a tree reference names more than one tree",
		CodeSignatureInvalid:    "a journal head signature does not verify, or cannot be made",
		CodeStaleCacheTree:      "the index's cache tree does not match its entries, so git may not show what is staged",

		// Archives.
		CodeArchiveStale:          "the tree changed since its archive was made",
		CodeArchiveDigestMismatch: "an archive file differs from its recorded digest",
		CodeArchiveIncomplete:     "an archive lacks its manifest or a recorded file",
		CodeArchiveBundleInvalid:  "an archive's bundle lacks objects its commits need",
		CodeArchiveInvalid:        "an archive directory or manifest is not valid",
		CodeArchiveUnsupported:    "the tree holds an entry no archive can restore",
		CodeArchiveTreePresent:    "the archived tree still exists, so its archive is not pruned",
		CodeArchiveStatusUnknown:  "the archive does not record its tree's index and status, so its build output is not stripped",
		CodeArchiveNested:         "the archive holds nested repositories no remote is asked about",
		CodeArchiveUncommitted:    "the archive holds uncommitted state no remote holds",

		// Migrate.
		CodeDiscoveryIncomplete:   "a bounded discovery collection was cut short",
		CodeMigrateChanged:        "the candidate changed since its disposition was approved",
		CodeMigrateDigestMismatch: "the digest is not the candidate's newest audit",
		CodeMigrateNotCandidate:   "the id names no admitted migration candidate",
		CodeDispositionNotAllowed: "the candidate's audit does not permit that disposition",
		CodeLandFailed:            "pushing the candidate's HEAD for review failed",
		CodeMigrateNotApproved:    "no person has disposed of the candidate's audit",
		CodeRelocationFailed:      "git worktree move did not move the tree; it stayed where it was",
		CodeResourcesFrozen:       "the tree's resources froze its path into their commands, so it is not moved",

		// Generated files.
		CodeGeneratedStale: "a generated file is missing or differs from what this custody generates",

		// Integrations and input.
		CodeCodexEnvironmentInvalid: "the Codex environment.toml cannot be edited safely; nothing was written",
		CodeCodexEnvironmentStale:   "the Codex environment.toml lacks what custody integrate codex writes",
		CodeCodexScriptOwn:          "a script of the person's in the Codex environment.toml runs without custody's line; integrate codex --merge puts it in",
		CodeEmptyName:               "the worktree name has nothing an id can be made of",
		CodeBranchInvalid:           "new --branch names no valid branch name",
		CodeBranchExists:            "new --branch names a branch that exists already",
		CodeBranchMissing:           "new --checkout names no existing local branch",
		CodeBranchCheckedOut:        "new --checkout names a branch another worktree has checked out",
		CodeLeaseHeld:               "another session holds the worktree's live lease",
		CodeHookPayloadInvalid:      "a hook's stdin payload cannot be used",
		CodeClaudeSettingsInvalid:   ".claude/settings.json cannot be merged",
		CodeClaudeSettingsStale:     ".claude/settings.json lacks custody's hooks as integrate writes them",

		// The registry.
		CodeDuplicateAdminEntry: "another git admin entry names the tree's path too",
	}
	return m
}

// SortedCodes returns the keys of Codes in order.
func SortedCodes() []Code {
	var out []Code
	for c := range Codes() {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// refuse builds a refusal.
func refuse(code Code, path, retry, format string, args ...any) Refusal {
	return Refusal{Code: code, Path: path, Retry: retry, Message: fmt.Sprintf(format, args...)}
}

// listSome renders at most n names of list, then how many more. A name
// holding a control character (a newline) is shown quoted, so a refusal
// stays one line.
func listSome(list []string, n int) string {
	shown := make([]string, 0, min(n, len(list)))
	for _, p := range list[:min(n, len(list))] {
		if strings.IndexFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
			p = strconv.Quote(p)
		}
		shown = append(shown, p)
	}
	if len(list) <= n {
		return strings.Join(shown, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(shown, ", "), len(list)-n)
}
