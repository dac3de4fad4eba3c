package safety

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
)

// TestRemovalBlockedMidway: a file the quarantine cannot delete (made
// immutable with chattr +i, so even root gets "operation not permitted")
// stops the removal part way. custody puts the tree back at its path with
// every file it had deleted restored and its .git intact, so git still
// knows it and status is clean; the item is removal-failed naming the file
// and the reason, not "appeared or changed"; the record is finished again,
// and once the file can be deleted the next plan and apply remove the tree.
func TestRemovalBlockedMidway(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.Removable(t, r, "blocked")
	// Files sorted after the blocked one and before it: some are deleted
	// before the failure, whichever order the deletion takes.
	for _, n := range []string{"a.txt", "m.txt", "z.txt"} {
		r.Commit(path, n, n+"\n")
	}
	r.Push(path, "pub/blocked")
	stuck := filepath.Join(path, "m.txt")
	if out, err := exec.Command("chattr", "+i", stuck).CombinedOutput(); err != nil {
		t.Skipf("chattr +i is not available here (%v: %s)", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() { _ = exec.Command("chattr", "-i", stuck).Run() })
	files := r.GitIn(path, "ls-files")
	_, file := clitest.PlanNow(t, r, 0)
	res := clitest.RunBin(t, clitest.Bin(), r, r.Dir, nil, "apply", file, "--json")
	if res.Code != 3 {
		t.Fatalf("apply: want exit 3, got\n%s", res)
	}
	o := clitest.ApplyOutcome(t, clitest.DecodeResult[steps.ApplyResult](t, res, "apply"), id)
	if o.Refusal == nil || o.Refusal.Code != machine.CodeRemovalFailed || !strings.Contains(o.Refusal.Message, "m.txt") ||
		!strings.Contains(o.Refusal.Message, "operation not permitted") || strings.Contains(o.Refusal.Message, "appeared or changed") {
		t.Fatalf("apply outcome %+v, want removal-failed naming m.txt and why it could not be deleted", o)
	}
	for _, f := range strings.Fields(files) {
		if _, err := os.Lstat(filepath.Join(path, f)); err != nil {
			t.Errorf("tracked file %s is missing after the blocked removal: %v", f, err)
		}
	}
	if st := r.GitIn(path, "status", "--porcelain", "--ignored"); st != "" {
		t.Errorf("the tree is not intact after the blocked removal:\n%s", st)
	}
	if st := clitest.RecordState(t, r, id); st != "finished" {
		t.Errorf("record is %s, want finished", st)
	}
	if out, err := exec.Command("chattr", "-i", stuck).CombinedOutput(); err != nil {
		t.Fatalf("chattr -i: %v %s", err, out)
	}
	clitest.RemoveNow(t, r, id, "ancestry")
	clitest.AssertRemoved(t, r, id, path, true)
}

// TestTreeWithoutGitFile: a tree whose .git file was deleted by hand is
// not observed through the repository that encloses it (git run there
// would read the main checkout): plan keeps it with status-failed saying
// its .git is missing, never reports the main checkout's files as its own,
// and apply leaves every byte.
func TestTreeWithoutGitFile(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.Removable(t, r, "nogit")
	r.WriteFile(path, "notes.txt", "only here\n")
	if err := os.Remove(filepath.Join(path, ".git")); err != nil {
		t.Fatal(err)
	}
	p, file := clitest.PlanAny(t, r)
	it := clitest.PlanItem(t, p, id)
	if it.Action != "keep" || !clitest.HasCode(it.Refusals, "status-failed") {
		t.Fatalf("action %s, refusals %+v; want keep with status-failed", it.Action, it.Refusals)
	}
	for _, rf := range it.Refusals {
		if strings.Contains(rf.Message, ".worktrees/") && rf.Code == machine.CodeIgnoredFiles {
			t.Errorf("the main checkout's ignored files were reported as the tree's: %+v", rf)
		}
	}
	clitest.Custody(t, r, "apply", file)
	if b, err := os.ReadFile(filepath.Join(path, "notes.txt")); err != nil || string(b) != "only here\n" {
		t.Errorf("notes.txt after apply: %q, %v", b, err)
	}
}
