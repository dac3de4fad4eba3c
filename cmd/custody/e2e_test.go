package main

// End-to-end tests: the custody binary against real git repositories built
// by fixtures/. Every helper here is prefixed e2e so it cannot collide with
// the other test files of this package.

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
	"github.com/google/go-cmp/cmp"
)

var e2eHex40 = regexp.MustCompile(`^[0-9a-f]{40}$`)

// e2eRepo makes a fixture repository and runs custody init in it.
func e2eRepo(t *testing.T, opt fixtures.Options) *fixtures.Repo {
	t.Helper()
	r := fixtures.New(t, opt)
	mustCustody(t, r, 0, "init")
	return r
}

// e2ePlan runs plan -o file --json and returns the plan file, which must
// parse and match the printed plan.
func e2ePlan(t testing.TB, r *fixtures.Repo, file string, want int) machine.Plan {
	t.Helper()
	res := mustCustody(t, r, want, "plan", "-o", file, "--json")
	p := decodeResult[machine.Plan](t, res, "plan")
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

// e2eApply runs apply file --json and returns the decoded result.
func e2eApply(t testing.TB, r *fixtures.Repo, file string, want int, extra ...string) steps.ApplyResult {
	t.Helper()
	res := mustCustody(t, r, want, append([]string{"apply", file, "--json"}, extra...)...)
	return decodeResult[steps.ApplyResult](t, res, "apply")
}

// e2eRecords returns list --all --json keyed by id.
func e2eRecords(t testing.TB, r *fixtures.Repo) map[string]listEntry {
	t.Helper()
	m := map[string]listEntry{}
	for _, rec := range listRecords(t, r, true) {
		m[rec.ID] = rec
	}
	return m
}

func e2eState(t testing.TB, r *fixtures.Repo, id string) string {
	t.Helper()
	rec, ok := e2eRecords(t, r)[id]
	if !ok {
		t.Fatalf("no record %s", id)
	}
	return string(rec.State)
}

// e2eWorktrees returns the paths git registers, main checkout first.
func e2eWorktrees(t testing.TB, r *fixtures.Repo) []string {
	t.Helper()
	var out []string
	for _, l := range strings.Split(r.Git("worktree", "list", "--porcelain"), "\n") {
		if p, ok := strings.CutPrefix(l, "worktree "); ok {
			out = append(out, p)
		}
	}
	return out
}

// e2eFinish finishes ids and requires each to come out finished.
func e2eFinish(t testing.TB, r *fixtures.Repo, ids ...string) {
	t.Helper()
	res := mustCustody(t, r, 0, append([]string{"finish", "--json"}, ids...)...)
	out := decodeResult[itemsResult[steps.Outcome]](t, res, "finish")
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
func e2eMerged(t testing.TB, r *fixtures.Repo, name, branch string) (id, path, head string) {
	t.Helper()
	id, path = newTree(t, r, name)
	head = r.Commit(path, name+".txt", "work of "+name+"\n")
	r.Push(path, branch)
	e2eFinish(t, r, id)
	return id, path, head
}

// e2eFresh makes a tree with no commits of its own (HEAD == main, which
// origin has) and finishes it.
func e2eFresh(t testing.TB, r *fixtures.Repo, name string) (id, path string) {
	t.Helper()
	id, path = newTree(t, r, name)
	e2eFinish(t, r, id)
	return id, path
}

// e2eAssertRemoved checks every sign of a verified removal.
func e2eAssertRemoved(t testing.TB, r *fixtures.Repo, id, path string) {
	t.Helper()
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s: lstat says %v, want ENOENT", path, err)
	}
	if slices.Contains(e2eWorktrees(t, r), path) {
		t.Errorf("git still registers %s", path)
	}
	if _, err := os.Lstat(filepath.Join(r.Dir, ".git", "worktrees", id)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("admin dir of %s still exists (%v)", id, err)
	}
	if tip := r.BranchTip("custody/" + id); tip != "" {
		t.Errorf("branch custody/%s still exists at %s", id, tip)
	}
	if st := e2eState(t, r, id); st != "tombstoned" {
		t.Errorf("record %s is %s, want tombstoned", id, st)
	}
}

// e2eKept is everything about a kept tree that must not change.
type e2eKept struct {
	tree, admin fixtures.Snapshot
	refs        string
}

func e2eSnapKept(r *fixtures.Repo, id, path string) e2eKept {
	return e2eKept{tree: r.Snap(path), admin: r.Snap(filepath.Join(r.Dir, ".git", "worktrees", id)), refs: r.Refs()}
}

// e2eAssertKept checks the tree, its git admin dir and its registration
// are unchanged since before; wantRefs is the expected ref listing.
func e2eAssertKept(t testing.TB, r *fixtures.Repo, id, path string, before e2eKept, wantRefs string) {
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
	if !slices.Contains(e2eWorktrees(t, r), path) {
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

func TestE2EMergedTreeIsRemoved(t *testing.T) {
	t.Parallel()
	r := e2eRepo(t, fixtures.Options{})
	id, path, head := e2eMerged(t, r, "feature", "main")
	if got := r.GitIn(r.Remote, "rev-parse", "refs/heads/main"); got != head {
		t.Fatalf("origin main is %s, want the tree's commit %s", got, head)
	}
	file := filepath.Join(r.Root, "p.json")
	p := e2ePlan(t, r, file, 0)
	it := planItem(t, p, id)
	if it.Action != "remove" || it.Refusal != nil || it.Head != head || it.Fingerprint == "" || it.Proof == nil {
		t.Fatalf("plan item: %+v", it)
	}
	a := e2eApply(t, r, file, 0)
	if o := applyOutcome(t, a, id); o.Outcome != "removed" || o.Refusal != nil {
		t.Fatalf("apply: %+v", o)
	}
	e2eAssertRemoved(t, r, id, path)
	// Only the main checkout is left.
	if wts := e2eWorktrees(t, r); !cmp.Equal(wts, []string{r.Dir}) {
		t.Errorf("worktrees after apply: %v", wts)
	}
	// list without --all no longer shows it.
	if recs := listRecords(t, r, false); len(recs) != 0 {
		t.Errorf("list shows tombstoned records: %+v", recs)
	}
	// The published commit is still on origin.
	if got := r.GitIn(r.Remote, "rev-parse", "refs/heads/main"); got != head {
		t.Errorf("origin main moved to %s", got)
	}
}

func TestE2ETreeWithoutCommitsIsRemoved(t *testing.T) {
	t.Parallel()
	r := e2eRepo(t, fixtures.Options{})
	id, path := e2eFresh(t, r, "empty")
	if h := r.Head(path); h != r.Head(r.Dir) {
		t.Fatalf("fresh tree HEAD %s != main %s", h, r.Head(r.Dir))
	}
	file := filepath.Join(r.Root, "p.json")
	p := e2ePlan(t, r, file, 0)
	if it := planItem(t, p, id); it.Action != "remove" {
		t.Fatalf("plan item: %+v", it)
	}
	a := e2eApply(t, r, file, 0)
	if o := applyOutcome(t, a, id); o.Outcome != "removed" {
		t.Fatalf("apply: %+v", o)
	}
	e2eAssertRemoved(t, r, id, path)
}

func TestE2EHazardsAreKept(t *testing.T) {
	t.Parallel()
	for _, h := range fixtures.Hazards() {
		t.Run(h.Name, func(t *testing.T) {
			t.Parallel()
			r := e2eRepo(t, fixtures.Options{})
			// A tree that is removable but for the hazard: its own
			// commit is published on a topic branch.
			id, path, _ := e2eMerged(t, r, "hazard", "topic/hazard")
			// A removable neighbour, in the same plan.
			okID, okPath, _ := e2eMerged(t, r, "neighbour", "topic/neighbour")
			h.Make(r, path)
			before := e2eSnapKept(r, id, path)

			file := filepath.Join(r.Root, "p.json")
			p := e2ePlan(t, r, file, 3) // a finished tree is kept: exit 3
			it := planItem(t, p, id)
			if it.Action != "keep" || it.Refusal == nil {
				t.Fatalf("hazard tree not kept: %+v", it)
			}
			if string(it.Refusal.Code) != h.Code {
				t.Errorf("refusal code %q, want %q (%s)", it.Refusal.Code, h.Code, it.Refusal.Message)
			}
			codes := refusalCodes(it.Refusals)
			if !cmp.Equal(codes, []string{h.Code}) {
				t.Errorf("refusals %v, want exactly [%s]", codes, h.Code)
			}
			if it.Refusal.Path != path || it.Refusal.Message == "" || it.Refusal.Retry == "" {
				t.Errorf("refusal does not name the path, a reason and a retry: %+v", it.Refusal)
			}
			if it.Proof != nil {
				t.Errorf("kept item carries a proof: %v", it.Proof)
			}
			if n := planItem(t, p, okID); n.Action != "remove" {
				t.Fatalf("neighbour not removable: %+v", n)
			}
			// plan wrote nothing.
			e2eAssertKept(t, r, id, path, before, before.refs)

			a := e2eApply(t, r, file, 0)
			if len(a.Items) != 1 || a.Items[0].ID != okID || a.Items[0].Outcome != "removed" {
				t.Errorf("apply acted on %+v, want only %s removed", a.Items, okID)
			}
			if a.Kept != 1 {
				t.Errorf("apply kept %d, want 1", a.Kept)
			}
			e2eAssertRemoved(t, r, okID, okPath)
			e2eAssertKept(t, r, id, path, before, e2eDropRef(before.refs, "refs/heads/custody/"+okID))
			if st := e2eState(t, r, id); st != "finished" {
				t.Errorf("hazard record is %s, want finished", st)
			}
		})
	}
}

func TestE2EHazardAloneApplyTouchesNothing(t *testing.T) {
	t.Parallel()
	r := e2eRepo(t, fixtures.Options{})
	id, path := e2eFresh(t, r, "dirty")
	r.WriteFile(path, "README", "edited, never committed\n")
	before := e2eSnapKept(r, id, path)
	state := filepath.Join(r.Dir, ".git", "custody", "state.db")
	stBefore, err := os.ReadFile(state)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(r.Root, "p.json")
	p := e2ePlan(t, r, file, 3)
	if it := planItem(t, p, id); it.Action != "keep" || it.Refusal.Code != "tracked-changes" {
		t.Fatalf("plan item: %+v", it)
	}
	if st, _ := os.ReadFile(state); !bytes.Equal(st, stBefore) {
		t.Errorf("plan changed the state file")
	}
	a := e2eApply(t, r, file, 0)
	if len(a.Items) != 0 || a.Kept != 1 {
		t.Errorf("apply of a keep-only plan: %+v", a)
	}
	e2eAssertKept(t, r, id, path, before, before.refs)
	if st, _ := os.ReadFile(state); !bytes.Equal(st, stBefore) {
		t.Errorf("apply of a keep-only plan changed the state file")
	}
	// Human plan output says why it is kept and what to do.
	res := mustCustody(t, r, 3, "plan")
	for _, want := range []string{"keep", id, "[tracked-changes]", "to retry:"} {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("human plan lacks %q:\n%s", want, res.Stdout)
		}
	}
}

func TestE2EUnreachableRemote(t *testing.T) {
	t.Parallel()
	r := e2eRepo(t, fixtures.Options{})
	id, path, _ := e2eMerged(t, r, "merged", "main")
	r.Git("remote", "set-url", "origin", "/nonexistent/x.git")
	before := e2eSnapKept(r, id, path)
	file := filepath.Join(r.Root, "p.json")
	p := e2ePlan(t, r, file, 3)
	it := planItem(t, p, id)
	if it.Action != "keep" || it.Refusal == nil || it.Refusal.Code != "remote-unavailable" {
		t.Fatalf("plan item: %+v", it)
	}
	if !strings.Contains(it.Refusal.Message, "origin") {
		t.Errorf("refusal does not name the remote: %+v", it.Refusal)
	}
	a := e2eApply(t, r, file, 0)
	if len(a.Items) != 0 {
		t.Errorf("apply acted: %+v", a.Items)
	}
	e2eAssertKept(t, r, id, path, before, before.refs)
}

// TestE2ENoRemote: with no remote at all nothing can prove work published;
// plan (and apply) refuse as a whole with no-remote, exit 1, and change
// nothing.
func TestE2ENoRemote(t *testing.T) {
	t.Parallel()
	r := e2eRepo(t, fixtures.Options{NoRemote: true})
	id, path := e2eFresh(t, r, "lonely")
	before := e2eSnapKept(r, id, path)
	file := filepath.Join(r.Root, "p.json")
	res := mustCustody(t, r, 1, "plan", "-o", file, "--json")
	body := decodeError(t, res)
	if body.Code != "no-remote" || body.Path != r.Dir || !strings.Contains(body.Message, "git remote add") {
		t.Errorf("plan without a remote: %+v", body)
	}
	if _, err := os.Lstat(file); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("plan wrote %s although it failed (%v)", file, err)
	}
	res = mustCustody(t, r, 1, "plan")
	if res.Stdout != "" || !strings.Contains(res.Stderr, "[no-remote]") || !strings.Contains(res.Stderr, r.Dir) {
		t.Errorf("human plan without a remote:\n%s", res)
	}
	e2eAssertKept(t, r, id, path, before, before.refs)
	if st := e2eState(t, r, id); st != "finished" {
		t.Errorf("record is %s", st)
	}
}

// TestE2ERemoteRemovedAfterPlan: a plan made while origin existed is not
// carried out once the repository has no remote.
func TestE2ERemoteRemovedAfterPlan(t *testing.T) {
	t.Parallel()
	r := e2eRepo(t, fixtures.Options{})
	id, path, _ := e2eMerged(t, r, "gone", "topic/gone")
	file := filepath.Join(r.Root, "p.json")
	if it := planItem(t, e2ePlan(t, r, file, 0), id); it.Action != "remove" {
		t.Fatalf("plan: %+v", it)
	}
	r.Git("remote", "remove", "origin")
	before := e2eSnapKept(r, id, path)
	res := mustCustody(t, r, 1, "apply", file, "--json")
	if body := decodeError(t, res); body.Code != "no-remote" {
		t.Errorf("apply without a remote: %+v", body)
	}
	e2eAssertKept(t, r, id, path, before, before.refs)
	if st := e2eState(t, r, id); st != "finished" {
		t.Errorf("record is %s", st)
	}
}

func TestE2EStale(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		change func(r *fixtures.Repo, path string)
	}{
		{"Untracked", func(r *fixtures.Repo, path string) { r.WriteFile(path, "late.txt", "written after plan\n") }},
		{"Commit", func(r *fixtures.Repo, path string) { r.Commit(path, "late.txt", "committed after plan\n") }},
		{"Staged", func(r *fixtures.Repo, path string) {
			r.WriteFile(path, "late.txt", "staged after plan\n")
			r.GitIn(path, "add", "late.txt")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := e2eRepo(t, fixtures.Options{})
			aID, aPath, _ := e2eMerged(t, r, "alpha", "topic/alpha")
			bID, bPath, _ := e2eMerged(t, r, "beta", "topic/beta")
			file := filepath.Join(r.Root, "p.json")
			p := e2ePlan(t, r, file, 0)
			if planItem(t, p, aID).Action != "remove" || planItem(t, p, bID).Action != "remove" {
				t.Fatalf("plan: %+v", p.Items)
			}
			tc.change(r, aPath)
			before := e2eSnapKept(r, aID, aPath)

			a := e2eApply(t, r, file, 3)
			o := applyOutcome(t, a, aID)
			if o.Outcome != "stale" || o.Refusal == nil || o.Refusal.Code != "stale" {
				t.Errorf("changed tree: %+v, want stale", o)
			}
			if o.Refusal != nil && (o.Refusal.Path != aPath || o.Refusal.Retry == "") {
				t.Errorf("stale refusal does not name path and retry: %+v", o.Refusal)
			}
			if o := applyOutcome(t, a, bID); o.Outcome != "removed" {
				t.Errorf("other tree: %+v, want removed", o)
			}
			e2eAssertRemoved(t, r, bID, bPath)
			e2eAssertKept(t, r, aID, aPath, before, e2eDropRef(before.refs, "refs/heads/custody/"+bID))
			if st := e2eState(t, r, aID); st != "finished" {
				t.Errorf("stale record is %s, want finished", st)
			}
			// Applying again: the stale one stays stale, the removed one
			// is already done.
			a = e2eApply(t, r, file, 3)
			if o := applyOutcome(t, a, aID); o.Outcome != "stale" {
				t.Errorf("second apply, changed tree: %+v", o)
			}
			if o := applyOutcome(t, a, bID); o.Outcome != "already-done" {
				t.Errorf("second apply, removed tree: %+v", o)
			}
			e2eAssertKept(t, r, aID, aPath, before, e2eDropRef(before.refs, "refs/heads/custody/"+bID))
		})
	}
}

