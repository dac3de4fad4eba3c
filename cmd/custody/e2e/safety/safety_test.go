package safety

// Removal safety, end to end: one case per way worktree cleanup tools lose
// work. Each kept case asserts the refusal code plan gives and that plan
// and apply leave every byte, every ref and the registration of the kept
// tree as they were; each removable case asserts the proof and a verified
// removal. Every helper here is prefixed sf so it cannot collide
// with the other test files of this package.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/cmd/custody/internal/output"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
)

// sfVerdictCodes lists the codes of show's verdict refusals.
func sfVerdictCodes(s output.ShowResult) []string {
	if s.Verdict == nil {
		return nil
	}
	return clitest.RefusalCodes(s.Verdict.Refusals)
}

// sfKept is everything about a tree that must not change while it is kept:
// its bytes, its git admin entry (index, HEAD, per-worktree refs, operation
// state), every ref of the repository and every ref as the tree sees it,
// its registration and its record's state.
type sfKept struct {
	path, admin      string
	tree, adminSnap  fixtures.Snapshot
	refs, refsInTree string
	head, state      string
}

func sfSnapKept(t testing.TB, r *fixtures.Repo, id, path string) sfKept {
	t.Helper()
	admin := filepath.Join(r.Dir, ".git", "worktrees", filepath.Base(path))
	k := sfKept{path: path, admin: admin, tree: r.Snap(path), adminSnap: r.Snap(admin), refs: r.Refs(),
		refsInTree: r.GitIn(path, "for-each-ref", "--format=%(objectname) %(refname)"),
		head:       r.GitIn(path, "rev-parse", "HEAD")}
	if id != "" {
		k.state = clitest.RecordState(t, r, id)
	}
	return k
}

// without drops the line naming ref from both ref listings (a ref the
// test expects to change, such as another tree's deleted branch).
func (k sfKept) without(ref string) sfKept {
	drop := func(s string) string {
		return strings.Join(slices.DeleteFunc(strings.Split(s, "\n"), func(l string) bool {
			return strings.HasSuffix(l, " "+ref)
		}), "\n")
	}
	k.refs, k.refsInTree = drop(k.refs), drop(k.refsInTree)
	return k
}

// check fails unless nothing of the kept tree changed since k was taken.
func (k sfKept) check(t testing.TB, r *fixtures.Repo, id, when string) {
	t.Helper()
	if _, err := os.Lstat(k.path); err != nil {
		t.Fatalf("%s: kept tree %s is gone: %v", when, k.path, err)
	}
	if d := k.tree.Diff(r.Snap(k.path)); d != "" {
		t.Errorf("%s: bytes of kept tree %s changed:\n%s", when, k.path, d)
	}
	if d := k.adminSnap.Diff(r.Snap(k.admin)); d != "" {
		t.Errorf("%s: git admin entry %s of the kept tree changed:\n%s", when, k.admin, d)
	}
	if got := r.Refs(); got != k.refs {
		t.Errorf("%s: refs changed:\nbefore:\n%s\nafter:\n%s", when, k.refs, got)
	}
	if got := r.GitIn(k.path, "for-each-ref", "--format=%(objectname) %(refname)"); got != k.refsInTree {
		t.Errorf("%s: refs seen from the kept tree changed:\nbefore:\n%s\nafter:\n%s", when, k.refsInTree, got)
	}
	if got := r.GitIn(k.path, "rev-parse", "HEAD"); got != k.head {
		t.Errorf("%s: HEAD of the kept tree moved from %s to %s", when, k.head, got)
	}
	if !slices.Contains(clitest.Registered(t, r), k.path) {
		t.Errorf("%s: kept tree %s is no longer registered", when, k.path)
	}
	if id != "" {
		if got := clitest.RecordState(t, r, id); got != k.state {
			t.Errorf("%s: record %s is %s, was %s", when, id, got, k.state)
		}
	}
}

// sfKeptThrough plans with the tree kept (every code of want must be among
// the item's refusals), applies that plan, and checks nothing of the tree
// changed through plan and apply. It returns the kept item.
func sfKeptThrough(t *testing.T, r *fixtures.Repo, id, path string, want ...string) machine.PlanItem {
	t.Helper()
	before := sfSnapKept(t, r, id, path)
	plan, file := clitest.PlanNow(t, r, 0)
	it := clitest.PlanItem(t, plan, id)
	if it.Action != "keep" {
		t.Fatalf("%s: action %s, want keep (refusals %v, proof %+v)", id, it.Action, clitest.RefusalCodes(it.Refusals), it.Proof)
	}
	for _, c := range want {
		if !clitest.HasCode(it.Refusals, c) {
			t.Errorf("%s: refusals %v lack %s:\n%+v", id, clitest.RefusalCodes(it.Refusals), c, it.Refusals)
		}
	}
	if it.Refusal == nil || len(it.Refusals) == 0 || it.Refusal.Code != it.Refusals[0].Code {
		t.Errorf("%s: primary refusal %+v is not the first of %v", id, it.Refusal, clitest.RefusalCodes(it.Refusals))
	}
	before.check(t, r, id, "after plan")
	a := clitest.Apply(t, r, file, 0)
	for _, o := range a.Items {
		if o.ID == id {
			t.Errorf("apply acted on kept %s: %+v", id, o)
		}
	}
	before.check(t, r, id, "after apply")
	return it
}

// sfUnique returns the commits the tree's HEAD adds over base, sorted,
// without fetching anything (so plan must fetch what origin advertises).
func sfUnique(t testing.TB, r *fixtures.Repo, path, base string) []string {
	t.Helper()
	out := strings.Fields(r.GitIn(path, "rev-list", "HEAD", "--not", base))
	slices.Sort(out)
	return out
}

// sfNoLocalWrites runs f and fails if it changed any ref of the repository
// or wrote FETCH_HEAD: advertised commits are fetched into no local ref.
func sfNoLocalWrites(t testing.TB, r *fixtures.Repo, f func()) {
	t.Helper()
	refs := r.Refs()
	fh := filepath.Join(r.Dir, ".git", "FETCH_HEAD")
	before, _ := os.ReadFile(fh)
	f()
	if got := r.Refs(); got != refs {
		t.Errorf("refs changed:\nbefore:\n%s\nafter:\n%s", refs, got)
	}
	if after, _ := os.ReadFile(fh); string(after) != string(before) {
		t.Errorf("FETCH_HEAD was written: %q", after)
	}
}

func sfSorted(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}

// --- hidden state -----------------------------------------------------------

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

			it := sfKeptThrough(t, r, id, path, h.codes...)
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
			before := sfSnapKept(t, r, id, path)
			a := clitest.Apply(t, r, earlyFile, 3)
			if o := clitest.ApplyOutcome(t, a, id); o.Outcome == "removed" || o.Refusal == nil {
				t.Errorf("the plan made before the hazard removed %s: %+v", id, o)
			}
			before.check(t, r, id, "after applying the earlier plan")
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

// --- submodules and embedded repositories --------------------------------------

// sfSubmoduleTree makes a tree with a submodule lib (with its own bare
// remote), the superproject's commit published on origin, and finishes it.
func sfSubmoduleTree(t *testing.T, r *fixtures.Repo) (id, path string) {
	t.Helper()
	up := r.NewUpstream("lib")
	id, path = clitest.NewTree(t, r, "withsub")
	r.AddSubmodule(path, up, "lib")
	r.Push(path, "feature")
	clitest.Finish(t, r, id)
	return id, path
}

func TestSafetySubmoduleChanges(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := sfSubmoduleTree(t, r)
	r.WriteFile(path, "lib/lib.txt", "changed inside the submodule\n")
	sfKeptThrough(t, r, id, path, "submodule-changes")
}

func TestSafetySubmoduleUntracked(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := sfSubmoduleTree(t, r)
	r.WriteFile(path, "lib/scratch.txt", "untracked inside the submodule\n")
	sfKeptThrough(t, r, id, path, "submodule-changes")
}

