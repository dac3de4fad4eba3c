package safety

// Removal safety, end to end: one case per way worktree cleanup tools lose
// work. Each kept case asserts the refusal code plan gives and that plan
// and apply leave every byte, every ref and the registration of the kept
// tree as they were; each removable case asserts the proof and a verified
// removal. Every helper here is prefixed sf so it cannot collide
// with the other test files of this package.

import (
	"errors"
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
	clitest.KeptThrough(t, r, id, path, "submodule-changes")
}

func TestSafetySubmoduleUntracked(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := sfSubmoduleTree(t, r)
	r.WriteFile(path, "lib/scratch.txt", "untracked inside the submodule\n")
	clitest.KeptThrough(t, r, id, path, "submodule-changes")
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
	it := clitest.KeptThrough(t, r, id, path, "submodule-unpushed")
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
	it := clitest.KeptThrough(t, r, id, path)
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
	it := clitest.KeptThrough(t, r, id, path, "in-use")
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
	clitest.KeptThrough(t, r, id, path, "in-use")
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
	it := clitest.KeptThrough(t, r, id, path, "in-use")
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
	before := clitest.SnapKeptState(t, r, id, path)
	a := clitest.Apply(t, r, file, 3)
	o := clitest.ApplyOutcome(t, a, id)
	if o.Outcome == "removed" || o.Refusal == nil || o.Refusal.Code != "in-use" {
		t.Errorf("apply with a process inside: %+v, want refused in-use", o)
	}
	before.Check(t, r, id, "after apply")
}

// TestSafetyInUseDirectChild: a sleep whose cwd is inside the tree, started
// directly by this test process (named custody.test), keeps the tree:
// custody must not skip a process because of its parent's name.
func TestSafetyInUseDirectChild(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.Removable(t, r, "direct")
	h := r.Hold(path, "sleep", "60")
	before := clitest.SnapKeptState(t, r, id, path)
	plan, _ := clitest.PlanAny(t, r)
	it := clitest.PlanItem(t, plan, id)
	if it.Action != "keep" || !clitest.HasCode(it.Refusals, "in-use") {
		t.Errorf("sleep %d (parent %q) has its cwd in %s, yet plan says %s %v", h.Cmd.Process.Pid, sfComm(os.Getpid()), path, it.Action, clitest.RefusalCodes(it.Refusals))
	}
	before.Check(t, r, id, "after plan")
}

// sfComm returns a process's command name.
func sfComm(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	return strings.TrimSpace(string(b))
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
	before := clitest.SnapKeptState(t, r, "", fake)
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
	before.Without("refs/heads/custody/"+id).Check(t, r, "", "after apply")
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
	before := clitest.SnapKeptState(t, r, "", fake).Without("refs/heads/custody/" + id)
	beforeOther := clitest.SnapKeptState(t, r, "", other).Without("refs/heads/custody/" + id)
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
	before.Check(t, r, "", "after apply")
	beforeOther.Check(t, r, "", "after apply")
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
	before := clitest.SnapKeptState(t, r, "", path)
	plan, _ := clitest.PlanNow(t, r, 0)
	it := clitest.PlanItemAt(plan, path)
	if it == nil || it.Action != "keep" || it.Refusal == nil || it.Refusal.Code != "foreign" || it.ID == id {
		t.Errorf("the new tree at %s: %+v, want keep [foreign] under another id than %s", path, it, id)
	}
	a := clitest.Apply(t, r, oldPlan, 0)
	if o := clitest.ApplyOutcome(t, a, id); o.Outcome != "already-done" {
		t.Errorf("old plan again: %+v, want already-done", o)
	}
	before.Check(t, r, "", "after applying the old plan again")
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
	firstKept := clitest.SnapKeptState(t, r, "", first)
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
	firstKept.Check(t, r, "", "after removing the adopted tree")
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
	before := clitest.SnapKeptState(t, r, id, path)
	a := clitest.Apply(t, r, file, 3)
	if o := clitest.ApplyOutcome(t, a, id); o.Outcome != "stale" || o.Refusal == nil || o.Refusal.Code != "stale" {
		t.Errorf("apply after a new commit: %+v, want stale", o)
	}
	before.Check(t, r, id, "after apply")
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
	clitest.KeptThrough(t, r, id, path, "ignored-files", "untracked-files")

	s := clitest.ShowRecord(t, r, id)
	if s.Observation == nil {
		t.Fatal("show has no observation")
	}
	st := s.Observation.Status
	if got, want := clitest.Sorted(st.Ignored), []string{"build/", "db/local.secret"}; !slices.Equal(got, want) {
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
	unique := clitest.Unique(t, r, path, base)
	s := clitest.ShowRecord(t, r, id)
	if s.Verdict == nil || s.Verdict.Action != "remove" || s.Verdict.Proof == nil || s.Verdict.Proof.Kind != "squash-merged" {
		t.Fatalf("show verdict %+v", s.Verdict)
	}
	if got := clitest.Sorted(s.Verdict.Proof.Commits); !slices.Equal(got, unique) || s.Verdict.Proof.Base == "" || s.Verdict.Proof.Tip == "" {
		t.Errorf("show proof %+v, want commits %v with tip and base", s.Verdict.Proof, unique)
	}
	human := clitest.MustCustody(t, r, 0, "show", id).Stdout
	if !strings.Contains(human, "proof: squash-merged") {
		t.Errorf("show (human) does not name the proof:\n%s", human)
	}
}
