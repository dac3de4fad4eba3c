package main

// The hazard tables, end to end: every hazard fixtures.Hazards and
// fixtures.MoreHazards build is put into a finished, otherwise removable
// tree beside a removable neighbour, against real git, and custody must
// keep it with exactly its refusal codes while the neighbour goes. They stay
// in Go because they loop over the fixtures package's generated states (the
// one definition of each hazard, which a script cannot call); the CLI
// contract itself (exit codes, the kept lines and their retry line, --json
// envelopes, bad input) is in testdata/script/*.txtar, with a
// plan_kept_<hazard>.txtar for the human form of a representative few.
// Every helper here is prefixed e2e so it cannot collide with the other
// test files of this package.

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
func Records(t testing.TB, r *fixtures.Repo) map[string]listEntry {
	t.Helper()
	m := map[string]listEntry{}
	for _, rec := range ListRecords(t, r, true) {
		m[rec.ID] = rec
	}
	return m
}

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

// e2eMerged makes a tree whose one commit is pushed to branch on origin,
// and finishes it.
func e2eMerged(t testing.TB, r *fixtures.Repo, name, branch string) (id, path string) {
	t.Helper()
	id, path = NewTree(t, r, name)
	r.Commit(path, name+".txt", "work of "+name+"\n")
	r.Push(path, branch)
	FinishAll(t, r, id)
	return id, path
}

// e2eFresh makes a tree with no commits of its own (HEAD == main, which
// origin has) and finishes it.
// AssertRemovedWithBranch checks every sign of a verified removal.
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
	tree, admin fixtures.Snapshot
	refs        string
}

func SnapKept(r *fixtures.Repo, id, path string) KeptSnap {
	return KeptSnap{tree: r.Snap(path), admin: r.Snap(filepath.Join(r.Dir, ".git", "worktrees", id)), refs: r.Refs()}
}

// AssertKept checks the tree, its git admin dir and its registration
// are unchanged since before; wantRefs is the expected ref listing.
func AssertKept(t testing.TB, r *fixtures.Repo, id, path string, before KeptSnap, wantRefs string) {
	t.Helper()
	if d := before.tree.Diff(r.Snap(path)); d != "" {
		t.Errorf("kept tree %s changed:\n%s", path, d)
	}
	if d := before.admin.Diff(r.Snap(filepath.Join(r.Dir, ".git", "worktrees", id))); d != "" {
		t.Errorf("git admin dir of kept tree %s changed:\n%s", id, d)
	}
	if got := r.Refs(); got != wantRefs {
		t.Errorf("refs changed:\n%s", cmp.Diff(wantRefs, got))
	}
	if !slices.Contains(Worktrees(t, r), path) {
		t.Errorf("kept tree %s is no longer registered", path)
	}
}

