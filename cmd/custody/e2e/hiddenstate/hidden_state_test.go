package hiddenstate

// Removal safety against what git status does not show, end to end: each
// hazard case asserts the refusal code plan gives and that plan and apply
// leave every byte, every ref and the registration of the kept tree as
// they were; each removable case asserts the proof and a verified removal.
// Every helper here is prefixed sf so it cannot collide with the other
// test files of this package.

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/cmd/custody/internal/output"
	"github.com/custody-sh/custody/fixtures"
)

// sfVerdictCodes lists the codes of show's verdict refusals.
func sfVerdictCodes(s output.ShowResult) []string {
	if s.Verdict == nil {
		return nil
	}
	return clitest.RefusalCodes(s.Verdict.Refusals)
}

// sfHazard is one kind of state that git status does not show (or that
// configuration could hide from it) and removal would destroy.
type sfHazard struct {
	name string
	// prep readies the tree before finish (may be nil); after it the tree
	// must be removable.
	prep func(t *testing.T, r *fixtures.Repo, path string)
	make func(t *testing.T, r *fixtures.Repo, path string)
	// codes must all be among the refusals; with exact they are all there is.
	codes []string
	exact bool
	// hidden are the codes show must list among the observation's hidden
	// entries, each with its path relative to the tree ("" = any path);
	// a non-empty path must also be the path of the refusal.
	hidden map[string]string
	// says must appear in the message of each codes[0] refusal (the exact
	// ref or operation).
	says string
}

