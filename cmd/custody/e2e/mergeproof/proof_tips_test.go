package mergeproof

// Every advertised tip is considered by the patch-equivalent and
// squash-merged proofs, end to end: a tip that sorts after many branches,
// a pull request head, a squash commit that main built on, and a git
// process count for plan that does not grow with the number of tips.
// Helpers here are prefixed pt.

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
)

// ptRepo is an initialized fixture whose origin carries n branches of
// other people (b-00 …, sorting before "main" and "release"), pushed in
// one go from another clone.
func ptRepo(t *testing.T, n int) *fixtures.Repo {
	t.Helper()
	r := fixtures.New(t, fixtures.Options{})
	clitest.MustCustody(t, r, 0, "init")
	if n == 0 {
		return r
	}
	dir := r.OtherClone("others")
	base := r.Head(dir)
	args := []string{"push", "-q", "origin"}
	for i := 0; i < n; i++ {
		c := r.GitIn(dir, "commit-tree", "-p", base, "-m", fmt.Sprintf("branch %d", i), base+"^{tree}")
		args = append(args, fmt.Sprintf("%s:refs/heads/b-%02d", c, i))
	}
	r.GitIn(dir, args...)
	return r
}

// ptPlan plans into a file (any exit plan gives for a plan: 0 or 3) and
// returns the plan, the file and custody's stderr.
func ptPlan(t *testing.T, r *fixtures.Repo, extra ...string) (machine.Plan, string, string) {
	t.Helper()
	file := clitest.PlanFile(t, r)
	res := clitest.Custody(t, r, append([]string{"plan", "-o", file, "--json"}, extra...)...)
	if res.Code != 0 && res.Code != 3 {
		t.Fatalf("plan: %s", res)
	}
	return clitest.DecodeResult[machine.Plan](t, res, "plan"), file, res.Stderr
}

// ptRemoved requires that plan, writing no ref, removes id with a proof of
// kind on ref, and that apply then removes it.
func ptRemoved(t *testing.T, r *fixtures.Repo, id, path string, kind machine.ProofKind, ref string) *machine.Proof {
	t.Helper()
	var plan machine.Plan
	var file string
	// Plan writes no ref and no FETCH_HEAD, whatever it has to fetch.
	clitest.NoLocalWrites(t, r, func() { plan, file, _ = ptPlan(t, r) })
	it := clitest.PlanItem(t, plan, id)
	if it.Action != "remove" || it.Proof == nil || it.Proof.Kind != kind || it.Proof.Ref != ref {
		t.Fatalf("%s: action %s proof %+v, want remove with a %s proof on %s (refusals %v)", id, it.Action, it.Proof, kind, ref, clitest.RefusalCodes(it.Refusals))
	}
	res := clitest.Custody(t, r, "apply", file, "--json")
	if res.Code != 0 {
		t.Fatalf("apply: %s", res)
	}
	if o := clitest.ApplyOutcome(t, clitest.DecodeResult[steps.ApplyResult](t, res, "apply"), id); o.Outcome != "removed" {
		t.Fatalf("apply %s: %+v", id, o)
	}
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Errorf("%s still exists (%v)", path, err)
	}
	return it.Proof
}

// ptKept requires that plan keeps id as unpushed-commits, with no proof.
func ptKept(t *testing.T, r *fixtures.Repo, id string) {
	t.Helper()
	plan, _, _ := ptPlan(t, r)
	it := clitest.PlanItem(t, plan, id)
	if it.Action != "keep" || it.Proof != nil || !clitest.HasCode(it.Refusals, "unpushed-commits") {
		t.Errorf("%s: action %s proof %+v refusals %v, want kept as unpushed-commits without proof", id, it.Action, it.Proof, clitest.RefusalCodes(it.Refusals))
	}
}

// ptBranchCommits fetches branch of the main repository into the clone dir
// and returns the commits it adds over origin/main, oldest first.
func ptBranchCommits(t *testing.T, r *fixtures.Repo, dir, branch string) []string {
	t.Helper()
	r.GitIn(dir, "fetch", "-q", r.Dir, "refs/heads/"+branch)
	return strings.Fields(r.GitIn(dir, "rev-list", "--reverse", "origin/main..FETCH_HEAD"))
}

