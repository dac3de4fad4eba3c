package proof_test

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/internal/gitsandbox"
	"github.com/custody-sh/custody/observe/proof"
)

// proofZoo is one repository holding heads of every kind a proof search
// meets, all against one advertisement.
type proofZoo struct {
	s     *gitsandbox.Sandbox
	dir   string
	repo  hostio.Repo
	v     *proof.RemoteView
	heads map[string]string // kind → head
	// viaMerge is the merge commit that alone holds "held by a merge".
	viaMerge string
}

// newProofZoo gives the test a zoo of its own: a copy of the one TestMain
// built (zooTemplate), or, when TestMain did not build one for this run, a
// zoo built here. Its repository is discovered and advertised afresh.
func newProofZoo(t *testing.T) *proofZoo {
	t.Helper()
	s := gitsandbox.NewSandbox(t)
	var z *proofZoo
	if zooTemplate == nil {
		z = buildProofZoo(s)
	} else {
		z = zooTemplate.copyTo(s)
	}
	z.repo = s.Discover(z.dir)
	z.v = s.Advertise(z.repo)
	return z
}

// buildProofZoo builds the zoo's repositories in s (not yet discovered or
// advertised).
func buildProofZoo(s *gitsandbox.Sandbox) *proofZoo {
	s.T.Helper()
	dir := s.NewOrigin()
	base := s.Rev(dir, "HEAD")
	z := &proofZoo{s: s, dir: dir, heads: map[string]string{}}
	branch := func(name, from string) { s.Git(dir, "checkout", "-q", "-b", name, from) }

	// Published on main, and on a release branch only.
	z.heads["old main"] = base
	branch("rel", base)
	z.heads["on release only"] = s.CommitFile(dir, "rel.txt", "release\n")
	s.Git(dir, "push", "-q", "origin", "rel")
	// Only below a pull request's head.
	branch("pr", base)
	z.heads["below a pull head"] = s.CommitFile(dir, "pr1", "1\n")
	s.CommitFile(dir, "pr2", "2\n")
	s.Git(dir, "push", "-q", "origin", "HEAD:refs/pull/3/head")
	// Cherry-picked onto main; a stack of two on it, the lower picked too.
	branch("pick", base)
	pick := s.CommitFile(dir, "pick.txt", "p\n")
	z.heads["patch"] = pick
	z.heads["stacked on a patch"] = s.CommitFile(dir, "stack.txt", "s\n")
	// Squash-merged, then the squashed file edited again on main.
	branch("sq", base)
	s.CommitFile(dir, "sq1", "1\n")
	z.heads["squash"] = s.CommitFile(dir, "sq2", "2\n")
	branch("sq2", base)
	s.CommitFile(dir, "again.txt", "branch's\n")
	z.heads["squash edited again"] = s.CommitFile(dir, "again2.txt", "branch's too\n")
	// Nowhere: two trees with their own work, one of them on a shared file.
	branch("lost", base)
	z.heads["lost"] = s.CommitFile(dir, "lost", "l\n")
	branch("lost2", base)
	z.heads["lost on a file main edits"] = s.CommitFile(dir, "shared.txt", "mine\n")
	// A merge of a side branch whose commit main has; an empty commit (it
	// publishes nothing, so nothing proves it).
	branch("side", base)
	side := s.CommitFile(dir, "side.txt", "s\n")
	branch("merged", base)
	mine := s.CommitFile(dir, "merged.txt", "m\n")
	s.Git(dir, "merge", "-q", "--no-ff", "-m", "merge side", "side")
	z.heads["merge"] = s.Rev(dir, "HEAD")
	branch("empty", base)
	s.Git(dir, "commit", "-q", "--allow-empty", "-m", "nothing")
	z.heads["empty"] = s.Rev(dir, "HEAD")
	// Its content held only by a merge on main, edited since.
	branch("mm", base)
	z.heads["held by a merge"] = s.CommitFile(dir, "m.txt", "x\n")
	// An unrelated history.
	s.Git(dir, "switch", "-q", "--orphan", "orphan")
	z.heads["unrelated"] = s.CommitFile(dir, "root.txt", "r\n")

	s.Git(dir, "checkout", "-q", "main")
	s.CommitFile(dir, "shared.txt", "main's\n")
	s.Git(dir, "cherry-pick", pick, side, mine)
	s.Git(dir, "merge", "-q", "--squash", "sq")
	s.CommitAll(dir, "squash sq")
	s.Git(dir, "merge", "-q", "--squash", "sq2")
	s.CommitAll(dir, "squash sq2")
	s.CommitFile(dir, "again.txt", "edited on main\n")
	// A merge on main touching the shared file (only git can say which
	// paths a merge touches).
	branch("topic", "main~3")
	s.CommitFile(dir, "shared.txt", "topic's\n")
	s.Git(dir, "checkout", "-q", "main")
	s.Git(dir, "merge", "-q", "--no-ff", "-m", "merge topic", "topic")
	branch("topic2", "main")
	s.CommitFile(dir, "topic2.txt", "t\n")
	s.Git(dir, "checkout", "-q", "main")
	s.Git(dir, "merge", "-q", "--no-ff", "--no-commit", "topic2")
	s.Write(dir, "m.txt", "x\n")
	z.viaMerge = s.CommitAll(dir, "merge topic2, with m.txt")
	s.CommitFile(dir, "m.txt", "edited after\n")
	z.heads["published"] = s.Rev(dir, "HEAD~3")
	s.Git(dir, "push", "-q", "origin", "main")
	return z
}

