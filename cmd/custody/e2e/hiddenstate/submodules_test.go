package hiddenstate

// Submodules and embedded repositories, end to end: a tree whose
// submodule has changes, untracked files or a commit its remote lacks
// (deinitialized or not), or whose embedded repository's commit is on no
// remote, is kept; one whose submodule is clean and pushed, which git
// will not remove without --force, stays whole.

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/steps"
)

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