// ptCherryPickOnRelease makes origin's release branch (off main, with a
// commit of its own) and cherry-picks the tree's commits onto it, from
// another clone. The tree's branch is never pushed.
func ptCherryPickOnRelease(t *testing.T, r *fixtures.Repo, clone, branch string) {
	t.Helper()
	dir := r.OtherClone(clone)
	r.GitIn(dir, "checkout", "-q", "-b", "release")
	r.Commit(dir, "release-notes", "1.0\n")
	for _, c := range ptBranchCommits(t, r, dir, branch) {
		r.GitIn(dir, "cherry-pick", c)
	}
	r.GitIn(dir, "push", "-q", "origin", "release")
}

// TestProofTipsCherryPickOnRelease: a commit cherry-picked onto release of
// a remote with 25 other branches (sorting before it) is removable by a
// patch-equivalent proof on release.
func TestProofTipsCherryPickOnRelease(t *testing.T) {
	t.Parallel()
	r := ptRepo(t, 25)
	id, path := clitest.NewTree(t, r, "fix")
	r.Commit(path, "fix.txt", "the fix\n")
	clitest.Finish(t, r, id)
	ptCherryPickOnRelease(t, r, "releaser", "custody/"+id)
	ptRemoved(t, r, id, path, machine.ProofPatchEquivalent, "refs/heads/release")
}

// TestProofTipsPullRequestHead: the tree's patches exist only on
// refs/pull/7/head (rebased by someone else onto a newer main), beside 20
// branches and a synthetic refs/pull/7/merge. Plan fetches what it needs
// into no ref and proves the tree patch-equivalent on the pull head.
func TestProofTipsPullRequestHead(t *testing.T) {
	t.Parallel()
	r := ptRepo(t, 20)
	id, path := clitest.NewTree(t, r, "feature")
	r.Commit(path, "feature.txt", "feature\n")
	r.Commit(path, "feature.txt", "feature, better\n")
	clitest.Finish(t, r, id)
	r.AdvanceMain("advancer", "other.txt", "someone else's work\n")
	dir := r.OtherClone("contributor")
	picks := ptBranchCommits(t, r, dir, "custody/"+id)
	r.GitIn(dir, "checkout", "-q", "-b", "pr")
	for _, c := range picks {
		r.GitIn(dir, "cherry-pick", c)
	}
	r.PushRef(dir, "refs/pull/7/head")
	r.WriteFile(dir, "merged-only.txt", "in the test merge\n")
	r.GitIn(dir, "add", "merged-only.txt")
	merge := r.GitIn(dir, "commit-tree", "-p", "origin/main", "-p", "HEAD", "-m", "test merge", r.GitIn(dir, "write-tree"))
	r.GitIn(dir, "push", "-q", "origin", merge+":refs/pull/7/merge")
	p := ptRemoved(t, r, id, path, machine.ProofPatchEquivalent, "refs/pull/7/head")
	if len(p.Commits) != 2 {
		t.Errorf("proof covers %v, want the tree's two commits", p.Commits)
	}
	if _, err := r.TryGitIn(r.Dir, "cat-file", "-e", merge); err == nil {
		t.Errorf("plan fetched the synthetic refs/pull/7/merge")
	}
}

// TestProofTipsSquashThenEdited: the tree was squash-merged into main, and
// main then edited the same files. The squash commit holds the tree's
// work: removable with a squash-merged proof that names it.
func TestProofTipsSquashThenEdited(t *testing.T) {
	t.Parallel()
	r := ptRepo(t, 0)
	id, path := clitest.NewTree(t, r, "squashme")
	base := r.Head(path)
	r.Commit(path, "a.txt", "one\ntwo\nthree\n")
	r.Commit(path, "README", "fixture, edited by the tree\n")
	clitest.Finish(t, r, id)
	squash := r.SquashMergeToMain("squasher", "custody/"+id, nil)
	r.AdvanceMain("editor", "a.txt", "one\ntwo, edited on main\nthree\n")
	p := ptRemoved(t, r, id, path, machine.ProofSquashMerged, "refs/heads/main")
	if p.Via != squash || p.Base != base {
		t.Errorf("proof %+v, want via the squash commit %s from base %s", p, squash, base)
	}
}