// copyTo copies the zoo's repositories into s (copyOrigin): a plain file
// copy instead of the hundred-odd git commands that build a zoo. The
// commits are the same objects, so heads and viaMerge carry over.
func (z *proofZoo) copyTo(s *gitsandbox.Sandbox) *proofZoo {
	s.T.Helper()
	dir := s.CopyOrigin(z.s)
	return &proofZoo{s: s, dir: dir, heads: maps.Clone(z.heads), viaMerge: z.viaMerge}
}

// kinds are the zoo's kinds, sorted.
func (z *proofZoo) kinds() []string {
	var ks []string
	for k := range z.heads {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// gitsandbox.ResultOpts compare results by proof and error text.

// TestProveAllAgreesWithProve: every head proved in one batch gets what
// Prove gives it alone, whatever else is in the batch, and the kinds that
// must be proved (or not) are.
func TestProveAllAgreesWithProve(t *testing.T) {
	t.Parallel()
	z := newProofZoo(t)
	ctx := context.Background()
	alone := map[string]proof.ProofResult{}
	for _, k := range z.kinds() {
		p, err := proof.Prove(ctx, z.s.G, z.repo, z.heads[k], z.v)
		alone[k] = proof.ProofResult{Proof: p, Err: err}
	}
	wantKind := map[string]machine.ProofKind{
		"old main": machine.ProofAncestry, "published": machine.ProofAncestry, "on release only": machine.ProofAncestry,
		"below a pull head": machine.ProofAncestry, "patch": machine.ProofPatchEquivalent,
		"squash": machine.ProofSquashMerged, "squash edited again": machine.ProofSquashMerged, "merge": machine.ProofSquashMerged,
		"held by a merge": machine.ProofSquashMerged,
	}
	for _, k := range z.kinds() {
		r := alone[k]
		if r.Err != nil {
			t.Errorf("%s alone: %v", k, r.Err)
			continue
		}
		switch want, ok := wantKind[k]; {
		case ok && (r.Proof == nil || r.Proof.Kind != want):
			t.Errorf("%s alone: proof %+v, want %s", k, r.Proof, want)
		case !ok && r.Proof != nil:
			t.Errorf("%s alone: proof %+v, want none", k, r.Proof)
		}
	}
	if p := alone["on release only"].Proof; p != nil && p.Ref != "refs/heads/rel" {
		t.Errorf("on release only: proved by %s, want refs/heads/rel", p.Ref)
	}
	if p := alone["below a pull head"].Proof; p != nil && p.Ref != "refs/pull/3/head" {
		t.Errorf("below a pull head: proved by %s, want refs/pull/3/head", p.Ref)
	}
	if p := alone["squash edited again"].Proof; p != nil && p.Via == "" {
		t.Errorf("squash edited again: %+v, want the squash commit named (main edited the file since)", p)
	}
	if p := alone["held by a merge"].Proof; p != nil && p.Via != z.viaMerge {
		t.Errorf("held by a merge: %+v, want the merge %s named", p, z.viaMerge)
	}
	// Every kind in one batch; then each kind with the kinds after it,
	// and each with "lost". One batch costs as many git processes as
	// proving a head alone, so the bounded run takes every third of the
	// latter two (each kind is still in two batches or more: all, and
	// either "from" the second kind or with "lost"); CUSTODY_TEST_FULL
	// takes them all.
	stride := 3
	if fixtures.Full() {
		stride = 1
	}
	batches := map[string][]string{"all": z.kinds()}
	for i, k := range z.kinds() {
		if i%stride == 1%stride {
			batches[fmt.Sprintf("from %s", k)] = z.kinds()[i:]
		}
		if i%stride == 0 {
			batches[fmt.Sprintf("%s and lost", k)] = []string{k, "lost"}
		}
	}
	for name, kinds := range batches {
		heads := make([]string, len(kinds))
		for i, k := range kinds {
			heads[i] = z.heads[k]
		}
		got := proof.ProveAll(ctx, z.s.G, z.repo, heads, z.v)
		for _, k := range kinds {
			if d := cmp.Diff(alone[k], got[z.heads[k]], gitsandbox.ResultOpts); d != "" {
				t.Errorf("batch %q, %s: (-alone +batch)\n%s", name, k, d)
			}
		}
	}
}

// TestProveAllOneHeadsTroubleIsItsOwn: a head git cannot read fails only
// its own proof; the others of the batch are proved as alone.
func TestProveAllOneHeadsTroubleIsItsOwn(t *testing.T) {
	t.Parallel()
	z := newProofZoo(t)
	ctx := context.Background()
	missing := strings.Repeat("1", len(z.heads["lost"]))
	heads := []string{z.heads["patch"], missing, z.heads["squash"], z.heads["lost"]}
	got := proof.ProveAll(ctx, z.s.G, z.repo, heads, z.v)
	if got[missing].Err == nil {
		t.Errorf("a head that is no object: %+v, want an error", got[missing])
	}
	for _, k := range []string{"patch", "squash", "lost"} {
		p, err := proof.Prove(ctx, z.s.G, z.repo, z.heads[k], z.v)
		if d := cmp.Diff(proof.ProofResult{Proof: p, Err: err}, got[z.heads[k]], gitsandbox.ResultOpts); d != "" {
			t.Errorf("%s beside an unreadable head: (-alone +batch)\n%s", k, d)
		}
	}
}

// TestProveAllCostDoesNotGrowWithHeads: proving many unpublished heads
// (and heads published on a branch other than the first tip) takes as
// many git processes as proving one. (A count, not a time.)
func TestProveAllCostDoesNotGrowWithHeads(t *testing.T) {
	t.Parallel()
	s := gitsandbox.NewSandbox(t)
	dir := s.NewOrigin()
	base := s.Rev(dir, "HEAD")
	s.Git(dir, "checkout", "-q", "-b", "rel")
	s.CommitFile(dir, "rel.txt", "r\n")
	s.Git(dir, "push", "-q", "origin", "rel")
	var lost, onRel []string
	for i := range 12 {
		s.Git(dir, "checkout", "-q", "-b", fmt.Sprintf("w%d", i), base)
		lost = append(lost, s.CommitFile(dir, fmt.Sprintf("w%d.txt", i), "mine\n"))
	}
	s.Git(dir, "checkout", "-q", "rel")
	for i := range 12 {
		onRel = append(onRel, s.CommitFile(dir, fmt.Sprintf("r%d.txt", i), "on rel\n"))
	}
	s.Git(dir, "push", "-q", "origin", "rel")
	s.Git(dir, "checkout", "-q", "main")
	s.CommitFile(dir, "main.txt", "main moved on\n")
	s.Git(dir, "push", "-q", "origin", "main")
	repo := s.Discover(dir)
	v := s.Advertise(repo)
	count := func(heads []string) int {
		var buf bytes.Buffer
		got := proof.ProveAll(context.Background(), s.Traced(&buf), repo, heads, v)
		for _, h := range heads {
			r := got[h]
			if r.Err != nil || (r.Proof == nil) != (indexOf(lost, h) >= 0) {
				t.Fatalf("ProveAll: %s: %+v", h, r)
			}
		}
		return strings.Count(buf.String(), "\n")
	}
	one := count([]string{lost[0], onRel[0]})
	all := count(append(append([]string{}, lost...), onRel...))
	if one != all || one > 5 {
		t.Errorf("git processes: %d for two heads, %d for %d; want the same, at most 5", one, all, len(lost)+len(onRel))
	}
}

func indexOf(l []string, s string) int {
	for i, x := range l {
		if x == s {
			return i
		}
	}
	return -1
}

// TestProveBrokenObjectIsItsHeadsOwn: a head whose own commit's content
// is missing from the object store (a corrupt or partial repository) gets
// an error and no proof; the heads beside it are proved as alone.
func TestProveBrokenObjectIsItsHeadsOwn(t *testing.T) {
	t.Parallel()
	z := newProofZoo(t)
	s := z.s
	s.Git(z.dir, "checkout", "-q", "-b", "broken", z.heads["old main"])
	broken := s.CommitFile(z.dir, "broken.txt", "content that goes missing\n")
	blob := s.Rev(z.dir, broken+":broken.txt")
	// Off the branch: git's diff would read the checkout's file instead.
	s.Git(z.dir, "checkout", "-q", "main")
	if err := os.Remove(filepath.Join(z.dir, ".git", "objects", blob[:2], blob[2:])); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	heads := []string{z.heads["patch"], broken, z.heads["squash"], z.heads["lost"], z.heads["held by a merge"]}
	got := proof.ProveAll(ctx, s.G, z.repo, heads, z.v)
	if r := got[broken]; r.Proof != nil || r.Err == nil {
		t.Errorf("the broken head: %+v, want an error and no proof", r)
	}
	for _, h := range heads {
		if h == broken {
			continue
		}
		p, err := proof.Prove(ctx, s.G, z.repo, h, z.v)
		if d := cmp.Diff(proof.ProofResult{Proof: p, Err: err}, got[h], gitsandbox.ResultOpts); d != "" {
			t.Errorf("%s beside a broken head: (-alone +batch)\n%s", h, d)
		}
	}
}

// TestProveCancelledBatch: a batch whose context ends gets an error for
// every head, no proof, and returns.
func TestProveCancelledBatch(t *testing.T) {
	t.Parallel()
	z := newProofZoo(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var heads []string
	for _, k := range z.kinds() {
		heads = append(heads, z.heads[k])
	}
	got := proof.ProveAll(ctx, z.s.G, z.repo, heads, z.v)
	for _, k := range z.kinds() {
		r := got[z.heads[k]]
		if r.Proof != nil && r.Proof.Kind != machine.ProofAncestry {
			t.Errorf("%s: proved %+v with the context ended", k, r.Proof)
		}
		if r.Proof == nil && r.Err == nil && k != "lost" && k != "empty" {
			t.Errorf("%s: neither proof nor error with the context ended", k)
		}
	}
	ps := proof.StartProofs(ctx, z.s.G, z.repo, heads, z.v)
	ps.Wait()
}

// TestProveWorktreeFileIsNotTheCommitsContent: git's diff reads a blob
// from the main checkout's file instead of the object store when the
// index says that file holds the blob and its stat is clean. With
// core.checkStat=minimal and the file's size and mtime kept, the file can
// hold other bytes: the head's change was then hashed as the published
// Commit's, and the head proved squash-merged although its content is on