// e2eDropRef removes the line naming ref from a Refs listing.
func e2eDropRef(refs, ref string) string {
	var out []string
	for _, l := range strings.Split(refs, "\n") {
		if !strings.HasSuffix(l, " "+ref) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func TestE2EHazardsAreKept(t *testing.T) {
	t.Parallel()
	for _, h := range fixtures.Hazards() {
		t.Run(h.Name, func(t *testing.T) {
			t.Parallel()
			r := InitRepoWith(t, fixtures.Options{})
			// A tree that is removable but for the hazard: its own
			// commit is published on a topic branch.
			id, path := e2eMerged(t, r, "hazard", "topic/hazard")
			// A removable neighbour, in the same plan.
			okID, okPath := e2eMerged(t, r, "neighbour", "topic/neighbour")
			h.Make(r, path)
			before := SnapKept(r, id, path)

			file := filepath.Join(r.Root, "p.json")
			p := PlanTo(t, r, file, 0) // a kept tree is the plan's result: exit 0
			it := PlanItem(t, p, id)
			if it.Action != "keep" || it.Refusal == nil {
				t.Fatalf("hazard tree not kept: %+v", it)
			}
			if string(it.Refusal.Code) != h.Code {
				t.Errorf("refusal code %q, want %q (%s)", it.Refusal.Code, h.Code, it.Refusal.Message)
			}
			codes := RefusalCodes(it.Refusals)
			if !cmp.Equal(codes, []string{h.Code}) {
				t.Errorf("refusals %v, want exactly [%s]", codes, h.Code)
			}
			if it.Refusal.Path != path || it.Refusal.Message == "" || it.Refusal.Retry == "" {
				t.Errorf("refusal does not name the path, a reason and a retry: %+v", it.Refusal)
			}
			if it.Proof != nil {
				t.Errorf("kept item carries a proof: %v", it.Proof)
			}
			if n := PlanItem(t, p, okID); n.Action != "remove" {
				t.Fatalf("neighbour not removable: %+v", n)
			}
			// plan wrote nothing.
			AssertKept(t, r, id, path, before, before.refs)

			a := ApplyFile(t, r, file, 0)
			if len(a.Items) != 1 || a.Items[0].ID != okID || a.Items[0].Outcome != "removed" {
				t.Errorf("apply acted on %+v, want only %s removed", a.Items, okID)
			}
			if a.Kept != 1 {
				t.Errorf("apply kept %d, want 1", a.Kept)
			}
			AssertRemovedWithBranch(t, r, okID, okPath)
			AssertKept(t, r, id, path, before, e2eDropRef(before.refs, "refs/heads/custody/"+okID))
			if st := State(t, r, id); st != "finished" {
				t.Errorf("hazard record is %s, want finished", st)
			}
		})
	}
}

// TestE2ENoRemote: with no remote at all nothing can prove work published;
// plan (and apply) refuse as a whole with no-remote, exit 1, and change
// nothing.
// TestE2ERemoteRemovedAfterPlan: a plan made while origin existed is not
// carried out once the repository has no remote.
// TestE2EEnvelopeCommandNames checks the envelope's "command" is the
// command's name (DESIGN §9: "command":"plan"), not kong's usage syntax.
// TestE2EApplyItemsIsAnArray checks apply's result lists its items as a
// JSON array even when the plan removes nothing (list and resume do).
// TestE2EChdirRelativePlanFile: -C DIR is documented as "Run as if custody
// was started in DIR", so a relative plan file is DIR's, as with git -C.
// TestE2EMoreHazardsAreKept: states beyond the core hazards (the tree
// vanished or was replaced, ownership evidence broke, an operation or
// hidden state) are kept with their codes, untouched, while a removable
// neighbour in the same plan goes.
func TestE2EMoreHazardsAreKept(t *testing.T) {
	t.Parallel()
	for _, h := range fixtures.MoreHazards() {
		t.Run(h.Name, func(t *testing.T) {
			t.Parallel()
			r := InitRepoWith(t, fixtures.Options{})
			id, path := e2eMerged(t, r, "hazard", "topic/hazard")
			okID, okPath := e2eMerged(t, r, "neighbour", "topic/neighbour")
			h.Make(r, path)
			snap := func() fixtures.Snapshot {
				if h.Gone {
					if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
						t.Errorf("%s: %v, want absent", path, err)
					}
					return nil
				}
				s := r.Snap(path)
				if real, err := filepath.EvalSymlinks(path); err == nil && real != path {
					for k, v := range r.Snap(real) {
						s["->"+k] = v
					}
				}
				return s
			}
			admin := filepath.Join(r.Dir, ".git", "worktrees", id)
			tree, adm, refs := snap(), r.Snap(admin), r.Refs()

			file := filepath.Join(r.Root, "p.json")
			p := PlanTo(t, r, file, 0)
			it := PlanItem(t, p, id)
			codes := RefusalCodes(it.Refusals)
			if it.Action != "keep" || it.Refusal == nil || string(it.Refusal.Code) != h.Codes[0] || !cmp.Equal(codes, h.Codes) {
				t.Errorf("hazard tree: action %s, refusals %v, want keep with %v", it.Action, codes, h.Codes)
			}
			if n := PlanItem(t, p, okID); n.Action != "remove" {
				t.Fatalf("neighbour not removable: %+v", n)
			}
			a := ApplyFile(t, r, file, 0)
			if len(a.Items) != 1 || a.Items[0].ID != okID || a.Items[0].Outcome != "removed" {
				t.Errorf("apply acted on %+v, want only %s removed", a.Items, okID)
			}
			AssertRemovedWithBranch(t, r, okID, okPath)
			if d := tree.Diff(snap()); d != "" {
				t.Errorf("kept tree changed:\n%s", d)
			}
			if d := adm.Diff(r.Snap(admin)); d != "" {
				t.Errorf("kept tree's admin dir changed:\n%s", d)
			}
			if got, want := r.Refs(), e2eDropRef(refs, "refs/heads/custody/"+okID); got != want {
				t.Errorf("refs changed:\n%s", cmp.Diff(want, got))
			}
			if !slices.Contains(Worktrees(t, r), path) {
				t.Errorf("kept tree %s is no longer registered", path)
			}
			if st := State(t, r, id); st != "finished" {
				t.Errorf("hazard record is %s, want finished", st)
			}
		})
	}
}