func TestE2EReapplyIsAlreadyDone(t *testing.T) {
	t.Parallel()
	r := e2eRepo(t, fixtures.Options{})
	aID, aPath, _ := e2eMerged(t, r, "one", "topic/one")
	bID, bPath := e2eFresh(t, r, "two")
	file := filepath.Join(r.Root, "p.json")
	e2ePlan(t, r, file, 0)
	a := e2eApply(t, r, file, 0)
	for _, id := range []string{aID, bID} {
		if o := applyOutcome(t, a, id); o.Outcome != "removed" {
			t.Fatalf("first apply %s: %+v", id, o)
		}
	}
	state := filepath.Join(r.Dir, ".git", "custody", "state.db")
	stBefore, _ := os.ReadFile(state)
	refs := r.Refs()
	a = e2eApply(t, r, file, 0)
	if len(a.Items) != 2 {
		t.Fatalf("second apply: %+v", a.Items)
	}
	for _, id := range []string{aID, bID} {
		if o := applyOutcome(t, a, id); o.Outcome != "already-done" || o.Refusal != nil {
			t.Errorf("second apply %s: %+v", id, o)
		}
	}
	e2eAssertRemoved(t, r, aID, aPath)
	e2eAssertRemoved(t, r, bID, bPath)
	if got := r.Refs(); got != refs {
		t.Errorf("re-apply changed refs:\n%s", cmp.Diff(refs, got))
	}
	if st, _ := os.ReadFile(state); !bytes.Equal(st, stBefore) {
		t.Errorf("re-apply changed the state file")
	}
	// Human output too.
	res := mustCustody(t, r, 0, "apply", file)
	if !strings.Contains(res.Stdout, "already-done") || !strings.Contains(res.Stdout, aID) {
		t.Errorf("human re-apply:\n%s", res)
	}
}

