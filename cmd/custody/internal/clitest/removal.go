package clitest

// The steps of a removal, each by the binary: init, finish, plan to a
// file, apply it, and the checks of a verified removal.

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
)

// InitRepo makes a fixture repository with custody initialized.
func InitRepo(t *testing.T) *fixtures.Repo {
	t.Helper()
	r := fixtures.New(t, fixtures.Options{})
	MustCustody(t, r, 0, "init")
	return r
}

// Finish finishes id.
func Finish(t testing.TB, r *fixtures.Repo, id string) {
	t.Helper()
	MustCustody(t, r, 0, "finish", id)
}

// PlanFile makes an empty file for a plan beside the repository and
// returns its path.
func PlanFile(t testing.TB, r *fixtures.Repo) string {
	t.Helper()
	f, err := os.CreateTemp(r.Root, "plan-*.json")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	return f.Name()
}

// PlanNow writes a plan file and returns the plan and the file. want is
// the exit code plan must give (0: a plan was made, whatever it keeps).
func PlanNow(t testing.TB, r *fixtures.Repo, want int) (machine.Plan, string) {
	t.Helper()
	file := PlanFile(t, r)
	res := MustCustody(t, r, want, "plan", "-o", file, "--json")
	return DecodeResult[machine.Plan](t, res, "plan"), file
}

// PlanAny is PlanNow that tolerates an exit other than 0 (it is still
// 0 or 3, and plan's result is decoded either way).
func PlanAny(t testing.TB, r *fixtures.Repo) (machine.Plan, string) {
	t.Helper()
	file := PlanFile(t, r)
	res := Custody(t, r, "plan", "-o", file, "--json")
	if res.Code != 0 && res.Code != 3 {
		t.Fatalf("plan: %s", res)
	}
	return DecodeResult[machine.Plan](t, res, "plan"), file
}

// Apply applies file with extra environment and requires exit want.
func Apply(t testing.TB, r *fixtures.Repo, file string, want int, env ...string) steps.ApplyResult {
	t.Helper()
	res := RunBin(t, custodyBin, r, r.Dir, env, "apply", file, "--json")
	if res.Code != want {
		t.Fatalf("apply %s: want exit %d, got\n%s", file, want, res)
	}
	return DecodeResult[steps.ApplyResult](t, res, "apply")
}

// RecordState returns the state of record id ("" when there is none).
func RecordState(t testing.TB, r *fixtures.Repo, id string) string {
	t.Helper()
	for _, rec := range ListRecords(t, r, true) {
		if rec.ID == id {
			return string(rec.State)
		}
	}
	return ""
}

// Registered returns the worktree paths git registers.
func Registered(t testing.TB, r *fixtures.Repo) []string {
	t.Helper()
	var out []string
	for _, l := range strings.Split(r.Git("worktree", "list", "--porcelain"), "\n") {
		if p, ok := strings.CutPrefix(l, "worktree "); ok {
			out = append(out, p)
		}
	}
	return out
}

// PathEnv is the PATH entry that puts dir before the usual PATH.
func PathEnv(dir string) string {
	return "PATH=" + dir + string(os.PathListSeparator) + os.Getenv("PATH")
}

// AssertRemoved checks a verified removal: path absent (ENOENT), not
// registered, admin entry gone, record tombstoned; the branch is deleted
// when branchGone, else it must still exist.
func AssertRemoved(t testing.TB, r *fixtures.Repo, id, path string, branchGone bool) {
	t.Helper()
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s: lstat says %v, want ENOENT", path, err)
	}
	if slices.Contains(Registered(t, r), path) {
		t.Errorf("git still registers %s", path)
	}
	if _, err := os.Lstat(filepath.Join(r.Dir, ".git", "worktrees", filepath.Base(path))); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("admin entry of %s still exists (%v)", path, err)
	}
	tip := r.BranchTip("custody/" + id)
	if branchGone && tip != "" {
		t.Errorf("branch custody/%s still exists at %s", id, tip)
	}
	if !branchGone && tip == "" {
		t.Errorf("branch custody/%s was deleted", id)
	}
	if st := RecordState(t, r, id); st != "tombstoned" {
		t.Errorf("record %s is %q, want tombstoned", id, st)
	}
}

// Removable makes a tree whose one commit is published on origin (branch
// pub/<name>), and finishes it.
func Removable(t testing.TB, r *fixtures.Repo, name string) (id, path string) {
	t.Helper()
	id, path = NewTree(t, r, name)
	r.Commit(path, name+".txt", "work of "+name+"\n")
	r.Push(path, "pub/"+name)
	Finish(t, r, id)
	return id, path
}

// RemoveNow plans (id must be removed with a proof of kind) and applies.
func RemoveNow(t testing.TB, r *fixtures.Repo, id, kind string) machine.PlanItem {
	t.Helper()
	plan, file := PlanNow(t, r, 0)
	it := PlanItem(t, plan, id)
	if it.Action != "remove" || it.Proof == nil || string(it.Proof.Kind) != kind {
		t.Fatalf("%s: action %s proof %+v, want remove with a %s proof (refusals %+v)", id, it.Action, it.Proof, kind, it.Refusals)
	}
	a := Apply(t, r, file, 0)
	if o := ApplyOutcome(t, a, id); o.Outcome != "removed" {
		t.Fatalf("apply %s: %+v", id, o)
	}
	return it
}