// TestSafetySubmoduleUnpushed: the submodule has a commit its remote lacks;
// the superproject records it and is itself published, so the submodule's
// commit is the only hazard.
func TestSafetySubmoduleUnpushed(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := sfSubmoduleTree(t, r)
	clitest.MustCustody(t, r, 0, "reopen", id)
	sub := filepath.Join(path, "lib")
	r.Commit(sub, "lib.txt", "a library change only this clone has\n")
	r.GitIn(path, "add", "lib")
	r.GitIn(path, "commit", "-q", "-m", "bump lib")
	r.Push(path, "feature")
	clitest.Finish(t, r, id)
	if out := r.GitIn(path, "status", "--porcelain", "--ignored"); out != "" {
		t.Fatalf("superproject is not clean: %q", out)
	}
	it := sfKeptThrough(t, r, id, path, "submodule-unpushed")
	// "submodules" always accompanies an initialized submodule: git removes
	// such a tree only by force.
	if got := clitest.RefusalCodes(it.Refusals); !slices.Equal(got, []string{"submodule-unpushed", "submodules"}) {
		t.Errorf("refusals %v, want submodule-unpushed and submodules", got)
	}
	for _, rf := range it.Refusals {
		if rf.Code == "submodule-unpushed" && rf.Path != sub {
			t.Errorf("refusal path %s, want %s", rf.Path, sub)
		}
	}
}

// TestSafetySubmoduleDeinitUnpushed: the submodule has a commit its remote
// lacks, recorded by a published superproject commit, and was then
// deinitialized: its working tree is empty, but its git directory (the only
// copy of that commit) lives in the worktree's admin entry
// (<common>/worktrees/<id>/modules/lib), which removal deletes. The tree
// must be kept and the module directory must survive.
func TestSafetySubmoduleDeinitUnpushed(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := sfSubmoduleTree(t, r)
	clitest.MustCustody(t, r, 0, "reopen", id)
	sub := filepath.Join(path, "lib")
	only := r.Commit(sub, "lib.txt", "a library change only this clone has\n")
	r.GitIn(path, "add", "lib")
	r.GitIn(path, "commit", "-q", "-m", "bump lib")
	r.Push(path, "feature")
	r.GitIn(path, "submodule", "deinit", "-q", "-f", "lib")
	modules := filepath.Join(r.Dir, ".git", "worktrees", id, "modules", "lib")
	if _, err := r.TryGitIn(modules, "cat-file", "-e", only+"^{commit}"); err != nil {
		t.Fatalf("fixture: the module directory %s does not hold %s: %v", modules, only, err)
	}
	clitest.Finish(t, r, id)
	mods := r.Snap(modules)
	plan, file := clitest.PlanAny(t, r)
	it := clitest.PlanItem(t, plan, id)
	if it.Action != "keep" {
		t.Errorf("plan removes %s although its submodule's git dir %s holds %s, which no remote has (proof %+v)", id, modules, only, it.Proof)
		res := clitest.RunBin(t, clitest.Bin(), r, r.Dir, nil, "apply", file)
		t.Logf("apply: %s", res)
	}
	if _, err := os.Lstat(modules); err != nil {
		t.Fatalf("the submodule's git dir is gone: %v; commit %s is lost", err, only)
	}
	if d := mods.Diff(r.Snap(modules)); d != "" {
		t.Errorf("module directory changed:\n%s", d)
	}
}

// TestSafetySubmoduleCleanAndPushed: nothing is at risk, but git refuses to
// remove a worktree holding a submodule without --force, which custody
// never uses. The tree must stay whole, no removal may be claimed, and the
// record must not be left where every later command retries a removal git
// will always refuse.
func TestSafetySubmoduleCleanAndPushed(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := sfSubmoduleTree(t, r)
	before := r.Snap(path)
	plan, file := clitest.PlanAny(t, r)
	it := clitest.PlanItem(t, plan, id)
	if it.Action != "remove" {
		return // kept with a reason: nothing more to check
	}
	res := clitest.RunBin(t, clitest.Bin(), r, r.Dir, nil, "apply", file, "--json")
	o := clitest.ApplyOutcome(t, clitest.DecodeResult[steps.ApplyResult](t, res, "apply"), id)
	if _, err := os.Lstat(path); err == nil {
		if d := before.Diff(r.Snap(path)); d != "" {
			t.Errorf("tree changed by a failed removal:\n%s", d)
		}
		if o.Outcome == "removed" {
			t.Errorf("apply claims %s removed but %s exists", id, path)
		}
	}
	if st := clitest.RecordState(t, r, id); st == "removing" {
		t.Errorf("plan promised to remove %s, git refused (apply: %s %+v), and the record is left removing: every mutating command now retries a removal git always refuses", id, o.Outcome, o.Refusal)
	}
}

// TestSafetyEmbeddedRepository: a nested repository committed as a gitlink
// without .gitmodules (what `git add` of a nested repository does). Its
// commit is on no remote at all, so the tree is kept even though the
// superproject's commit is published.
func TestSafetyEmbeddedRepository(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.NewTree(t, r, "embedded")
	r.NestedRepo(path, "inner")
	r.GitIn(path, "-c", "advice.addEmbeddedRepo=false", "add", "inner")
	r.GitIn(path, "commit", "-q", "-m", "embed inner")
	r.Push(path, "feature")
	clitest.Finish(t, r, id)
	it := sfKeptThrough(t, r, id, path)
	if !clitest.HasCode(it.Refusals, "submodule-unpushed") && !clitest.HasCode(it.Refusals, "nested-git") {
		t.Errorf("refusals %v name neither submodule-unpushed nor nested-git", clitest.RefusalCodes(it.Refusals))
	}
}

// --- in use -------------------------------------------------------------------

// TestSafetyInUseCwd: processes whose cwd lies inside the tree (a shell and
// the sleep it started, in a subdirectory) keep it until they exit; then a
// new plan removes it.
func TestSafetyInUseCwd(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.NewTree(t, r, "busy")
	r.Commit(path, "deep/dir/file.txt", "tracked\n")
	r.Push(path, "main")
	clitest.Finish(t, r, id)
	h := r.Hold(filepath.Join(path, "deep", "dir"), "sh", "-c", "sleep 60 & wait")
	kids := h.Children(1)
	if len(kids) == 0 {
		t.Fatal("the shell started no sleep")
	}
	it := sfKeptThrough(t, r, id, path, "in-use")
	for _, rf := range it.Refusals {
		if rf.Code != "in-use" || rf.Path != path {
			t.Errorf("refusal %+v, want only in-use of %s", rf, path)
		}
	}
	s := clitest.ShowRecord(t, r, id)
	found := false
	for _, p := range s.Observation.InUse {
		if p.PID == kids[0] && p.Via == "cwd" && p.Command == "sleep" {
			found = true
		}
	}
	if !found {
		t.Errorf("show lists no sleep %d via cwd: %+v", kids[0], s.Observation.InUse)
	}
	h.Stop()
	clitest.RemoveNow(t, r, id, "ancestry")
	clitest.AssertRemoved(t, r, id, path, true)
}

// TestSafetyInUseOpenFile: a process elsewhere holding a file of the tree
// open keeps it.
func TestSafetyInUseOpenFile(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.Removable(t, r, "held")
	h := r.Hold(r.Root, "sh", "-c", `exec 3<"$1"; sleep 60 & wait`, "sh", filepath.Join(path, "held.txt"))
	kids := h.Children(1)
	if len(kids) == 0 {
		t.Fatal("the shell started no sleep")
	}
	sfKeptThrough(t, r, id, path, "in-use")
	s := clitest.ShowRecord(t, r, id)
	found := false
	for _, p := range s.Observation.InUse {
		if p.PID == kids[0] && strings.HasPrefix(p.Via, "open file") {
			found = true
		}
	}
	if !found {
		t.Errorf("show lists no sleep %d holding an open file: %+v", kids[0], s.Observation.InUse)
	}
	h.Stop()
	clitest.RemoveNow(t, r, id, "ancestry")
	clitest.AssertRemoved(t, r, id, path, true)
}

// TestSafetyInUseExecutable: a process elsewhere running a program that
// lives in the tree keeps it.
func TestSafetyInUseExecutable(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep on PATH")
	}
	b, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	id, path := clitest.NewTree(t, r, "tool")
	prog := filepath.Join(path, "bin", "napper")
	if err := os.MkdirAll(filepath.Dir(prog), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(prog, b, 0o755); err != nil {
		t.Fatal(err)
	}
	r.CommitAll(path, "a tool")
	r.Push(path, "main")
	clitest.Finish(t, r, id)
	h := r.Hold(r.Root, "sh", "-c", `"$1" 60 & wait`, "sh", prog)
	kids := h.Children(1)
	if len(kids) == 0 {
		t.Fatal("the shell started nothing")
	}
	it := sfKeptThrough(t, r, id, path, "in-use")
	if got := clitest.RefusalCodes(it.Refusals); !slices.Equal(got, []string{"in-use"}) {
		t.Errorf("refusals %v, want only in-use", got)
	}
	s := clitest.ShowRecord(t, r, id)
	if len(s.Observation.InUse) != 1 || s.Observation.InUse[0].PID != kids[0] || s.Observation.InUse[0].Via != "exe" {
		t.Errorf("show: in use %+v, want %d via exe", s.Observation.InUse, kids[0])
	}
}