func TestE2EPlanFromAnotherRepositoryIsRefused(t *testing.T) {
	t.Parallel()
	a := e2eRepo(t, fixtures.Options{})
	b := e2eRepo(t, fixtures.Options{})
	aID, aPath, _ := e2eMerged(t, a, "in-a", "topic/a")
	bID, bPath, _ := e2eMerged(t, b, "in-b", "topic/b")
	file := filepath.Join(a.Root, "p.json")
	p := e2ePlan(t, a, file, 0)
	if planItem(t, p, aID).Action != "remove" {
		t.Fatalf("plan: %+v", p.Items)
	}
	beforeA, beforeB := e2eSnapKept(a, aID, aPath), e2eSnapKept(b, bID, bPath)
	stPath := filepath.Join(b.Dir, ".git", "custody", "state.db")
	stB, _ := os.ReadFile(stPath)

	res := mustCustody(t, b, 1, "apply", file, "--json")
	body := decodeError(t, res)
	if body.Code != "wrong-repository" {
		t.Fatalf("code %q, want wrong-repository:\n%s", body.Code, res)
	}
	if !strings.Contains(body.Message, p.Repository.ID) || body.Retry == "" {
		t.Errorf("error does not name the plan's repository and a retry: %+v", body)
	}
	e2eAssertKept(t, a, aID, aPath, beforeA, beforeA.refs)
	e2eAssertKept(t, b, bID, bPath, beforeB, beforeB.refs)
	if st, _ := os.ReadFile(stPath); !bytes.Equal(st, stB) {
		t.Errorf("refused apply changed the other repository's state file")
	}
	if e2eState(t, a, aID) != "finished" || e2eState(t, b, bID) != "finished" {
		t.Errorf("records moved")
	}
	// --only does not get around it either; human form says it.
	res = mustCustody(t, b, 1, "apply", file, "--only", aID)
	if res.Stdout != "" || !strings.Contains(res.Stderr, "wrong-repository") || !strings.Contains(res.Stderr, "nothing was done") {
		t.Errorf("human refusal:\n%s", res)
	}
	e2eAssertKept(t, a, aID, aPath, beforeA, beforeA.refs)
}

