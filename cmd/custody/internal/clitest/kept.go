package clitest

// Everything about a kept tree that must not change, taken before plan
// and apply and checked after.

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
)

// KeptState is everything about a tree that must not change while it is kept:
// its bytes, its git admin entry (index, HEAD, per-worktree refs, operation
// state), every ref of the repository and every ref as the tree sees it,
// its registration and its record's state.
type KeptState struct {
	path, admin      string
	tree, adminSnap  fixtures.Snapshot
	refs, refsInTree string
	head, state      string
}

// SnapKeptState takes the KeptState of tree id ("" for no record) at path.
func SnapKeptState(t testing.TB, r *fixtures.Repo, id, path string) KeptState {
	t.Helper()
	admin := filepath.Join(r.Dir, ".git", "worktrees", filepath.Base(path))
	k := KeptState{path: path, admin: admin, tree: r.Snap(path), adminSnap: r.Snap(admin), refs: r.Refs(),
		refsInTree: r.GitIn(path, "for-each-ref", "--format=%(objectname) %(refname)"),
		head:       r.GitIn(path, "rev-parse", "HEAD")}
	if id != "" {
		k.state = RecordState(t, r, id)
	}
	return k
}

// Without drops the line naming ref from both ref listings (a ref the
// test expects to change, such as another tree's deleted branch).
func (k KeptState) Without(ref string) KeptState {
	drop := func(s string) string {
		return strings.Join(slices.DeleteFunc(strings.Split(s, "\n"), func(l string) bool {
			return strings.HasSuffix(l, " "+ref)
		}), "\n")
	}
	k.refs, k.refsInTree = drop(k.refs), drop(k.refsInTree)
	return k
}

// Check fails unless nothing of the kept tree changed since k was taken.
func (k KeptState) Check(t testing.TB, r *fixtures.Repo, id, when string) {
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
	if !slices.Contains(Registered(t, r), k.path) {
		t.Errorf("%s: kept tree %s is no longer registered", when, k.path)
	}
	if id != "" {
		if got := RecordState(t, r, id); got != k.state {
			t.Errorf("%s: record %s is %s, was %s", when, id, got, k.state)
		}
	}
}

// KeptThrough plans with the tree kept (every code of want must be among
// the item's refusals), applies that plan, and checks nothing of the tree
// changed through plan and apply. It returns the kept item.
func KeptThrough(t *testing.T, r *fixtures.Repo, id, path string, want ...string) machine.PlanItem {
	t.Helper()
	before := SnapKeptState(t, r, id, path)
	plan, file := PlanNow(t, r, 0)
	it := PlanItem(t, plan, id)
	if it.Action != "keep" {
		t.Fatalf("%s: action %s, want keep (refusals %v, proof %+v)", id, it.Action, RefusalCodes(it.Refusals), it.Proof)
	}
	for _, c := range want {
		if !HasCode(it.Refusals, c) {
			t.Errorf("%s: refusals %v lack %s:\n%+v", id, RefusalCodes(it.Refusals), c, it.Refusals)
		}
	}
	if it.Refusal == nil || len(it.Refusals) == 0 || it.Refusal.Code != it.Refusals[0].Code {
		t.Errorf("%s: primary refusal %+v is not the first of %v", id, it.Refusal, RefusalCodes(it.Refusals))
	}
	before.Check(t, r, id, "after plan")
	a := Apply(t, r, file, 0)
	for _, o := range a.Items {
		if o.ID == id {
			t.Errorf("apply acted on kept %s: %+v", id, o)
		}
	}
	before.Check(t, r, id, "after apply")
	return it
}

// Unique returns the commits the tree's HEAD adds over base, sorted,
// without fetching anything (so plan must fetch what origin advertises).
func Unique(t testing.TB, r *fixtures.Repo, path, base string) []string {
	t.Helper()
	out := strings.Fields(r.GitIn(path, "rev-list", "HEAD", "--not", base))
	slices.Sort(out)
	return out
}

// NoLocalWrites runs f and fails if it changed any ref of the repository
// or wrote FETCH_HEAD: advertised commits are fetched into no local ref.
func NoLocalWrites(t testing.TB, r *fixtures.Repo, f func()) {
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

// Sorted returns a sorted copy of s.
func Sorted(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}