func sfHazards() []sfHazard {
	conflictPrep := func(t *testing.T, r *fixtures.Repo, path string) {
		// The tree changes README and publishes that on a branch; main
		// changes README differently. Rebasing or merging the two conflicts.
		r.Commit(path, "README", "the tree's README\n")
		r.Push(path, "feature")
		r.Commit(r.Dir, "README", "main's README\n")
		r.Push(r.Dir, "main")
	}
	op := map[string]string{"operation-in-progress": ""}
	return []sfHazard{
		{name: "AssumeUnchanged", make: func(t *testing.T, r *fixtures.Repo, path string) {
			r.GitIn(path, "update-index", "--assume-unchanged", "README")
			r.WriteFile(path, "README", "an edit git status does not show\n")
		}, codes: []string{"assume-unchanged"}, exact: true, hidden: map[string]string{"assume-unchanged": "README"}},
		{name: "SkipWorktree", make: func(t *testing.T, r *fixtures.Repo, path string) {
			r.GitIn(path, "update-index", "--skip-worktree", "README")
			r.WriteFile(path, "README", "an edit git status does not show\n")
		}, codes: []string{"skip-worktree"}, exact: true, hidden: map[string]string{"skip-worktree": "README"}},
		{name: "StagedDiffers", make: func(t *testing.T, r *fixtures.Repo, path string) {
			r.WriteFile(path, "README", "staged version, nowhere else\n")
			r.GitIn(path, "add", "README")
			r.WriteFile(path, "README", "working copy version\n")
		}, codes: []string{"staged-differs", "tracked-changes"}, hidden: map[string]string{"staged-differs": "README"}},
		{name: "NestedGitDir", prep: func(t *testing.T, r *fixtures.Repo, path string) {
			r.Commit(path, "lib/tracked.txt", "tracked\n")
			r.Push(path, "feature")
		}, make: func(t *testing.T, r *fixtures.Repo, path string) {
			r.NestedRepo(path, "lib/inner")
		}, codes: []string{"nested-git"}, hidden: map[string]string{"nested-git": "lib/inner/.git"}},
		{name: "NestedGitFile", prep: func(t *testing.T, r *fixtures.Repo, path string) {
			r.Commit(path, "vendor/pkg/tracked.txt", "tracked\n")
			r.Push(path, "feature")
		}, make: func(t *testing.T, r *fixtures.Repo, path string) {
			r.GitFile(path, "vendor/pkg/deep", filepath.Join(r.Root, "separate-git-dir"))
		}, codes: []string{"nested-git"}, hidden: map[string]string{"nested-git": "vendor/pkg/deep/.git"}},
		{name: "RefsWorktree", make: func(t *testing.T, r *fixtures.Repo, path string) {
			r.GitIn(path, "update-ref", "refs/worktree/keep", "HEAD~0")
		}, codes: []string{"per-worktree-ref"}, exact: true, hidden: map[string]string{"per-worktree-ref": ""}, says: "refs/worktree/keep"},
		{name: "RefsBisect", make: func(t *testing.T, r *fixtures.Repo, path string) {
			r.GitIn(path, "update-ref", "refs/bisect/x", "HEAD")
		}, codes: []string{"per-worktree-ref"}, exact: true, hidden: map[string]string{"per-worktree-ref": ""}, says: "refs/bisect/x"},
		{name: "RefsRewritten", make: func(t *testing.T, r *fixtures.Repo, path string) {
			r.GitIn(path, "update-ref", "refs/rewritten/onto", "HEAD")
		}, codes: []string{"per-worktree-ref"}, exact: true, hidden: map[string]string{"per-worktree-ref": ""}, says: "refs/rewritten/onto"},
		{name: "RebaseStopped", prep: conflictPrep, make: func(t *testing.T, r *fixtures.Repo, path string) {
			if out, err := r.TryGitIn(path, "rebase", "main"); err == nil {
				t.Fatalf("rebase did not stop on a conflict:\n%s", out)
			}
		}, codes: []string{"operation-in-progress", "unmerged-paths"}, hidden: op, says: "rebase"},
		{name: "RebaseStoppedClean", prep: func(t *testing.T, r *fixtures.Repo, path string) {
			r.Commit(path, "work.txt", "published\n")
			r.Push(path, "feature")
		}, make: func(t *testing.T, r *fixtures.Repo, path string) {
			// An interactive rebase stopped by a failing exec: the tree is
			// clean and HEAD is the published commit; only the rebase state
			// says work is in flight.
			if out, err := r.TryGitIn(path, "rebase", "--exec", "false", "HEAD~1"); err == nil {
				t.Fatalf("rebase did not stop:\n%s", out)
			}
		}, codes: []string{"operation-in-progress"}, exact: true, hidden: op, says: "rebase"},
		{name: "MergeConflict", prep: conflictPrep, make: func(t *testing.T, r *fixtures.Repo, path string) {
			if out, err := r.TryGitIn(path, "merge", "--no-edit", "main"); err == nil {
				t.Fatalf("merge did not conflict:\n%s", out)
			}
		}, codes: []string{"operation-in-progress", "unmerged-paths"}, hidden: op, says: "merge"},
		{name: "CherryPickConflict", prep: conflictPrep, make: func(t *testing.T, r *fixtures.Repo, path string) {
			if out, err := r.TryGitIn(path, "cherry-pick", "main"); err == nil {
				t.Fatalf("cherry-pick did not conflict:\n%s", out)
			}
		}, codes: []string{"operation-in-progress", "unmerged-paths"}, hidden: op, says: "cherry-pick"},
		{name: "CherryPickSequencePaused", prep: func(t *testing.T, r *fixtures.Repo, path string) {
			r.Commit(path, "README", "the tree's README\n")
			r.Push(path, "feature")
			r.Commit(r.Dir, "README", "main's README\n")
			r.Commit(r.Dir, "other.txt", "more of main\n")
			r.Push(r.Dir, "main")
		}, make: func(t *testing.T, r *fixtures.Repo, path string) {
			// Pick two commits; the first conflicts, is resolved and
			// committed. CHERRY_PICK_HEAD is gone, but the sequence is not
			// finished: git status says "Cherry-pick currently in progress".
			if out, err := r.TryGitIn(path, "cherry-pick", "main~1", "main"); err == nil {
				t.Fatalf("cherry-pick did not conflict:\n%s", out)
			}
			r.WriteFile(path, "README", "resolved\n")
			r.GitIn(path, "add", "README")
			r.GitIn(path, "-c", "core.editor=true", "commit", "-q", "--no-edit")
			r.Push(path, "feature2")
			if out := r.GitIn(path, "status"); !strings.Contains(out, "Cherry-pick currently in progress") {
				t.Fatalf("fixture: git does not say a cherry-pick is in progress:\n%s", out)
			}
		}, codes: []string{"operation-in-progress"}, exact: true, hidden: op, says: "cherry-pick"},
		{name: "RevertConflict", prep: func(t *testing.T, r *fixtures.Repo, path string) {
			r.Commit(path, "README", "one\n")
			r.Commit(path, "README", "two\n")
			r.Push(path, "feature")
		}, make: func(t *testing.T, r *fixtures.Repo, path string) {
			if out, err := r.TryGitIn(path, "revert", "--no-edit", "HEAD~1"); err == nil {
				t.Fatalf("revert did not conflict:\n%s", out)
			}
		}, codes: []string{"operation-in-progress", "unmerged-paths"}, hidden: op, says: "revert"},
		{name: "Bisect", make: func(t *testing.T, r *fixtures.Repo, path string) {
			r.GitIn(path, "bisect", "start")
		}, codes: []string{"operation-in-progress"}, exact: true, hidden: op, says: "bisect"},
		{name: "UntrackedHiddenByConfig", make: func(t *testing.T, r *fixtures.Repo, path string) {
			r.Git("config", "status.showUntrackedFiles", "no")
			r.WriteFile(path, "notes/mine.txt", "not shown by git status here\n")
			if out := r.GitIn(path, "status", "--porcelain"); out != "" {
				t.Fatalf("the configuration did not hide the file from git status: %q", out)
			}
		}, codes: []string{"untracked-files"}, exact: true},
	}
}