func TestE2EJSONEnvelopes(t *testing.T) {
	t.Parallel()
	r := e2eRepo(t, fixtures.Options{})
	mainHead := r.Head(r.Dir)

	// new
	res := mustCustody(t, r, 0, "new", "env", "--json")
	nr := decodeResult[steps.NewResult](t, res, "new")
	if !e2eHex40.MatchString(nr.Head) || nr.Head != mainHead {
		t.Errorf("new head %q, want main's %s", nr.Head, mainHead)
	}
	if !strings.HasPrefix(nr.ID, "env-") || nr.Branch != "custody/"+nr.ID || nr.Path != filepath.Join(r.Dir, ".worktrees", nr.ID) {
		t.Errorf("new result %+v", nr)
	}
	if r.Head(nr.Path) != mainHead || r.BranchTip(nr.Branch) != mainHead {
		t.Errorf("the new tree is not at %s", mainHead)
	}
	if res.Stderr != "" {
		t.Errorf("new --json wrote to stderr: %q", res.Stderr)
	}

	// plan with nothing finished: 0 with and without --detailed-exitcode.
	mustCustody(t, r, 0, "plan", "--detailed-exitcode")
	res = mustCustody(t, r, 0, "plan", "--json")
	p := decodeResult[machine.Plan](t, res, "plan")
	if p.Format != "custody.plan/1" || !strings.HasPrefix(p.PlanID, "sha256:") || len(p.Items) != 1 || p.Items[0].Action != "keep" || p.Items[0].Refusal.Code != "not-finished" {
		t.Errorf("plan of an active tree: %+v", p)
	}

	// list: intent is present, null when the record carries none.
	res = mustCustody(t, r, 0, "list", "--json")
	l := decodeResult[listResult](t, res, "list")
	if len(l.Records) != 1 || l.Records[0].ID != nr.ID || l.Records[0].State != "active" || l.Records[0].Kind != "worktree" ||
		l.Records[0].Path != nr.Path || l.Records[0].Branch != nr.Branch || l.Records[0].Intent != nil {
		t.Errorf("list: %+v", l.Records)
	}
	if raw := decodeResult[rawListResult](t, res, "list"); len(raw.Records) != 1 || string(raw.Records[0]["intent"]) != "null" {
		t.Errorf("list: intent is %q, want null", raw.Records)
	}

	e2eFinish(t, r, nr.ID)
	// A removal planned: --detailed-exitcode says 2, --json too.
	mustCustody(t, r, 2, "plan", "--detailed-exitcode")
	res = mustCustody(t, r, 2, "plan", "--detailed-exitcode", "--json")
	decodeResult[machine.Plan](t, res, "plan")
	mustCustody(t, r, 0, "plan") // without the flag, 0: nothing kept
	file := filepath.Join(r.Root, "p.json")
	e2ePlan(t, r, file, 0)

	// apply
	res = mustCustody(t, r, 0, "apply", file, "--json")
	a := decodeResult[steps.ApplyResult](t, res, "apply")
	if len(a.Items) != 1 || a.Items[0].Outcome != "removed" || !strings.HasPrefix(a.PlanID, "sha256:") {
		t.Errorf("apply: %+v", a)
	}

	// Nothing left: 0 with --detailed-exitcode.
	mustCustody(t, r, 0, "plan", "--detailed-exitcode")
	// A kept finished tree only: 0 with --detailed-exitcode, 3 without.
	_, path := e2eFresh(t, r, "kept")
	r.WriteFile(path, "x.txt", "untracked\n")
	mustCustody(t, r, 0, "plan", "--detailed-exitcode")
	mustCustody(t, r, 3, "plan")
}