// TestSafetyInUseAfterPlan: a process that enters the tree between plan and
// apply makes apply refuse (in-use is checked at the final observation; it
// is not part of the fingerprint).
func TestSafetyInUseAfterPlan(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.Removable(t, r, "late")
	plan, file := clitest.PlanNow(t, r, 0)
	if it := clitest.PlanItem(t, plan, id); it.Action != "remove" {
		t.Fatalf("not removable: %+v", it.Refusals)
	}
	h := r.Hold(path, "sh", "-c", "sleep 60 & wait")
	h.Children(1)
	before := sfSnapKept(t, r, id, path)
	a := clitest.Apply(t, r, file, 3)
	o := clitest.ApplyOutcome(t, a, id)
	if o.Outcome == "removed" || o.Refusal == nil || o.Refusal.Code != "in-use" {
		t.Errorf("apply with a process inside: %+v, want refused in-use", o)
	}
	before.check(t, r, id, "after apply")
}

// TestSafetyInUseDirectChild: a sleep whose cwd is inside the tree, started
// directly by this test process (named custody.test), keeps the tree:
// custody must not skip a process because of its parent's name.
func TestSafetyInUseDirectChild(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.Removable(t, r, "direct")
	h := r.Hold(path, "sleep", "60")
	before := sfSnapKept(t, r, id, path)
	plan, _ := clitest.PlanAny(t, r)
	it := clitest.PlanItem(t, plan, id)
	if it.Action != "keep" || !clitest.HasCode(it.Refusals, "in-use") {
		t.Errorf("sleep %d (parent %q) has its cwd in %s, yet plan says %s %v", h.Cmd.Process.Pid, sfComm(os.Getpid()), path, it.Action, clitest.RefusalCodes(it.Refusals))
	}
	before.check(t, r, id, "after plan")
}

// sfComm returns a process's command name.
func sfComm(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	return strings.TrimSpace(string(b))
}

// --- proofs -------------------------------------------------------------------

// TestSafetySquashMerged: the tree's three commits were squashed into one
// commit on an advanced main by another clone; the branch was never pushed.
func TestSafetySquashMerged(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.NewTree(t, r, "squashme")
	base := r.Head(path)
	r.Commit(path, "a.txt", "one\ntwo\nthree\n")
	r.Commit(path, "b.txt", "bee\n")
	r.Commit(path, "README", "fixture, edited by the tree\n")
	clitest.Finish(t, r, id)
	r.AdvanceMain("advancer", "other.txt", "someone else's work\n")
	squash := r.SquashMergeToMain("squasher", "custody/"+id, nil)
	unique := sfUnique(t, r, path, base)
	if len(unique) != 3 {
		t.Fatalf("unique commits %v, want 3", unique)
	}
	if _, err := r.TryGitIn(r.Dir, "cat-file", "-e", squash+"^{commit}"); err == nil {
		t.Fatalf("fixture: the squash commit is already local; plan would not have to fetch it")
	}
	var plan machine.Plan
	var file string
	sfNoLocalWrites(t, r, func() { plan, file = clitest.PlanNow(t, r, 0) })
	it := clitest.PlanItem(t, plan, id)
	if it.Action != "remove" || it.Proof == nil || it.Proof.Kind != "squash-merged" {
		t.Fatalf("%s: action %s proof %+v, want remove with a squash-merged proof (refusals %+v)", id, it.Action, it.Proof, it.Refusals)
	}
	if o := clitest.ApplyOutcome(t, clitest.Apply(t, r, file, 0), id); o.Outcome != "removed" {
		t.Fatalf("apply %s: %+v", id, o)
	}
	p := it.Proof
	if p.Ref != "refs/heads/main" || p.Remote != "origin" || p.Tip != squash || p.Base != base || p.Head != it.Head {
		t.Errorf("proof %+v, want tip %s base %s on origin refs/heads/main", p, squash, base)
	}
	if got := sfSorted(p.Commits); !slices.Equal(got, unique) {
		t.Errorf("proof covers %v, want the tree's unique commits %v", got, unique)
	}
	clitest.AssertRemoved(t, r, id, path, true)
}

