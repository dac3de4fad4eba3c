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