// TestE2EEnvelopeCommandNames checks the envelope's "command" is the
// command's name (DESIGN §9: "command":"plan"), not kong's usage syntax.
func TestE2EEnvelopeCommandNames(t *testing.T) {
	t.Parallel()
	r := e2eRepo(t, fixtures.Options{})
	id, _ := e2eFresh(t, r, "names")
	file := filepath.Join(r.Root, "p.json")
	e2ePlan(t, r, file, 0)
	for _, c := range []struct {
		name string
		args []string
	}{
		{"new", []string{"new", "other"}},
		{"list", []string{"list"}},
		{"plan", []string{"plan"}},
		{"finish", []string{"finish", id}},
		{"reopen", []string{"reopen", id}},
		{"apply", []string{"apply", file}},
	} {
		// decodeResult requires the envelope's command to be c.name.
		decodeResult[json.RawMessage](t, custody(t, r, append(c.args, "--json")...), c.name)
	}
}

// TestE2EApplyItemsIsAnArray checks apply's result lists its items as a
// JSON array even when the plan removes nothing (list and resume do).
func TestE2EApplyItemsIsAnArray(t *testing.T) {
	t.Parallel()
	r := e2eRepo(t, fixtures.Options{})
	file := filepath.Join(r.Root, "p.json")
	e2ePlan(t, r, file, 0)
	raw := decodeResult[rawResult](t, mustCustody(t, r, 0, "apply", file, "--json"), "apply")
	if s := string(raw["items"]); !strings.HasPrefix(s, "[") {
		t.Errorf(`apply --json result "items" is %s, want a JSON array ([] when empty)`, s)
	}
}