// TestProofTipsSquashDroppedHunk: a squash that dropped one of the tree's
// hunks, after which main edited the file again, proves nothing: kept.
func TestProofTipsSquashDroppedHunk(t *testing.T) {
	t.Parallel()
	r := ptRepo(t, 0)
	var lines []string
	for i := 1; i <= 30; i++ {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	file := func(edit map[int]string) string {
		l := append([]string(nil), lines...)
		for i, v := range edit {
			l[i-1] = v
		}
		return strings.Join(l, "\n") + "\n"
	}
	r.Commit(r.Dir, "big.txt", file(nil))
	r.Push(r.Dir, "main")
	id, path := clitest.NewTree(t, r, "hunks")
	r.Commit(path, "big.txt", file(map[int]string{3: "three"}))
	r.Commit(path, "big.txt", file(map[int]string{3: "three", 25: "twenty-five"}))
	clitest.Finish(t, r, id)
	r.SquashMergeToMain("squasher", "custody/"+id, func(dir string) { r.WriteFile(dir, "big.txt", file(map[int]string{3: "three"})) })
	r.AdvanceMain("editor", "big.txt", file(map[int]string{3: "three", 10: "ten"}))
	ptKept(t, r, id)
}

// ptFleet builds a repository whose origin has n tips and four finished
// trees: published (ancestry), cherry-picked onto release (patch),
// squash-merged into main and edited since (squash), and on no remote
// (kept). Each touches its own file, so no two trees share candidate
// commits and the count cannot depend on the order plan's workers run in.
func ptFleet(t *testing.T, n int) (*fixtures.Repo, map[string]string) {
	t.Helper()
	r := ptRepo(t, n-3) // plus main, release and the published tree's branch
	ids := map[string]string{}
	id, path := clitest.NewTree(t, r, "published")
	r.Commit(path, "published.txt", "p\n")
	r.Push(path, "custody/"+id)
	ids["published"] = id
	id, path = clitest.NewTree(t, r, "picked")
	r.Commit(path, "picked.txt", "c\n")
	ids["picked"] = id
	id, path = clitest.NewTree(t, r, "squashed")
	r.Commit(path, "squashed.txt", "s1\n")
	r.Commit(path, "squashed-too.txt", "s2\n")
	ids["squashed"] = id
	id, path = clitest.NewTree(t, r, "lost")
	r.Commit(path, "lost.txt", "l\n")
	ids["lost"] = id
	for _, id := range ids {
		clitest.Finish(t, r, id)
	}
	ptCherryPickOnRelease(t, r, "releaser", "custody/"+ids["picked"])
	r.SquashMergeToMain("squasher", "custody/"+ids["squashed"], nil)
	r.AdvanceMain("editor", "squashed.txt", "edited on main\n")
	return r, ids
}

// TestProofTipsGitProcessesDoNotGrowWithTips: `custody plan --debug`
// prints every git command line; plan starts as many git processes for a
// remote with 5 tips as for one with 40, and proves the same trees.
func TestProofTipsGitProcessesDoNotGrowWithTips(t *testing.T) {
	t.Parallel()
	count := func(n int) (int, map[string]string) {
		r, ids := ptFleet(t, n)
		if got := strings.Count(r.Git("ls-remote", "--refs", "origin"), "\n") + 1; got != n {
			t.Fatalf("fixture: origin advertises %d refs, want %d", got, n)
		}
		plan, _, stderr := ptPlan(t, r, "--debug")
		verdicts := map[string]string{}
		for name, id := range ids {
			it := clitest.PlanItem(t, plan, id)
			v := string(it.Action)
			if it.Proof != nil {
				v += " " + string(it.Proof.Kind) + " " + it.Proof.Ref
			}
			verdicts[name] = v
		}
		git := 0
		for _, l := range strings.Split(stderr, "\n") {
			if strings.HasPrefix(l, "+ git ") {
				git++
			}
		}
		return git, verdicts
	}
	few, fewV := count(5)
	many, manyV := count(40)
	want := map[string]string{
		"published": "remove ancestry refs/heads/custody/",
		"picked":    "remove patch-equivalent refs/heads/release",
		"squashed":  "remove squash-merged refs/heads/main",
		"lost":      "keep",
	}
	for name, w := range want {
		for _, got := range []map[string]string{fewV, manyV} {
			if !strings.HasPrefix(got[name], w) {
				t.Errorf("%s: verdict %q, want %q…", name, got[name], w)
			}
		}
	}
	if few == 0 || few != many {
		t.Errorf("plan started %d git processes with 5 tips and %d with 40; want the same, and some", few, many)
	}
	t.Logf("git processes for plan of 4 trees: %d (5 tips), %d (40 tips)", few, many)
}
