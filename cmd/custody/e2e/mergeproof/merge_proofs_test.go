package mergeproof

// Removal safety, end to end, for the proofs plan accepts of merged work:
// squash and rebase merges, and a proof gone before apply. Each kept case
// asserts the refusal code plan gives and that plan and apply leave every
// byte, every ref and the registration of the kept tree as they were;
// each removable case asserts the proof and a verified removal.

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/cmd/custody/internal/output"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
)

// TestSafetySquashMerged: the tree's three commits were squashed into one
// commit on an advanced main by another clone; the branch was never pushed.
func TestSafetySquashMerged(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.NewTree(t, r, "squashme")
	base := r.Head(path)
	r.Commit(path, "a.txt", "one\ntwo\nthree\n")
	r.Commit(path, "b.txt", "bee\n")
	r.Commit(path, "README", "fixture, edited by the tree\n")
	clitest.Finish(t, r, id)
	r.AdvanceMain("advancer", "other.txt", "someone else's work\n")
	squash := r.SquashMergeToMain("squasher", "custody/"+id, nil)
	unique := clitest.Unique(t, r, path, base)
	if len(unique) != 3 {
		t.Fatalf("unique commits %v, want 3", unique)
	}
	if _, err := r.TryGitIn(r.Dir, "cat-file", "-e", squash+"^{commit}"); err == nil {
		t.Fatalf("fixture: the squash commit is already local; plan would not have to fetch it")
	}
	var plan machine.Plan
	var file string
	clitest.NoLocalWrites(t, r, func() { plan, file = clitest.PlanNow(t, r, 0) })
	it := clitest.PlanItem(t, plan, id)
	if it.Action != "remove" || it.Proof == nil || it.Proof.Kind != "squash-merged" {
		t.Fatalf("%s: action %s proof %+v, want remove with a squash-merged proof (refusals %+v)", id, it.Action, it.Proof, it.Refusals)
	}
	if o := clitest.ApplyOutcome(t, clitest.Apply(t, r, file, 0), id); o.Outcome != "removed" {
		t.Fatalf("apply %s: %+v", id, o)
	}
	p := it.Proof
	if p.Ref != "refs/heads/main" || p.Remote != "origin" || p.Tip != squash || p.Base != base || p.Head != it.Head {
		t.Errorf("proof %+v, want tip %s base %s on origin refs/heads/main", p, squash, base)
	}
	if got := clitest.Sorted(p.Commits); !slices.Equal(got, unique) {
		t.Errorf("proof covers %v, want the tree's unique commits %v", got, unique)
	}
	clitest.AssertRemoved(t, r, id, path, true)
}