func TestE2EFinishInsideReopenAndFrom(t *testing.T) {
	t.Parallel()
	r := e2eRepo(t, fixtures.Options{})
	id, path := newTree(t, r, "inside")
	// finish without ids, run inside the tree.
	res := runBin(t, custodyBin, r, path, nil, "finish", "--json")
	if res.Code != 0 {
		t.Fatalf("finish inside: %s", res)
	}
	out := decodeResult[itemsResult[steps.Outcome]](t, res, "finish")
	if len(out.Items) != 1 || out.Items[0].ID != id || out.Items[0].Outcome != "finished" {
		t.Fatalf("finish inside: %+v", out.Items)
	}
	if st := e2eState(t, r, id); st != "finished" {
		t.Fatalf("state %s", st)
	}
	// Finishing again is already-done.
	res = runBin(t, custodyBin, r, path, nil, "finish", "--json")
	out = decodeResult[itemsResult[steps.Outcome]](t, res, "finish")
	if res.Code != 0 || len(out.Items) != 1 || out.Items[0].Outcome != "already-done" {
		t.Errorf("finish again: %s", res)
	}
	// reopen takes it back: plan no longer proposes removing it.
	mustCustody(t, r, 0, "reopen", id)
	if st := e2eState(t, r, id); st != "active" {
		t.Fatalf("after reopen: %s", st)
	}
	res = mustCustody(t, r, 0, "plan", "--json", "--detailed-exitcode")
	p := decodeResult[machine.Plan](t, res, "plan")
	if it := planItem(t, p, id); it.Action != "keep" || it.Refusal == nil || it.Refusal.Code != "not-finished" {
		t.Errorf("reopened tree in plan: %+v", it)
	}
	// Finish from a subdirectory of the tree works too.
	r.WriteFile(path, "sub/dir/keep.txt", "x\n")
	r.CommitAll(path, "sub")
	res = runBin(t, custodyBin, r, filepath.Join(path, "sub", "dir"), nil, "finish")
	if res.Code != 0 || !strings.Contains(res.Stdout, id) {
		t.Errorf("finish from a subdirectory: %s", res)
	}
	if st := e2eState(t, r, id); st != "finished" {
		t.Errorf("after finish from subdir: %s", st)
	}
	// finish without ids in the main checkout names no tree: refused.
	res = mustCustody(t, r, 1, "finish", "--json")
	if body := decodeError(t, res); body.Code != "not-in-worktree" {
		t.Errorf("finish in the main checkout: %+v", body)
	}

	// new --from a revision.
	first := r.Head(r.Dir)
	second := r.Commit(r.Dir, "more.txt", "second\n")
	r.Git("tag", "v1", first)
	for _, rev := range []string{"HEAD~1", "v1", first[:10]} {
		res = mustCustody(t, r, 0, "new", "from", "--from", rev, "--json")
		nr := decodeResult[steps.NewResult](t, res, "new")
		if nr.Head != first || r.Head(nr.Path) != first || r.BranchTip(nr.Branch) != first {
			t.Errorf("new --from %s: head %s, tree %s, want %s", rev, nr.Head, r.Head(nr.Path), first)
		}
	}
	res = mustCustody(t, r, 0, "new", "default", "--json")
	nr := decodeResult[steps.NewResult](t, res, "new")
	if nr.Head != second || r.Head(nr.Path) != second {
		t.Errorf("new without --from: %s, want main's HEAD %s", nr.Head, second)
	}

	// --from nosuchrev: exit 1, unknown-revision, nothing made.
	wts, refs := e2eWorktrees(t, r), r.Refs()
	entries, _ := os.ReadDir(filepath.Join(r.Dir, ".worktrees"))
	state := filepath.Join(r.Dir, ".git", "custody", "state.db")
	st, _ := os.ReadFile(state)
	recs := e2eRecords(t, r)
	res = mustCustody(t, r, 1, "new", "bad", "--from", "nosuchrev", "--json")
	body := decodeError(t, res)
	if body.Code != "unknown-revision" || !strings.Contains(body.Message, "nosuchrev") {
		t.Errorf("--from nosuchrev: %+v", body)
	}
	res = mustCustody(t, r, 1, "new", "bad", "--from", "nosuchrev")
	if !strings.Contains(res.Stderr, "nosuchrev") || !strings.Contains(res.Stderr, "[unknown-revision]") || res.Stdout != "" {
		t.Errorf("human --from nosuchrev:\n%s", res)
	}
	if got := e2eWorktrees(t, r); !cmp.Equal(got, wts) {
		t.Errorf("worktrees changed: %s", cmp.Diff(wts, got))
	}
	if got := r.Refs(); got != refs {
		t.Errorf("refs changed: %s", cmp.Diff(refs, got))
	}
	after, _ := os.ReadDir(filepath.Join(r.Dir, ".worktrees"))
	if len(after) != len(entries) {
		t.Errorf("managed root changed: %d entries, was %d", len(after), len(entries))
	}
	if got := e2eRecords(t, r); !cmp.Equal(got, recs) {
		t.Errorf("records changed: %s", cmp.Diff(recs, got))
	}
	if b, _ := os.ReadFile(state); !bytes.Equal(b, st) {
		t.Errorf("state file changed by a refused new")
	}
}