// TestSafetySquashLossy: a squash of several commits that dropped or
// altered one line, or left a file out, is not proof; the tree is kept.
func TestSafetySquashLossy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		edit func(r *fixtures.Repo, dir string)
	}{
		{"DroppedLine", func(r *fixtures.Repo, dir string) { r.WriteFile(dir, "a.txt", "one\nthree\n") }},
		{"AlteredLine", func(r *fixtures.Repo, dir string) { r.WriteFile(dir, "a.txt", "one\nTWO\nthree\n") }},
		{"FileLeftOut", func(r *fixtures.Repo, dir string) {
			r.GitIn(dir, "rm", "-q", "--cached", "b.txt")
			os.Remove(filepath.Join(dir, "b.txt"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := clitest.InitRepo(t)
			id, path := clitest.NewTree(t, r, "lossy")
			r.Commit(path, "a.txt", "one\ntwo\nthree\n")
			r.Commit(path, "b.txt", "bee\n")
			clitest.Finish(t, r, id)
			r.SquashMergeToMain("squasher", "custody/"+id, func(dir string) { tc.edit(r, dir) })
			it := sfKeptThrough(t, r, id, path, "unpushed-commits")
			if it.Proof != nil {
				t.Errorf("a lossy squash proved %s: %+v", id, it.Proof)
			}
		})
	}
}

// TestSafetySquashMergeDriver: a merge driver configured in the repository
// (here one that always keeps the tip's side, for every path) makes the
// three-way merge of HEAD into origin's main yield exactly main's tree
// although the tree's change to a.txt is on no remote. That is not proof.
func TestSafetySquashMergeDriver(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	r.Commit(r.Dir, "a.txt", "shared start\n")
	r.Push(r.Dir, "main")
	id, path := clitest.NewTree(t, r, "driven")
	r.Commit(path, "a.txt", "the tree's version, only here\n")
	clitest.Finish(t, r, id)
	r.AdvanceMain("advancer", "a.txt", "main's version\n")
	r.Git("config", "merge.keeptip.driver", "true")
	r.WriteFile(filepath.Join(r.Dir, ".git", "info"), "attributes", "* merge=keeptip\n")
	it := sfKeptThrough(t, r, id, path, "unpushed-commits")
	if it.Proof != nil {
		t.Errorf("a merge driver faked a proof of %s: %+v", id, it.Proof)
	}
}

// TestSafetySquashCancellingCommits: a branch that added a file and then
// reverted it was never pushed or merged anywhere; the file's content
// exists only in the tree's two unique commits. HEAD's tree equals the
// merge base's, so a three-way merge of HEAD into any advertised tip
// trivially yields the tip's tree, but nothing was published: no
// squash-merged proof (DESIGN §1: removal needs a proof that every commit
// and every byte is recoverable elsewhere). The tree is kept as
// unpushed-commits.
func TestSafetySquashCancellingCommits(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.NewTree(t, r, "undone")
	r.Commit(path, "feature.txt", "work that exists nowhere else\n")
	r.GitIn(path, "revert", "--no-edit", "HEAD")
	clitest.Finish(t, r, id)
	it := sfKeptThrough(t, r, id, path, "unpushed-commits")
	if it.Proof != nil {
		t.Errorf("proof %+v for commits no remote has", it.Proof)
	}
}

// TestSafetySquashMergedIntoDefaultBranch: origin's default branch (its
// HEAD) is "develop", not main, master or trunk. A tree squash-merged into
// develop is removable with a squash-merged proof while develop is
// origin's only branch, and still when origin also carries 20 other
// people's branches whose names sort before "develop": the remote's HEAD
// branch counts as a default branch and is among the tips tried first.
func TestSafetySquashMergedIntoDefaultBranch(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	r.Git("push", "-q", "origin", "main:refs/heads/develop")
	r.GitIn(r.Remote, "symbolic-ref", "HEAD", "refs/heads/develop")
	r.Git("push", "-q", "origin", "--delete", "main")

	id, path := clitest.NewTree(t, r, "feat")
	r.Commit(path, "a.txt", "one\n")
	r.Commit(path, "b.txt", "two\n")
	clitest.Finish(t, r, id)

	clone := filepath.Join(r.Root, "squasher")
	r.GitIn(r.Root, "clone", "-q", "-b", "develop", r.Remote, clone)
	base := r.Head(clone)
	r.GitIn(clone, "fetch", "-q", r.Dir, "refs/heads/custody/"+id)
	r.GitIn(clone, "merge", "-q", "--squash", "FETCH_HEAD")
	r.GitIn(clone, "commit", "-q", "-m", "squash of "+id)
	r.GitIn(clone, "push", "-q", "origin", "HEAD:refs/heads/develop")

	plan, _ := clitest.PlanAny(t, r)
	if it := clitest.PlanItem(t, plan, id); it.Action != "remove" || it.Proof == nil || it.Proof.Kind != "squash-merged" {
		t.Fatalf("control: with develop alone on origin, %s is %s %v (proof %+v), want remove squash-merged", id, it.Action, clitest.RefusalCodes(it.Refusals), it.Proof)
	}

	// Other people's open branches, each a distinct commit, all sorting
	// before "develop".
	for i := 0; i < 20; i++ {
		c := r.GitIn(clone, "commit-tree", "-p", base, "-m", fmt.Sprintf("agent %d", i), base+"^{tree}")
		r.GitIn(clone, "push", "-q", "origin", c+fmt.Sprintf(":refs/heads/agent-%02d", i))
	}
	plan, _ = clitest.PlanAny(t, r)
	if it := clitest.PlanItem(t, plan, id); it.Action != "remove" || it.Proof == nil || it.Proof.Kind != "squash-merged" {
		t.Errorf("with 20 more branches on origin, %s is %s %v (proof %+v); want remove with a squash-merged proof on origin's default branch develop",
			id, it.Action, clitest.RefusalCodes(it.Refusals), it.Proof)
	}
}

// TestSafetyManyAdvertisedRefs: origin advertises thousands of refs
// (refs/pull/*) whose objects are missing locally; plan fetches them into
// no ref and still proves a tree published on one of them.
func TestSafetyManyAdvertisedRefs(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.NewTree(t, r, "pr")
	r.Commit(path, "pr.txt", "pull request\n")
	r.PushRef(path, "refs/pull/4242/head")
	clitest.Finish(t, r, id)
	base := r.Head(r.Dir)
	var in strings.Builder
	for i := 0; i < 3000; i++ {
		msg := fmt.Sprintf("pr %d\n", i)
		fmt.Fprintf(&in, "commit refs/pull/%d/merge\ncommitter Fixture <fixture@example.com> 1700000000 +0000\ndata %d\n%sfrom %s\n\n", i, len(msg), msg, base)
	}
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir = r.Remote
	cmd.Env = r.Env()
	cmd.Stdin = strings.NewReader(in.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("fast-import: %v\n%s", err, out)
	}
	if n := len(strings.Split(r.Git("ls-remote", "--refs", "origin"), "\n")); n < 3000 {
		t.Fatalf("origin advertises %d refs, want over 3000", n)
	}
	sfNoLocalWrites(t, r, func() {
		plan, _ := clitest.PlanNow(t, r, 0)
		it := clitest.PlanItem(t, plan, id)
		if it.Action != "remove" || it.Proof == nil || it.Proof.Ref != "refs/pull/4242/head" {
			t.Errorf("plan: %s %v proof %+v, want remove proven by refs/pull/4242/head", it.Action, clitest.RefusalCodes(it.Refusals), it.Proof)
		}
	})
}

// TestSafetyRebaseMerged: the tree's commits were cherry-picked onto an
// advanced main and pushed; the proof is patch-equivalent and names every
// commit of the tree it covers, in plan and in show.
func TestSafetyRebaseMerged(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.NewTree(t, r, "rebaseme")
	base := r.Head(path)
	r.Commit(path, "a.txt", "one\ntwo\n")
	r.Commit(path, "b.txt", "bee\n")
	r.Commit(path, "a.txt", "one\ntwo\nthree\n")
	clitest.Finish(t, r, id)
	r.AdvanceMain("advancer", "other.txt", "someone else's work\n")
	picked := r.RebaseMergeToMain("rebaser", "custody/"+id, nil)
	unique := sfUnique(t, r, path, base)
	if len(unique) != 3 || len(picked) != 3 {
		t.Fatalf("unique %v picked %v", unique, picked)
	}

	var s output.ShowResult
	sfNoLocalWrites(t, r, func() { s = clitest.ShowRecord(t, r, id) })
	if s.Observation == nil || s.Observation.Proof == nil || s.Observation.Proof.Kind != "patch-equivalent" {
		t.Fatalf("show: observation %+v", s.Observation)
	}
	if got := sfSorted(s.Observation.Proof.Commits); !slices.Equal(got, unique) {
		t.Errorf("show: proof covers %v, want %v", got, unique)
	}

	it := clitest.RemoveNow(t, r, id, "patch-equivalent")
	if got := sfSorted(it.Proof.Commits); !slices.Equal(got, unique) {
		t.Errorf("plan: proof covers %v, want the tree's unique commits %v", got, unique)
	}
	if it.Proof.Ref != "refs/heads/main" || it.Proof.Tip != picked[2] {
		t.Errorf("proof %+v, want tip %s on refs/heads/main", it.Proof, picked[2])
	}
	clitest.AssertRemoved(t, r, id, path, true)
}

// TestSafetyRebasePartial: only two of the tree's three commits were
// cherry-picked to main. Neither patch equivalence nor the squash check
// holds: the tree is kept.
func TestSafetyRebasePartial(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.NewTree(t, r, "partial")
	r.Commit(path, "a.txt", "a\n")
	r.Commit(path, "b.txt", "b\n")
	r.Commit(path, "c.txt", "c\n")
	clitest.Finish(t, r, id)
	r.AdvanceMain("advancer", "other.txt", "someone else's work\n")
	dir := r.OtherClone("picker")
	r.GitIn(dir, "fetch", "-q", r.Dir, "refs/heads/custody/"+id)
	r.GitIn(dir, "cherry-pick", "FETCH_HEAD~2", "FETCH_HEAD~1")
	r.GitIn(dir, "push", "-q", "origin", "HEAD:refs/heads/main")
	it := sfKeptThrough(t, r, id, path, "unpushed-commits")
	if it.Proof != nil {
		t.Errorf("a partial rebase proved %s: %+v", id, it.Proof)
	}
}

// TestSafetyProofGoneBeforeApply: plan found a squash-merged or
// patch-equivalent proof; before apply, origin's main is force-pushed back
// so the proof no longer holds. apply finds proof fresh and refuses; the
// tree is untouched.
func TestSafetyProofGoneBeforeApply(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"squash-merged", "patch-equivalent"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			r := clitest.InitRepo(t)
			id, path := clitest.NewTree(t, r, "vanishing")
			r.Commit(path, "a.txt", "a\n")
			r.Commit(path, "b.txt", "b\n")
			clitest.Finish(t, r, id)
			old := r.AdvanceMain("advancer", "other.txt", "someone else's work\n")
			if kind == "squash-merged" {
				r.SquashMergeToMain("merger", "custody/"+id, nil)
			} else {
				r.RebaseMergeToMain("merger", "custody/"+id, nil)
			}
			plan, file := clitest.PlanNow(t, r, 0)
			if it := clitest.PlanItem(t, plan, id); it.Action != "remove" || it.Proof == nil || string(it.Proof.Kind) != kind {
				t.Fatalf("plan: %s %+v %v", it.Action, it.Proof, clitest.RefusalCodes(it.Refusals))
			}
			r.Git("push", "-q", "--force", "origin", old+":refs/heads/main")
			before := sfSnapKept(t, r, id, path)
			a := clitest.Apply(t, r, file, 3)
			if o := clitest.ApplyOutcome(t, a, id); o.Outcome == "removed" || o.Refusal == nil {
				t.Errorf("apply after the proof vanished: %+v", o)
			}
			before.check(t, r, id, "after apply")
		})
	}
}

