package clitest

// Records and trees as list --json shows them, and the checks that a tree
// was removed or kept untouched, for the hazard tables and content tests.

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/output"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
	"github.com/google/go-cmp/cmp"
)

// InitRepoWith makes a fixture repository and runs custody init in it.
func InitRepoWith(t *testing.T, opt fixtures.Options) *fixtures.Repo {
	t.Helper()
	r := fixtures.New(t, opt)
	MustCustody(t, r, 0, "init")
	return r
}

// PlanTo runs plan -o file --json and returns the plan file, which must
// parse and match the printed plan.
func PlanTo(t testing.TB, r *fixtures.Repo, file string, want int) machine.Plan {
	t.Helper()
	res := MustCustody(t, r, want, "plan", "-o", file, "--json")
	p := DecodeResult[machine.Plan](t, res, "plan")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	fromFile, err := machine.ParsePlan(b)
	if err != nil {
		t.Fatalf("plan file %s: %v", file, err)
	}
	if fromFile.Format != "custody.plan/1" || fromFile.Repository.ID == "" || len(fromFile.Items) != len(p.Items) {
		t.Fatalf("plan file %s does not match the printed plan:\n%s", file, b)
	}
	return fromFile
}

// ApplyFile runs apply file --json and returns the decoded result.
func ApplyFile(t testing.TB, r *fixtures.Repo, file string, want int) steps.ApplyResult {
	t.Helper()
	res := MustCustody(t, r, want, "apply", file, "--json")
	return DecodeResult[steps.ApplyResult](t, res, "apply")
}

// Records returns list --all --json keyed by id.
func Records(t testing.TB, r *fixtures.Repo) map[string]output.ListEntry {
	t.Helper()
	m := map[string]output.ListEntry{}
	for _, rec := range ListRecords(t, r, true) {
		m[rec.ID] = rec
	}
	return m
}

// State returns the state of record id in list --all --json, failing the
// test when there is none.
func State(t testing.TB, r *fixtures.Repo, id string) string {
	t.Helper()
	rec, ok := Records(t, r)[id]
	if !ok {
		t.Fatalf("no record %s", id)
	}
	return string(rec.State)
}

// Worktrees returns the paths git registers, main checkout first.
func Worktrees(t testing.TB, r *fixtures.Repo) []string {
	t.Helper()
	var out []string
	for _, l := range strings.Split(r.Git("worktree", "list", "--porcelain"), "\n") {
		if p, ok := strings.CutPrefix(l, "worktree "); ok {
			out = append(out, p)
		}
	}
	return out
}

// FinishAll finishes ids and requires each to come out finished.
func FinishAll(t testing.TB, r *fixtures.Repo, ids ...string) {
	t.Helper()
	res := MustCustody(t, r, 0, append([]string{"finish", "--json"}, ids...)...)
	out := DecodeResult[ItemsResult[steps.Outcome]](t, res, "finish")
	if len(out.Items) != len(ids) {
		t.Fatalf("finish %v: %+v", ids, out.Items)
	}
	for _, it := range out.Items {
		if it.Outcome != "finished" || it.State != "finished" {
			t.Fatalf("finish %s: %+v", it.ID, it)
		}
	}
}

// AssertRemovedWithBranch checks every sign of a verified removal, its
// branch deleted too.
func AssertRemovedWithBranch(t testing.TB, r *fixtures.Repo, id, path string) {
	t.Helper()
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s: lstat says %v, want ENOENT", path, err)
	}
	if slices.Contains(Worktrees(t, r), path) {
		t.Errorf("git still registers %s", path)
	}
	if _, err := os.Lstat(filepath.Join(r.Dir, ".git", "worktrees", id)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("admin dir of %s still exists (%v)", id, err)
	}
	if tip := r.BranchTip("custody/" + id); tip != "" {
		t.Errorf("branch custody/%s still exists at %s", id, tip)
	}
	if st := State(t, r, id); st != "tombstoned" {
		t.Errorf("record %s is %s, want tombstoned", id, st)
	}
}

// KeptSnap is everything about a kept tree that must not change.
type KeptSnap struct {
	Tree, Admin fixtures.Snapshot
	Refs        string
}

// SnapKept takes everything about tree id at path that must not change
// while it is kept.
func SnapKept(r *fixtures.Repo, id, path string) KeptSnap {
	return KeptSnap{Tree: r.Snap(path), Admin: r.Snap(filepath.Join(r.Dir, ".git", "worktrees", id)), Refs: r.Refs()}
}

// AssertKept checks the tree, its git admin dir and its registration
// are unchanged since before; wantRefs is the expected ref listing.
func AssertKept(t testing.TB, r *fixtures.Repo, id, path string, before KeptSnap, wantRefs string) {
	t.Helper()
	if d := before.Tree.Diff(r.Snap(path)); d != "" {
		t.Errorf("kept tree %s changed:\n%s", path, d)
	}
	if d := before.Admin.Diff(r.Snap(filepath.Join(r.Dir, ".git", "worktrees", id))); d != "" {
		t.Errorf("git admin dir of kept tree %s changed:\n%s", id, d)
	}
	if got := r.Refs(); got != wantRefs {
		t.Errorf("refs changed:\n%s", cmp.Diff(wantRefs, got))
	}
	if !slices.Contains(Worktrees(t, r), path) {
		t.Errorf("kept tree %s is no longer registered", path)
	}
}