func TestE2EApplyOnly(t *testing.T) {
	t.Parallel()
	r := e2eRepo(t, fixtures.Options{})
	aID, aPath := e2eFresh(t, r, "first")
	bID, bPath := e2eFresh(t, r, "second")
	file := filepath.Join(r.Root, "p.json")
	e2ePlan(t, r, file, 0)
	before := e2eSnapKept(r, bID, bPath)
	a := e2eApply(t, r, file, 0, "--only", aID)
	if len(a.Items) != 1 || a.Items[0].ID != aID || a.Items[0].Outcome != "removed" {
		t.Fatalf("apply --only %s: %+v", aID, a.Items)
	}
	e2eAssertRemoved(t, r, aID, aPath)
	e2eAssertKept(t, r, bID, bPath, before, e2eDropRef(before.refs, "refs/heads/custody/"+aID))
	if st := e2eState(t, r, bID); st != "finished" {
		t.Errorf("%s is %s", bID, st)
	}
	a = e2eApply(t, r, file, 0)
	if o := applyOutcome(t, a, aID); o.Outcome != "already-done" {
		t.Errorf("full apply, %s: %+v", aID, o)
	}
	if o := applyOutcome(t, a, bID); o.Outcome != "removed" {
		t.Errorf("full apply, %s: %+v", bID, o)
	}
	e2eAssertRemoved(t, r, bID, bPath)
}