// TestSafetyRebaseMergedWithEmptyCommit: an empty unique commit defeats
// patch equivalence (an empty patch proves nothing); the content is all on
// main, so the tree is still removable, as squash-merged.
func TestSafetyRebaseMergedWithEmptyCommit(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.NewTree(t, r, "withempty")
	r.Commit(path, "a.txt", "a\n")
	r.GitIn(path, "commit", "-q", "--allow-empty", "-m", "nothing")
	r.Commit(path, "b.txt", "b\n")
	clitest.Finish(t, r, id)
	r.AdvanceMain("advancer", "other.txt", "someone else's work\n")
	r.RebaseMergeToMain("rebaser", "custody/"+id, nil)
	it := clitest.RemoveNow(t, r, id, "squash-merged")
	if len(it.Proof.Commits) != 3 {
		t.Errorf("proof covers %v, want the 3 unique commits", it.Proof.Commits)
	}
	clitest.AssertRemoved(t, r, id, path, true)
}

// TestSafetyRebaseMergedWhitespace: one cherry-pick differs from the tree's
// commit only in whitespace (a trailing blank). git's own --cherry-pick
// (whitespace-insensitive patch ids) calls them equal; patch-id --verbatim
// tells them apart, so it is not patch-equivalent. And since the published
// content really differs (the three-way merge conflicts on that line) it is
// not squash-merged either: the tree is kept.
func TestSafetyRebaseMergedWhitespace(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.NewTree(t, r, "spaces")
	r.Commit(path, "a.txt", "one\ntwo\n")
	r.Commit(path, "b.txt", "bee\n")
	clitest.Finish(t, r, id)
	r.AdvanceMain("advancer", "other.txt", "someone else's work\n")
	r.RebaseMergeToMain("rebaser", "custody/"+id, func(dir string, i int) {
		if i == 0 {
			r.WriteFile(dir, "a.txt", "one \ntwo\n")
		}
	})
	tip := strings.Fields(r.Git("ls-remote", "origin", "refs/heads/main"))[0]
	r.Git("fetch", "-q", "origin")
	if out := r.GitIn(path, "rev-list", "--cherry-pick", "--right-only", tip+"...HEAD"); out != "" {
		t.Fatalf("fixture: --cherry-pick already tells the picks apart (%s); the case needs a whitespace-only difference", out)
	}
	it := sfKeptThrough(t, r, id, path, "unpushed-commits")
	if it.Proof != nil {
		t.Errorf("a whitespace-changed pick proved %s: %+v", id, it.Proof)
	}
}

// TestSafetyPublishedElsewhere: a ref in any advertised namespace proves
// ancestry.
func TestSafetyPublishedElsewhere(t *testing.T) {
	t.Parallel()
	for _, ref := range []string{"refs/custom/x", "refs/pull/7/head", "refs/tags/v1"} {
		t.Run(strings.ReplaceAll(ref, "/", "_"), func(t *testing.T) {
			t.Parallel()
			r := clitest.InitRepo(t)
			id, path := clitest.NewTree(t, r, "pushed")
			head := r.Commit(path, "work.txt", "work\n")
			r.PushRef(path, ref)
			clitest.Finish(t, r, id)
			it := clitest.RemoveNow(t, r, id, "ancestry")
			if it.Proof.Ref != ref || it.Proof.Tip != head || it.Proof.Remote != "origin" {
				t.Errorf("proof %+v, want %s at %s on origin", it.Proof, ref, head)
			}
			clitest.AssertRemoved(t, r, id, path, true)
		})
	}
}

// TestSafetyLocalRefsDoNotProve: a local remote-tracking ref, a local tag,
// a replace ref or a graft that makes HEAD look published to git proves
// nothing to custody.
func TestSafetyLocalRefsDoNotProve(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		make func(r *fixtures.Repo, head string)
		// sanity is a git command that, believing the local state, calls
		// head published (exit 0 and some output).
		sanity []string
	}{
		{"RemoteTracking", func(r *fixtures.Repo, head string) {
			r.Git("update-ref", "refs/remotes/origin/fake", head)
		}, []string{"branch", "-r", "--contains", "HEAD"}},
		{"LocalTag", func(r *fixtures.Repo, head string) {
			r.Git("tag", "v9", head)
		}, []string{"tag", "--contains", "HEAD"}},
		{"ReplaceRef", func(r *fixtures.Repo, head string) {
			// Replace origin's new main with a commit whose parents are
			// its real parent and head.
			tip := r.AdvanceMain("advancer", "other.txt", "other\n")
			r.Git("fetch", "-q", "origin")
			fake := r.Git("commit-tree", tip+"^{tree}", "-p", tip+"^", "-p", head, "-m", "fake")
			r.Git("replace", tip, fake)
		}, []string{"branch", "-r", "--contains", "HEAD"}},
		{"Graft", func(r *fixtures.Repo, head string) {
			tip := r.AdvanceMain("advancer", "other.txt", "other\n")
			r.Git("fetch", "-q", "origin")
			parent := r.Git("rev-parse", tip+"^")
			r.WriteFile(filepath.Join(r.Dir, ".git", "info"), "grafts", tip+" "+parent+" "+head+"\n")
		}, []string{"branch", "-r", "--contains", "HEAD"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := clitest.InitRepo(t)
			id, path := clitest.NewTree(t, r, "local")
			head := r.Commit(path, "work.txt", "work only here\n")
			clitest.Finish(t, r, id)
			tc.make(r, head)
			if out, err := r.TryGitIn(path, tc.sanity...); err != nil || strings.TrimSpace(out) == "" {
				t.Fatalf("fixture: git does not believe %s is published (%v): %q", head, err, out)
			}
			it := sfKeptThrough(t, r, id, path, "unpushed-commits")
			if it.Proof != nil {
				t.Errorf("local state proved %s: %+v", id, it.Proof)
			}
		})
	}
}

// TestSafetyAnnotatedTag: a commit published only through an annotated tag
// (ls-remote --refs advertises the tag object, not the commit) is proven
// by ancestry.
func TestSafetyAnnotatedTag(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.NewTree(t, r, "tagged")
	head := r.Commit(path, "work.txt", "work\n")
	r.GitIn(path, "tag", "-a", "-m", "release", "v2")
	r.GitIn(path, "push", "-q", "origin", "refs/tags/v2")
	r.Git("tag", "-d", "v2") // only the remote has it
	clitest.Finish(t, r, id)
	it := clitest.RemoveNow(t, r, id, "ancestry")
	if it.Proof.Ref != "refs/tags/v2" || it.Proof.Head != head {
		t.Errorf("proof %+v, want ancestry of %s on refs/tags/v2", it.Proof, head)
	}
	clitest.AssertRemoved(t, r, id, path, true)
}

// TestSafetyRootCommit: the tree's branch was reset to a root commit whose
// tree another root commit on origin has too. A root unique commit defeats
// patch equivalence, and unrelated histories do not merge: kept.
func TestSafetyRootCommit(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.NewTree(t, r, "rooted")
	r.WriteFile(path, "solo.txt", "from scratch\n")
	r.GitIn(path, "add", "solo.txt")
	tree := r.GitIn(path, "write-tree")
	root := r.GitIn(path, "commit-tree", tree, "-m", "root of the tree")
	r.GitIn(path, "reset", "-q", "--hard", root)
	twin := r.GitIn(path, "commit-tree", tree, "-m", "the same content, another root")
	r.GitIn(path, "push", "-q", "origin", twin+":refs/heads/twin")
	clitest.Finish(t, r, id)
	it := sfKeptThrough(t, r, id, path, "unpushed-commits")
	if it.Proof != nil {
		t.Errorf("a root commit proved %s: %+v", id, it.Proof)
	}
}

// TestSafetySelfRemote: a remote that is this repository itself (by any
// spelling) advertises its local branches, including the tree's own branch
// that removal would delete: never proof.
func TestSafetySelfRemote(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		url  func(r *fixtures.Repo, path string) string
	}{
		{"Dot", func(r *fixtures.Repo, path string) string { return "." }},
		{"Path", func(r *fixtures.Repo, path string) string { return r.Dir }},
		{"FileURL", func(r *fixtures.Repo, path string) string { return "file://" + r.Dir + "/.git" }},
		{"Worktree", func(r *fixtures.Repo, path string) string { return path }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := clitest.InitRepo(t)
			id, path := clitest.NewTree(t, r, "self")
			r.Commit(path, "precious.txt", "only here\n")
			clitest.Finish(t, r, id)
			r.Git("remote", "add", "loop", tc.url(r, path))
			it := sfKeptThrough(t, r, id, path)
			if it.Proof != nil || (!clitest.HasCode(it.Refusals, "remote-unavailable") && !clitest.HasCode(it.Refusals, "unpushed-commits")) {
				t.Errorf("a remote that is this repository proved %s: %v %+v", id, clitest.RefusalCodes(it.Refusals), it.Proof)
			}
		})
	}
}