// TestSafetySquashLossy: a squash of several commits that dropped or
// altered one line, or left a file out, is not proof; the tree is kept.
func TestSafetySquashLossy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		edit func(r *fixtures.Repo, dir string)
	}{
		{"DroppedLine", func(r *fixtures.Repo, dir string) { r.WriteFile(dir, "a.txt", "one\nthree\n") }},
		{"AlteredLine", func(r *fixtures.Repo, dir string) { r.WriteFile(dir, "a.txt", "one\nTWO\nthree\n") }},
		{"FileLeftOut", func(r *fixtures.Repo, dir string) {
			r.GitIn(dir, "rm", "-q", "--cached", "b.txt")
			os.Remove(filepath.Join(dir, "b.txt"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := clitest.InitRepo(t)
			id, path := clitest.NewTree(t, r, "lossy")
			r.Commit(path, "a.txt", "one\ntwo\nthree\n")
			r.Commit(path, "b.txt", "bee\n")
			clitest.Finish(t, r, id)
			r.SquashMergeToMain("squasher", "custody/"+id, func(dir string) { tc.edit(r, dir) })
			it := clitest.KeptThrough(t, r, id, path, "unpushed-commits")
			if it.Proof != nil {
				t.Errorf("a lossy squash proved %s: %+v", id, it.Proof)
			}
		})
	}
}

// TestSafetySquashMergeDriver: a merge driver configured in the repository
// (here one that always keeps the tip's side, for every path) makes the
// three-way merge of HEAD into origin's main yield exactly main's tree
// although the tree's change to a.txt is on no remote. That is not proof.
func TestSafetySquashMergeDriver(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	r.Commit(r.Dir, "a.txt", "shared start\n")
	r.Push(r.Dir, "main")
	id, path := clitest.NewTree(t, r, "driven")
	r.Commit(path, "a.txt", "the tree's version, only here\n")
	clitest.Finish(t, r, id)
	r.AdvanceMain("advancer", "a.txt", "main's version\n")
	r.Git("config", "merge.keeptip.driver", "true")
	r.WriteFile(filepath.Join(r.Dir, ".git", "info"), "attributes", "* merge=keeptip\n")
	it := clitest.KeptThrough(t, r, id, path, "unpushed-commits")
	if it.Proof != nil {
		t.Errorf("a merge driver faked a proof of %s: %+v", id, it.Proof)
	}
}

// TestSafetySquashCancellingCommits: a branch that added a file and then
// reverted it was never pushed or merged anywhere; the file's content
// exists only in the tree's two unique commits. HEAD's tree equals the
// merge base's, so a three-way merge of HEAD into any advertised tip
// trivially yields the tip's tree, but nothing was published: no
// squash-merged proof (DESIGN §1: removal needs a proof that every commit
// and every byte is recoverable elsewhere). The tree is kept as
// unpushed-commits.
func TestSafetySquashCancellingCommits(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.NewTree(t, r, "undone")
	r.Commit(path, "feature.txt", "work that exists nowhere else\n")
	r.GitIn(path, "revert", "--no-edit", "HEAD")
	clitest.Finish(t, r, id)
	it := clitest.KeptThrough(t, r, id, path, "unpushed-commits")
	if it.Proof != nil {
		t.Errorf("proof %+v for commits no remote has", it.Proof)
	}
}

// TestSafetySquashMergedIntoDefaultBranch: origin's default branch (its
// HEAD) is "develop", not main, master or trunk. A tree squash-merged into
// develop is removable with a squash-merged proof while develop is
// origin's only branch, and still when origin also carries 20 other
// people's branches whose names sort before "develop": the remote's HEAD
// branch counts as a default branch and is among the tips tried first.
func TestSafetySquashMergedIntoDefaultBranch(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	r.Git("push", "-q", "origin", "main:refs/heads/develop")
	r.GitIn(r.Remote, "symbolic-ref", "HEAD", "refs/heads/develop")
	r.Git("push", "-q", "origin", "--delete", "main")

	id, path := clitest.NewTree(t, r, "feat")
	r.Commit(path, "a.txt", "one\n")
	r.Commit(path, "b.txt", "two\n")
	clitest.Finish(t, r, id)

	clone := filepath.Join(r.Root, "squasher")
	r.GitIn(r.Root, "clone", "-q", "-b", "develop", r.Remote, clone)
	base := r.Head(clone)
	r.GitIn(clone, "fetch", "-q", r.Dir, "refs/heads/custody/"+id)
	r.GitIn(clone, "merge", "-q", "--squash", "FETCH_HEAD")
	r.GitIn(clone, "commit", "-q", "-m", "squash of "+id)
	r.GitIn(clone, "push", "-q", "origin", "HEAD:refs/heads/develop")

	plan, _ := clitest.PlanAny(t, r)
	if it := clitest.PlanItem(t, plan, id); it.Action != "remove" || it.Proof == nil || it.Proof.Kind != "squash-merged" {
		t.Fatalf("control: with develop alone on origin, %s is %s %v (proof %+v), want remove squash-merged", id, it.Action, clitest.RefusalCodes(it.Refusals), it.Proof)
	}

	// Other people's open branches, each a distinct commit, all sorting
	// before "develop".
	for i := 0; i < 20; i++ {
		c := r.GitIn(clone, "commit-tree", "-p", base, "-m", fmt.Sprintf("agent %d", i), base+"^{tree}")
		r.GitIn(clone, "push", "-q", "origin", c+fmt.Sprintf(":refs/heads/agent-%02d", i))
	}
	plan, _ = clitest.PlanAny(t, r)
	if it := clitest.PlanItem(t, plan, id); it.Action != "remove" || it.Proof == nil || it.Proof.Kind != "squash-merged" {
		t.Errorf("with 20 more branches on origin, %s is %s %v (proof %+v); want remove with a squash-merged proof on origin's default branch develop",
			id, it.Action, clitest.RefusalCodes(it.Refusals), it.Proof)
	}
}

// TestSafetyRebaseMerged: the tree's commits were cherry-picked onto an
// advanced main and pushed; the proof is patch-equivalent and names every
// commit of the tree it covers, in plan and in show.
func TestSafetyRebaseMerged(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.NewTree(t, r, "rebaseme")
	base := r.Head(path)
	r.Commit(path, "a.txt", "one\ntwo\n")
	r.Commit(path, "b.txt", "bee\n")
	r.Commit(path, "a.txt", "one\ntwo\nthree\n")
	clitest.Finish(t, r, id)
	r.AdvanceMain("advancer", "other.txt", "someone else's work\n")
	picked := r.RebaseMergeToMain("rebaser", "custody/"+id, nil)
	unique := clitest.Unique(t, r, path, base)
	if len(unique) != 3 || len(picked) != 3 {
		t.Fatalf("unique %v picked %v", unique, picked)
	}

	var s output.ShowResult
	clitest.NoLocalWrites(t, r, func() { s = clitest.ShowRecord(t, r, id) })
	if s.Observation == nil || s.Observation.Proof == nil || s.Observation.Proof.Kind != "patch-equivalent" {
		t.Fatalf("show: observation %+v", s.Observation)
	}
	if got := clitest.Sorted(s.Observation.Proof.Commits); !slices.Equal(got, unique) {
		t.Errorf("show: proof covers %v, want %v", got, unique)
	}

	it := clitest.RemoveNow(t, r, id, "patch-equivalent")
	if got := clitest.Sorted(it.Proof.Commits); !slices.Equal(got, unique) {
		t.Errorf("plan: proof covers %v, want the tree's unique commits %v", got, unique)
	}
	if it.Proof.Ref != "refs/heads/main" || it.Proof.Tip != picked[2] {
		t.Errorf("proof %+v, want tip %s on refs/heads/main", it.Proof, picked[2])
	}
	clitest.AssertRemoved(t, r, id, path, true)
}

// TestSafetyRebasePartial: only two of the tree's three commits were
// cherry-picked to main. Neither patch equivalence nor the squash check
// holds: the tree is kept.
func TestSafetyRebasePartial(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.NewTree(t, r, "partial")
	r.Commit(path, "a.txt", "a\n")
	r.Commit(path, "b.txt", "b\n")
	r.Commit(path, "c.txt", "c\n")
	clitest.Finish(t, r, id)
	r.AdvanceMain("advancer", "other.txt", "someone else's work\n")
	dir := r.OtherClone("picker")
	r.GitIn(dir, "fetch", "-q", r.Dir, "refs/heads/custody/"+id)
	r.GitIn(dir, "cherry-pick", "FETCH_HEAD~2", "FETCH_HEAD~1")
	r.GitIn(dir, "push", "-q", "origin", "HEAD:refs/heads/main")
	it := clitest.KeptThrough(t, r, id, path, "unpushed-commits")
	if it.Proof != nil {
		t.Errorf("a partial rebase proved %s: %+v", id, it.Proof)
	}
}

// TestSafetyProofGoneBeforeApply: plan found a squash-merged or
// patch-equivalent proof; before apply, origin's main is force-pushed back
// so the proof no longer holds. apply finds proof fresh and refuses; the
// tree is untouched.
func TestSafetyProofGoneBeforeApply(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"squash-merged", "patch-equivalent"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			r := clitest.InitRepo(t)
			id, path := clitest.NewTree(t, r, "vanishing")
			r.Commit(path, "a.txt", "a\n")
			r.Commit(path, "b.txt", "b\n")
			clitest.Finish(t, r, id)
			old := r.AdvanceMain("advancer", "other.txt", "someone else's work\n")
			if kind == "squash-merged" {
				r.SquashMergeToMain("merger", "custody/"+id, nil)
			} else {
				r.RebaseMergeToMain("merger", "custody/"+id, nil)
			}
			plan, file := clitest.PlanNow(t, r, 0)
			if it := clitest.PlanItem(t, plan, id); it.Action != "remove" || it.Proof == nil || string(it.Proof.Kind) != kind {
				t.Fatalf("plan: %s %+v %v", it.Action, it.Proof, clitest.RefusalCodes(it.Refusals))
			}
			r.Git("push", "-q", "--force", "origin", old+":refs/heads/main")
			before := clitest.SnapKeptState(t, r, id, path)
			a := clitest.Apply(t, r, file, 3)
			if o := clitest.ApplyOutcome(t, a, id); o.Outcome == "removed" || o.Refusal == nil {
				t.Errorf("apply after the proof vanished: %+v", o)
			}
			before.Check(t, r, id, "after apply")
		})
	}
}