// TestE2EChdirRelativePlanFile: -C DIR is documented as "Run as if custody
// was started in DIR", so a relative plan file is DIR's, as with git -C.
func TestE2EChdirRelativePlanFile(t *testing.T) {
	t.Parallel()
	r := e2eRepo(t, fixtures.Options{})
	e2eFresh(t, r, "rel")
	res := runBin(t, custodyBin, r, r.Root, nil, "-C", r.Dir, "plan", "-o", "rel.json")
	if res.Code != 0 {
		t.Fatalf("plan -C: %s", res)
	}
	_, inDir := os.Lstat(filepath.Join(r.Dir, "rel.json"))
	_, inCwd := os.Lstat(filepath.Join(r.Root, "rel.json"))
	if inDir != nil {
		t.Errorf("custody -C %s plan -o rel.json did not write %s (in the process's cwd: %v)", r.Dir, filepath.Join(r.Dir, "rel.json"), inCwd == nil)
	}
}

// TestE2EMoreHazardsAreKept: states beyond the core hazards (the tree
// vanished or was replaced, ownership evidence broke, an operation or
// hidden state) are kept with their codes, untouched, while a removable
// neighbour in the same plan goes.
func TestE2EMoreHazardsAreKept(t *testing.T) {
	t.Parallel()
	for _, h := range fixtures.MoreHazards() {
		t.Run(h.Name, func(t *testing.T) {
			t.Parallel()
			r := e2eRepo(t, fixtures.Options{})
			id, path, _ := e2eMerged(t, r, "hazard", "topic/hazard")
			okID, okPath, _ := e2eMerged(t, r, "neighbour", "topic/neighbour")
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
			p := e2ePlan(t, r, file, 3)
			it := planItem(t, p, id)
			codes := refusalCodes(it.Refusals)
			if it.Action != "keep" || it.Refusal == nil || string(it.Refusal.Code) != h.Codes[0] || !cmp.Equal(codes, h.Codes) {
				t.Errorf("hazard tree: action %s, refusals %v, want keep with %v", it.Action, codes, h.Codes)
			}
			if n := planItem(t, p, okID); n.Action != "remove" {
				t.Fatalf("neighbour not removable: %+v", n)
			}
			a := e2eApply(t, r, file, 0)
			if len(a.Items) != 1 || a.Items[0].ID != okID || a.Items[0].Outcome != "removed" {
				t.Errorf("apply acted on %+v, want only %s removed", a.Items, okID)
			}
			e2eAssertRemoved(t, r, okID, okPath)
			if d := tree.Diff(snap()); d != "" {
				t.Errorf("kept tree changed:\n%s", d)
			}
			if d := adm.Diff(r.Snap(admin)); d != "" {
				t.Errorf("kept tree's admin dir changed:\n%s", d)
			}
			if got, want := r.Refs(), e2eDropRef(refs, "refs/heads/custody/"+okID); got != want {
				t.Errorf("refs changed:\n%s", cmp.Diff(want, got))
			}
			if !slices.Contains(e2eWorktrees(t, r), path) {
				t.Errorf("kept tree %s is no longer registered", path)
			}
			if st := e2eState(t, r, id); st != "finished" {
				t.Errorf("hazard record is %s, want finished", st)
			}
		})
	}
}