// sfDeadRemote adds a remote that never answers.
func sfDeadRemote(r *fixtures.Repo) {
	r.Git("remote", "add", "backup", filepath.Join(r.Root, "no-such-remote.git"))
}

// TestSafetyDeadSecondRemote: origin proves the tree; a second remote that
// does not answer does not matter.
func TestSafetyDeadSecondRemote(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.Removable(t, r, "proven")
	sfDeadRemote(r)
	clitest.RemoveNow(t, r, id, "ancestry")
	clitest.AssertRemoved(t, r, id, path, true)
}

// TestSafetyRemoteUnavailable: nothing that answers proves the tree and one
// remote did not answer: remote-unavailable, never "not merged".
func TestSafetyRemoteUnavailable(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.NewTree(t, r, "unproven")
	r.Commit(path, "work.txt", "work only here\n")
	clitest.Finish(t, r, id)
	sfDeadRemote(r)
	it := sfKeptThrough(t, r, id, path, "remote-unavailable")
	if clitest.HasCode(it.Refusals, "unpushed-commits") {
		t.Errorf("an unanswered remote was read as not merged: %v", clitest.RefusalCodes(it.Refusals))
	}
	s := clitest.ShowRecord(t, r, id)
	if s.Observation == nil || len(s.Observation.Remote.Unavailable) != 1 || s.Observation.Remote.Unavailable[0].Remote != "backup" {
		t.Errorf("show does not name the remote that did not answer: %+v", s.Observation)
	}
}