// TestSafetyRebaseMergedWithEmptyCommit: an empty unique commit defeats
// patch equivalence (an empty patch proves nothing); the content is all on
// main, so the tree is still removable, as squash-merged.
func TestSafetyRebaseMergedWithEmptyCommit(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.NewTree(t, r, "withempty")
	r.Commit(path, "a.txt", "a\n")
	r.GitIn(path, "commit", "-q", "--allow-empty", "-m", "nothing")
	r.Commit(path, "b.txt", "b\n")
	clitest.Finish(t, r, id)
	r.AdvanceMain("advancer", "other.txt", "someone else's work\n")
	r.RebaseMergeToMain("rebaser", "custody/"+id, nil)
	it := clitest.RemoveNow(t, r, id, "squash-merged")
	if len(it.Proof.Commits) != 3 {
		t.Errorf("proof covers %v, want the 3 unique commits", it.Proof.Commits)
	}
	clitest.AssertRemoved(t, r, id, path, true)
}

// TestSafetyRebaseMergedWhitespace: one cherry-pick differs from the tree's
// commit only in whitespace (a trailing blank). git's own --cherry-pick
// (whitespace-insensitive patch ids) calls them equal; patch-id --verbatim
// tells them apart, so it is not patch-equivalent. And since the published
// content really differs (the three-way merge conflicts on that line) it is
// not squash-merged either: the tree is kept.
func TestSafetyRebaseMergedWhitespace(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.NewTree(t, r, "spaces")
	r.Commit(path, "a.txt", "one\ntwo\n")
	r.Commit(path, "b.txt", "bee\n")
	clitest.Finish(t, r, id)
	r.AdvanceMain("advancer", "other.txt", "someone else's work\n")
	r.RebaseMergeToMain("rebaser", "custody/"+id, func(dir string, i int) {
		if i == 0 {
			r.WriteFile(dir, "a.txt", "one \ntwo\n")
		}
	})
	tip := strings.Fields(r.Git("ls-remote", "origin", "refs/heads/main"))[0]
	r.Git("fetch", "-q", "origin")
	if out := r.GitIn(path, "rev-list", "--cherry-pick", "--right-only", tip+"...HEAD"); out != "" {
		t.Fatalf("fixture: --cherry-pick already tells the picks apart (%s); the case needs a whitespace-only difference", out)
	}
	it := clitest.KeptThrough(t, r, id, path, "unpushed-commits")
	if it.Proof != nil {
		t.Errorf("a whitespace-changed pick proved %s: %+v", id, it.Proof)
	}
}