// TestSafetyHiddenState makes each hazard in a published, finished tree:
// plan keeps it with the hazard's code naming the exact path or ref, show
// lists the hidden entry, and neither plan nor apply changes a byte or ref.
// A plan made before the hazard appeared (when the tree was removable) is
// refused at apply and touches nothing either.
func TestSafetyHiddenState(t *testing.T) {
	t.Parallel()
	for _, h := range sfHazards() {
		t.Run(h.name, func(t *testing.T) {
			t.Parallel()
			r := clitest.InitRepo(t)
			id, path := clitest.NewTree(t, r, strings.ToLower(h.name))
			if h.prep != nil {
				h.prep(t, r, path)
			}
			clitest.Finish(t, r, id)
			early, earlyFile := clitest.PlanNow(t, r, 0)
			if it := clitest.PlanItem(t, early, id); it.Action != "remove" {
				t.Fatalf("before the hazard %s is not removable: %+v", id, it.Refusals)
			}
			h.make(t, r, path)

			it := clitest.KeptThrough(t, r, id, path, h.codes...)
			if h.exact && !slices.Equal(clitest.RefusalCodes(it.Refusals), h.codes) {
				t.Errorf("refusals %v, want exactly %v", clitest.RefusalCodes(it.Refusals), h.codes)
			}
			for _, rf := range it.Refusals {
				if rf.Path == "" || rf.Message == "" || rf.Retry == "" {
					t.Errorf("refusal %+v lacks its path, message or retry", rf)
				}
				if h.says != "" && string(rf.Code) == h.codes[0] && !strings.Contains(rf.Message, h.says) {
					t.Errorf("refusal %+v does not name %s", rf, h.says)
				}
				if rel := h.hidden[string(rf.Code)]; rel != "" && rf.Path != filepath.Join(path, rel) {
					t.Errorf("refusal %+v does not name the exact path %s", rf, rel)
				}
			}

			// show names what the verdict rests on.
			s := clitest.ShowRecord(t, r, id)
			if s.Verdict == nil || s.Verdict.Action != "keep" || s.Observation == nil {
				t.Fatalf("show %s: verdict %+v", id, s.Verdict)
			}
			if got := sfVerdictCodes(s); !slices.Equal(got, clitest.RefusalCodes(it.Refusals)) {
				t.Errorf("show's refusals %v differ from plan's %v", got, clitest.RefusalCodes(it.Refusals))
			}
			for code, rel := range h.hidden {
				found := false
				for _, hd := range s.Observation.Hidden {
					if string(hd.Code) == code && (rel == "" || hd.Path == filepath.Join(path, rel)) && hd.Detail != "" {
						found = true
					}
				}
				if !found {
					t.Errorf("show lists no hidden %s at %q: %+v", code, rel, s.Observation.Hidden)
				}
			}

			// The plan made before the hazard must not remove the tree now.
			before := clitest.SnapKeptState(t, r, id, path)
			a := clitest.Apply(t, r, earlyFile, 3)
			if o := clitest.ApplyOutcome(t, a, id); o.Outcome == "removed" || o.Refusal == nil {
				t.Errorf("the plan made before the hazard removed %s: %+v", id, o)
			}
			before.Check(t, r, id, "after applying the earlier plan")
		})
	}
}

// TestSafetyCompletedOperationLeftovers: a finished merge and a finished
// rebase leave ORIG_HEAD in the admin entry; once the result is pushed,
// the tree is removable.
func TestSafetyCompletedOperationLeftovers(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.NewTree(t, r, "merged")
	r.Commit(path, "tree.txt", "the tree's work\n")
	r.Commit(r.Dir, "main.txt", "main's work\n")
	r.Push(r.Dir, "main")
	r.GitIn(path, "merge", "-q", "--no-edit", "main")
	r.Commit(r.Dir, "main2.txt", "more of main's work\n")
	r.Push(r.Dir, "main")
	r.GitIn(path, "rebase", "-q", "main")
	r.Push(path, "feature")
	if _, err := os.Lstat(filepath.Join(r.Dir, ".git", "worktrees", id, "ORIG_HEAD")); err != nil {
		t.Fatalf("the completed operations left no ORIG_HEAD: %v", err)
	}
	clitest.Finish(t, r, id)
	clitest.RemoveNow(t, r, id, "ancestry")
	clitest.AssertRemoved(t, r, id, path, true)
}