// TestSafetyUnknownIsNeverClean: when a git observation fails (a git that
// fails one subcommand), the tree is kept with a code that says so, both at
// plan and at apply of a plan made while everything worked.
func TestSafetyUnknownIsNeverClean(t *testing.T) {
	t.Parallel()
	removable := func(t *testing.T, r *fixtures.Repo) (string, string) { return clitest.Removable(t, r, "obs") }
	// custody reads a plain index itself; a split index it leaves to git
	// ls-files.
	splitIndex := func(t *testing.T, r *fixtures.Repo) (string, string) {
		id, path := removable(t, r)
		r.GitIn(path, "update-index", "--split-index")
		return id, path
	}
	// A tree that is exactly its HEAD is planned without git status
	// (decision 0185); an attributes file makes plan ask status.
	statusAsked := func(t *testing.T, r *fixtures.Repo) (string, string) {
		id, path := removable(t, r)
		if err := os.WriteFile(filepath.Join(r.Dir, ".git", "info", "attributes"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		return id, path
	}
	rebaseMerged := func(t *testing.T, r *fixtures.Repo) (string, string) {
		id, path := clitest.NewTree(t, r, "obs")
		r.Commit(path, "a.txt", "a\n")
		clitest.Finish(t, r, id)
		r.AdvanceMain("advancer", "other.txt", "someone else's work\n")
		r.RebaseMergeToMain("rebaser", "custody/"+id, nil)
		return id, path
	}
	for _, tc := range []struct {
		sub, code string
		make      func(t *testing.T, r *fixtures.Repo) (string, string)
	}{
		{"ls-files", "observation-failed", splitIndex},
		{"status", "status-failed", statusAsked},
		{"ls-remote", "remote-unavailable", removable},
		{"patch-id", "proof-failed", rebaseMerged},
	} {
		t.Run(tc.sub, func(t *testing.T) {
			t.Parallel()
			r := clitest.InitRepo(t)
			id, path := tc.make(t, r)
			good, goodFile := clitest.PlanNow(t, r, 0)
			if it := clitest.PlanItem(t, good, id); it.Action != "remove" {
				t.Fatalf("with a working git %s is not removable: %+v", id, it.Refusals)
			}
			env := clitest.PathEnv(r.FailingGit(tc.sub))
			before := sfSnapKept(t, r, id, path)

			file := clitest.PlanFile(t, r)
			res := clitest.RunBin(t, clitest.Bin(), r, r.Dir, []string{env}, "plan", "-o", file, "--json")
			if res.Code != 0 {
				t.Fatalf("plan with a failing git %s: %s (want 0: the tree is kept, and the plan made)", tc.sub, res)
			}
			plan := clitest.DecodeResult[machine.Plan](t, res, "plan")
			it := clitest.PlanItem(t, plan, id)
			if it.Action != "keep" || !clitest.HasCode(it.Refusals, tc.code) {
				t.Errorf("plan with a failing git %s: %s %v, want keep with %s", tc.sub, it.Action, clitest.RefusalCodes(it.Refusals), tc.code)
			}
			clitest.Apply(t, r, file, 0, env)
			before.check(t, r, id, "after plan and apply with a failing git")

			a := clitest.Apply(t, r, goodFile, 3, env)
			if o := clitest.ApplyOutcome(t, a, id); o.Outcome == "removed" || o.Refusal == nil {
				t.Errorf("apply of a good plan with a failing git %s: %+v", tc.sub, o)
			}
			before.check(t, r, id, "after applying the good plan with a failing git")
		})
	}
}

// --- ownership ----------------------------------------------------------------

// sfLookAlike makes a worktree with plain git under the managed root, with
// a branch and path that look like custody's.
func sfLookAlike(r *fixtures.Repo) (path string) {
	path = filepath.Join(r.Dir, ".worktrees", "fake-abc123")
	r.Git("worktree", "add", "-q", "-b", "custody/fake-abc123", path)
	return path
}

// TestSafetyForeignLookAlike: a tree made by plain `git worktree add` with
// custody's branch prefix and placement, even with a forged ready marker, is
// foreign: listed, never removed. A removable custody tree beside it is
// removed by the same apply.
func TestSafetyForeignLookAlike(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	fake := sfLookAlike(r)
	r.WriteFile(filepath.Join(r.Dir, ".git", "worktrees", "fake-abc123"), "custody-ready", "fake-abc123\n")
	id, path := clitest.Removable(t, r, "real")
	before := sfSnapKept(t, r, "", fake)
	plan, file := clitest.PlanNow(t, r, 0)
	it := clitest.PlanItem(t, plan, "fake-abc123")
	if it.Action != "keep" || it.Refusal == nil || it.Refusal.Code != "foreign" || it.Path != fake || it.Branch != "custody/fake-abc123" {
		t.Errorf("look-alike item %+v, want keep [foreign]", it)
	}
	if it.Refusal != nil && !strings.Contains(it.Refusal.Retry, "custody adopt") {
		t.Errorf("foreign refusal does not say how to adopt: %+v", it.Refusal)
	}
	a := clitest.Apply(t, r, file, 0)
	if o := clitest.ApplyOutcome(t, a, id); o.Outcome != "removed" {
		t.Fatalf("the real tree: %+v", o)
	}
	for _, o := range a.Items {
		if o.ID == "fake-abc123" {
			t.Errorf("apply acted on the foreign tree: %+v", o)
		}
	}
	before.without("refs/heads/custody/"+id).check(t, r, "", "after apply")
	clitest.AssertRemoved(t, r, id, path, true)
	if r.BranchTip("custody/fake-abc123") == "" {
		t.Error("the look-alike's branch was deleted")
	}
}

// TestSafetyForeignMerged: foreign trees whose work is fully merged into
// origin main (one on a branch under the managed root, one detached
// elsewhere) are never touched.
func TestSafetyForeignMerged(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	fake := filepath.Join(r.Dir, ".worktrees", "topic")
	r.Git("worktree", "add", "-q", "-b", "topic", fake)
	r.Commit(fake, "topic.txt", "merged work\n")
	r.Push(fake, "main")
	other := filepath.Join(r.Root, "elsewhere")
	r.Git("worktree", "add", "-q", "--detach", other, "main")
	id, path := clitest.Removable(t, r, "real")
	before := sfSnapKept(t, r, "", fake).without("refs/heads/custody/" + id)
	beforeOther := sfSnapKept(t, r, "", other).without("refs/heads/custody/" + id)
	plan, file := clitest.PlanNow(t, r, 0)
	for _, p := range []string{fake, other} {
		it := clitest.PlanItemAt(plan, p)
		if it == nil || it.Action != "keep" || it.Refusal == nil || it.Refusal.Code != "foreign" {
			t.Errorf("foreign %s: %+v", p, it)
		}
	}
	a := clitest.Apply(t, r, file, 0)
	if o := clitest.ApplyOutcome(t, a, id); o.Outcome != "removed" {
		t.Fatalf("the real tree: %+v", o)
	}
	clitest.AssertRemoved(t, r, id, path, true)
	before.check(t, r, "", "after apply")
	beforeOther.check(t, r, "", "after apply")
	if r.BranchTip("topic") == "" {
		t.Error("the foreign merged branch was deleted")
	}
}

// TestSafetyForeignAtTombstonedPath: after custody removed a tree, someone
// makes a worktree with plain git at the same path, admin key and branch.
// It is foreign (never the tombstoned record), and applying the old plan
// again reports already-done without touching it.
func TestSafetyForeignAtTombstonedPath(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.Removable(t, r, "reused")
	_, oldPlan := clitest.PlanNow(t, r, 0)
	clitest.Apply(t, r, oldPlan, 0)
	clitest.AssertRemoved(t, r, id, path, true)
	r.Git("worktree", "add", "-q", "-b", "custody/"+id, path)
	r.Commit(path, "new.txt", "new work, unpublished\n")
	before := sfSnapKept(t, r, "", path)
	plan, _ := clitest.PlanNow(t, r, 0)
	it := clitest.PlanItemAt(plan, path)
	if it == nil || it.Action != "keep" || it.Refusal == nil || it.Refusal.Code != "foreign" || it.ID == id {
		t.Errorf("the new tree at %s: %+v, want keep [foreign] under another id than %s", path, it, id)
	}
	a := clitest.Apply(t, r, oldPlan, 0)
	if o := clitest.ApplyOutcome(t, a, id); o.Outcome != "already-done" {
		t.Errorf("old plan again: %+v, want already-done", o)
	}
	before.check(t, r, "", "after applying the old plan again")
	// custody does not reuse the tombstoned record's id: adopting the new
	// tree gives it a record of its own, and the tombstone stays as it was.
	ad := clitest.DecodeResult[steps.NewResult](t, clitest.MustCustody(t, r, 0, "adopt", path, "--json"), "adopt")
	if ad.ID == id || !strings.HasPrefix(ad.ID, id+"-") {
		t.Errorf("adopt at a tombstoned id: record %q, want a new id %s-<hex>", ad.ID, id)
	}
	if st := clitest.ListRecord(t, r, id).State; st != machine.StateTombstoned {
		t.Errorf("the tombstoned record is %s after the adoption", st)
	}
}

// TestSafetyAdopt: custody adopt enrolls a foreign tree (origin adopted);
// after finish, plan and apply it is removed, but its branch is kept.
func TestSafetyAdopt(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	fake := sfLookAlike(r)
	head := r.Commit(fake, "adopted.txt", "published\n")
	r.Push(fake, "main")
	ad := clitest.DecodeResult[steps.NewResult](t, clitest.MustCustody(t, r, 0, "adopt", fake, "--json"), "adopt")
	if ad.ID != "fake-abc123" {
		t.Fatalf("adopted as %q", ad.ID)
	}
	if s := clitest.ShowRecord(t, r, ad.ID); s.Origin != "adopted" || s.Path != fake {
		t.Errorf("show after adopt: origin %q path %q", s.Origin, s.Path)
	}
	if res := clitest.Custody(t, r, "adopt", fake); res.Code != 1 {
		t.Errorf("second adopt: %s", res)
	}
	clitest.Finish(t, r, ad.ID)
	clitest.RemoveNow(t, r, ad.ID, "ancestry")
	clitest.AssertRemoved(t, r, ad.ID, fake, false)
	if tip := r.BranchTip("custody/fake-abc123"); tip != head {
		t.Errorf("the adopted tree's branch is at %q, want kept at %s", tip, head)
	}
	s := clitest.ShowRecord(t, r, ad.ID)
	if s.Evidence.BranchOutcome != "kept" || s.Evidence.BranchReason == "" {
		t.Errorf("evidence %+v, want branch kept with a reason", s.Evidence)
	}
}

// TestSafetyAdoptAdminKeyDiffers: two foreign trees share a basename, so
// git names the second one's admin entry wt1. Adopting the second enrolls
// it under that exact admin key; removing it (even through a git that
// leaves the registration behind) drops only that entry, never the first
// tree's.
func TestSafetyAdoptAdminKeyDiffers(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	first := filepath.Join(r.Root, "a", "wt")
	second := filepath.Join(r.Root, "b", "wt")
	r.Git("worktree", "add", "-q", "--detach", first)
	r.Git("worktree", "add", "-q", "-b", "topic", second)
	r.Commit(second, "topic.txt", "published\n")
	r.Push(second, "topic")
	if got := strings.TrimSpace(r.GitIn(second, "rev-parse", "--git-dir")); filepath.Base(got) != "wt1" {
		t.Fatalf("fixture: the second tree's admin entry is %s, want wt1", got)
	}
	ad := clitest.DecodeResult[steps.NewResult](t, clitest.MustCustody(t, r, 0, "adopt", second, "--json"), "adopt")
	if ad.ID != "wt1" {
		t.Fatalf("adopted as %q, want the admin key wt1", ad.ID)
	}
	firstKept := sfSnapKept(t, r, "", first)
	clitest.Finish(t, r, ad.ID)
	plan, file := clitest.PlanNow(t, r, 0)
	if it := clitest.PlanItem(t, plan, ad.ID); it.Action != "remove" {
		t.Fatalf("adopted tree: %+v", it)
	}
	if it := clitest.PlanItemAt(plan, first); it == nil || it.Refusal == nil || it.Refusal.Code != "foreign" {
		t.Errorf("first tree: %+v, want foreign", it)
	}
	// The adopted tree lies outside the managed root: its retirement is
	// confirmed explicitly.
	res := clitest.RunBin(t, clitest.Bin(), r, r.Dir, []string{clitest.PathEnv(r.LyingGit("rmdir"))}, "apply", "--allow-external-retirement", file, "--json")
	if res.Code != 0 {
		t.Fatalf("apply --allow-external-retirement: want exit 0, got\n%s", res)
	}
	a := clitest.DecodeResult[steps.ApplyResult](t, res, "apply")
	if o := clitest.ApplyOutcome(t, a, ad.ID); o.Outcome != "removed" {
		t.Fatalf("apply: %+v", o)
	}
	if _, err := os.Lstat(second); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s: %v, want ENOENT", second, err)
	}
	if _, err := os.Lstat(filepath.Join(r.Dir, ".git", "worktrees", "wt1")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("admin entry wt1 survives: %v", err)
	}
	if slices.Contains(clitest.Registered(t, r), second) {
		t.Errorf("%s still registered", second)
	}
	firstKept.check(t, r, "", "after removing the adopted tree")
	if r.BranchTip("topic") == "" {
		t.Error("the adopted tree's branch was deleted")
	}
}

// TestSafetyAdoptRefusesNonWorktree: adopt names exactly a linked worktree
// of this repository; the main checkout or a plain directory is refused.
func TestSafetyAdoptRefusesNonWorktree(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	plain := filepath.Join(r.Root, "plain")
	r.WriteFile(plain, "f", "x\n")
	// A linked worktree of another repository.
	otherRepo := filepath.Join(r.Root, "other-repo")
	r.GitIn(r.Root, "clone", "-q", r.Remote, otherRepo)
	otherTree := filepath.Join(r.Root, "other-tree")
	r.GitIn(otherRepo, "worktree", "add", "-q", "--detach", otherTree)
	// A tree custody made itself is already in custody.
	_, own := clitest.NewTree(t, r, "own")
	for _, p := range []string{r.Dir, plain, otherTree, own, filepath.Join(r.Root, "missing")} {
		res := clitest.Custody(t, r, "adopt", p, "--json")
		if res.Code != 1 || !strings.Contains(res.Stderr, `"code"`) {
			t.Errorf("adopt %s: %s", p, res)
		}
	}
	if recs := clitest.ListRecords(t, r, true); len(recs) != 1 {
		t.Errorf("refused adopts left records: %+v", recs)
	}
}

// --- branch compare-and-swap -------------------------------------------------

// TestSafetyBranchMovedAfterPlan: the tree is detached at its published
// HEAD; after plan, someone moves the tree's branch. The tree is removed
// (its own state did not change) but the moved branch is kept, with the
// reason in the evidence.
func TestSafetyBranchMovedAfterPlan(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.NewTree(t, r, "moved")
	base := r.Head(path)
	r.Commit(path, "work.txt", "published\n")
	r.Push(path, "main")
	r.GitIn(path, "checkout", "-q", "--detach")
	clitest.Finish(t, r, id)
	_, file := clitest.PlanNow(t, r, 0)
	r.Git("branch", "-f", "custody/"+id, base)
	a := clitest.Apply(t, r, file, 0)
	if o := clitest.ApplyOutcome(t, a, id); o.Outcome != "removed" {
		t.Fatalf("apply: %+v", o)
	}
	clitest.AssertRemoved(t, r, id, path, false)
	if tip := r.BranchTip("custody/" + id); tip != base {
		t.Errorf("moved branch is at %q, want kept at %s", tip, base)
	}
	s := clitest.ShowRecord(t, r, id)
	if s.Evidence.BranchOutcome != "kept" || !strings.Contains(s.Evidence.BranchReason, "moved") {
		t.Errorf("evidence %+v, want branch_outcome kept naming the move", s.Evidence)
	}
}

// TestSafetyBranchCheckedOutElsewhere: after plan, the tree's branch is
// checked out in another worktree; the tree is removed, the branch kept.
func TestSafetyBranchCheckedOutElsewhere(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.NewTree(t, r, "shared")
	head := r.Commit(path, "work.txt", "published\n")
	r.Push(path, "main")
	r.GitIn(path, "checkout", "-q", "--detach")
	clitest.Finish(t, r, id)
	_, file := clitest.PlanNow(t, r, 0)
	other := filepath.Join(r.Root, "other")
	r.Git("worktree", "add", "-q", other, "custody/"+id)
	a := clitest.Apply(t, r, file, 0)
	if o := clitest.ApplyOutcome(t, a, id); o.Outcome != "removed" {
		t.Fatalf("apply: %+v", o)
	}
	clitest.AssertRemoved(t, r, id, path, false)
	if tip := r.BranchTip("custody/" + id); tip != head {
		t.Errorf("branch checked out elsewhere is at %q, want %s", tip, head)
	}
	s := clitest.ShowRecord(t, r, id)
	if s.Evidence.BranchOutcome != "kept" || !strings.Contains(s.Evidence.BranchReason, "checked out") {
		t.Errorf("evidence %+v, want branch kept because it is checked out", s.Evidence)
	}
}

// TestSafetyDetachedBranchKept: a tree whose HEAD was detached onto
// published work while its branch holds an unpushed commit is removable
// (HEAD is proven), but the branch is kept, since it moved away from the
// proven commit, and its commit survives.
func TestSafetyDetachedBranchKept(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.NewTree(t, r, "detach")
	unpushed := r.Commit(path, "mine.txt", "only on the branch\n")
	r.GitIn(path, "checkout", "-q", "--detach", "HEAD~1")
	clitest.Finish(t, r, id)
	clitest.RemoveNow(t, r, id, "ancestry")
	clitest.AssertRemoved(t, r, id, path, false)
	if tip := r.BranchTip("custody/" + id); tip != unpushed {
		t.Errorf("branch custody/%s is at %q, want the unpushed %s", id, tip, unpushed)
	}
	s := clitest.ShowRecord(t, r, id)
	if s.Evidence.BranchOutcome != "kept" || s.Evidence.BranchReason == "" {
		t.Errorf("evidence: branch %q (%q), want kept with a reason", s.Evidence.BranchOutcome, s.Evidence.BranchReason)
	}
}

// TestSafetyCommitAfterPlanIsStale: a commit in the tree after plan makes
// the item stale; nothing is touched.
func TestSafetyCommitAfterPlanIsStale(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.Removable(t, r, "late")
	_, file := clitest.PlanNow(t, r, 0)
	r.Commit(path, "later.txt", "written after plan\n")
	before := sfSnapKept(t, r, id, path)
	a := clitest.Apply(t, r, file, 3)
	if o := clitest.ApplyOutcome(t, a, id); o.Outcome != "stale" || o.Refusal == nil || o.Refusal.Code != "stale" {
		t.Errorf("apply after a new commit: %+v, want stale", o)
	}
	before.check(t, r, id, "after apply")
}

// --- verified removal ----------------------------------------------------------

// TestSafetyStaleRegistrationDropped: a git that deletes the directory but
// leaves the registration. custody removes exactly that admin entry, never
// a repository-wide prune: another worktree's prunable entry survives.
func TestSafetyStaleRegistrationDropped(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.Removable(t, r, "half")
	gone := filepath.Join(r.Root, "gone")
	r.Git("worktree", "add", "-q", "--detach", gone)
	if err := os.RemoveAll(gone); err != nil {
		t.Fatal(err)
	}
	goneAdmin := filepath.Join(r.Dir, ".git", "worktrees", "gone")
	goneSnap := r.Snap(goneAdmin)
	lying := r.LyingGit("rmdir")
	_, file := clitest.PlanNow(t, r, 0)
	a := clitest.Apply(t, r, file, 0, clitest.PathEnv(lying))
	if o := clitest.ApplyOutcome(t, a, id); o.Outcome != "removed" {
		t.Errorf("apply: %+v", o)
	}
	clitest.AssertRemoved(t, r, id, path, true)
	if d := goneSnap.Diff(r.Snap(goneAdmin)); d != "" {
		t.Errorf("another worktree's admin entry was touched (a prune?):\n%s", d)
	}
	if !slices.Contains(clitest.Registered(t, r), gone) {
		t.Errorf("the other worktree %s was pruned", gone)
	}
}

// --- inspection ------------------------------------------------------------------

// TestSafetyShowIgnored: show lists the status counts and every ignored
// path the verdict rests on, in JSON and for a person.
func TestSafetyShowIgnored(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.Removable(t, r, "secrets")
	excl := filepath.Join(r.Dir, ".git", "info", "exclude")
	b, err := os.ReadFile(excl)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(excl, append(b, "\n*.secret\nbuild/\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	r.WriteFile(path, "db/local.secret", "password\n")
	r.WriteFile(path, "build/out.bin", "artifact\n")
	r.WriteFile(path, "todo.txt", "untracked\n")
	sfKeptThrough(t, r, id, path, "ignored-files", "untracked-files")

	s := clitest.ShowRecord(t, r, id)
	if s.Observation == nil {
		t.Fatal("show has no observation")
	}
	st := s.Observation.Status
	if got, want := sfSorted(st.Ignored), []string{"build/", "db/local.secret"}; !slices.Equal(got, want) {
		t.Errorf("show: ignored %v, want %v", got, want)
	}
	if !slices.Equal(st.Untracked, []string{"todo.txt"}) || len(st.Changed) != 0 {
		t.Errorf("show: status %+v", st)
	}
	if s.Observation.Proof == nil || s.Observation.Proof.Kind != "ancestry" {
		t.Errorf("show: proof %+v, want ancestry (the hazard, not the proof, keeps it)", s.Observation.Proof)
	}
	if got := sfVerdictCodes(s); !slices.Equal(got, []string{"untracked-files", "ignored-files"}) {
		t.Errorf("show: refusals %v", got)
	}
	human := clitest.MustCustody(t, r, 0, "show", id).Stdout
	for _, want := range []string{"0 changed (0 staged), 0 unmerged, 1 untracked, 2 ignored", "ignored db/local.secret", "ignored build/", "[ignored-files]"} {
		if !strings.Contains(human, want) {
			t.Errorf("show (human) lacks %q:\n%s", want, human)
		}
	}
}

// TestSafetyShowProofCommits: show of a squash-merged tree names the proof,
// its tip, base and every covered commit.
func TestSafetyShowProofCommits(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.NewTree(t, r, "shown")
	base := r.Head(path)
	r.Commit(path, "a.txt", "a\n")
	r.Commit(path, "b.txt", "b\n")
	clitest.Finish(t, r, id)
	r.SquashMergeToMain("squasher", "custody/"+id, nil)
	unique := sfUnique(t, r, path, base)
	s := clitest.ShowRecord(t, r, id)
	if s.Verdict == nil || s.Verdict.Action != "remove" || s.Verdict.Proof == nil || s.Verdict.Proof.Kind != "squash-merged" {
		t.Fatalf("show verdict %+v", s.Verdict)
	}
	if got := sfSorted(s.Verdict.Proof.Commits); !slices.Equal(got, unique) || s.Verdict.Proof.Base == "" || s.Verdict.Proof.Tip == "" {
		t.Errorf("show proof %+v, want commits %v with tip and base", s.Verdict.Proof, unique)
	}
	human := clitest.MustCustody(t, r, 0, "show", id).Stdout
	if !strings.Contains(human, "proof: squash-merged") {
		t.Errorf("show (human) does not name the proof:\n%s", human)
	}
}
