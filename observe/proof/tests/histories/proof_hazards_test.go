package histories

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/internal/gitsandbox"
	"github.com/custody-sh/custody/observe/proof"
)

// Hostile and odd histories put to the batched proof search (ProveAll):
// no head may be proved unless every commit of it is on an advertised tip
// (or its content is, for a squash), and no head's result may depend on
// the batch it is proved in.

// proveAlone is every head's result when proved alone.
func proveAlone(ctx context.Context, g *hostio.Git, repo hostio.Repo, heads []string, v *proof.RemoteView) map[string]proof.ProofResult {
	out := map[string]proof.ProofResult{}
	for _, h := range heads {
		p, err := proof.Prove(ctx, g, repo, h, v)
		out[h] = proof.ProofResult{Proof: p, Err: err}
	}
	return out
}

// checkBatchAgrees fails t where ProveAll(heads) differs from each head
// proved alone, and returns the results alone.
func checkBatchAgrees(t *testing.T, s *gitsandbox.Sandbox, repo hostio.Repo, heads []string, v *proof.RemoteView, names map[string]string) map[string]proof.ProofResult {
	t.Helper()
	ctx := context.Background()
	alone := proveAlone(ctx, s.G, repo, heads, v)
	got := proof.ProveAll(ctx, s.G, repo, heads, v)
	for _, h := range heads {
		if d := cmp.Diff(alone[h], got[h], gitsandbox.ResultOpts); d != "" {
			t.Errorf("%s: (-alone +batch)\n%s", names[h], d)
		}
	}
	return alone
}

// TestProveTagObjectHeadIsNotProved: a HEAD that names an annotated tag
// object (a detached HEAD file or a branch ref written by hand with the
// tag's id) whose commit is on no remote is not proved. The walk lists
// the tag's commit, never the tag, so the batch took the tag for a common
// ancestor and proved it by the first tip's ancestry.
func TestProveTagObjectHeadIsNotProved(t *testing.T) {
	t.Parallel()
	s := gitsandbox.NewSandbox(t)
	dir := s.NewOrigin()
	s.Git(dir, "checkout", "-q", "-b", "lost")
	lost := s.CommitFile(dir, "lost.txt", "only here\n")
	s.Git(dir, "tag", "-a", "-m", "a local tag", "local-tag", lost)
	tag := s.Rev(dir, "refs/tags/local-tag")
	if tag == lost {
		t.Fatal("fixture: the tag is not an annotated tag object")
	}
	s.Git(dir, "checkout", "-q", "main")
	repo := s.Discover(dir)
	v := s.Advertise(repo)
	ctx := context.Background()
	if p, err := proof.Prove(ctx, s.G, repo, lost, v); err != nil || p != nil {
		t.Fatalf("fixture: the tag's commit alone: %+v, %v; want no proof", p, err)
	}
	if p, err := proof.Prove(ctx, s.G, repo, tag, v); p != nil {
		t.Errorf("Prove(a tag object of an unpushed commit) = %+v (err %v); want no proof: %s is on no remote", p, err, lost)
	}
	r := proof.ProveAll(ctx, s.G, repo, []string{tag, lost}, v)[tag]
	if r.Proof != nil {
		t.Errorf("ProveAll: the tag object: %+v; want no proof", r.Proof)
	}
}

// TestProveAncestorsOfATagObject: Ancestors, which plan asks first for
// every head, does not take an annotated tag object of an unpushed commit
// for an ancestor of the tip (rev-list lists the tag's commit, never the
// tag, so the tag was never "listed").
func TestProveAncestorsOfATagObject(t *testing.T) {
	t.Parallel()
	s := gitsandbox.NewSandbox(t)
	dir := s.NewOrigin()
	tip := s.Rev(dir, "HEAD")
	s.Git(dir, "checkout", "-q", "-b", "lost")
	lost := s.CommitFile(dir, "lost.txt", "only here\n")
	s.Git(dir, "tag", "-a", "-m", "a local tag", "local-tag", lost)
	tag := s.Rev(dir, "refs/tags/local-tag")
	repo := s.Discover(dir)
	got, err := observe.Ancestors(context.Background(), s.G, repo, tip, []string{tag, lost})
	if err != nil {
		t.Fatal(err)
	}
	if got[lost] {
		t.Fatalf("fixture: %s is an ancestor of %s", lost, tip)
	}
	if got[tag] {
		t.Errorf("Ancestors: the tag object of the unpushed %s is an ancestor of the tip", lost)
	}
}

// TestProveHeadSpelledOtherwise: a head named otherwise than as git's
// walk prints it (upper-case hex, which git reads as the same object, or
// an abbreviation) is not proved by the first tip's ancestry when its
// Commit is on no remote.
func TestProveHeadSpelledOtherwise(t *testing.T) {
	t.Parallel()
	s := gitsandbox.NewSandbox(t)
	dir := s.NewOrigin()
	s.Git(dir, "checkout", "-q", "-b", "lost")
	lost := s.CommitFile(dir, "lost.txt", "only here\n")
	s.Git(dir, "checkout", "-q", "main")
	repo := s.Discover(dir)
	v := s.Advertise(repo)
	ctx := context.Background()
	for _, h := range []string{strings.ToUpper(lost), lost[:12]} {
		if p, err := proof.Prove(ctx, s.G, repo, h, v); p != nil {
			t.Errorf("Prove(%s) = %+v (err %v); want no proof: the commit is on no remote", h, p, err)
		}
	}
}

// TestProveMergeOnATipCostsOneHeadNotAll: a merge on main touching the
// file of one head makes that head ask git its exact path question; the
// other heads, whose paths the merge does not touch, do not (0215: "a
// merge or root commit among a head's candidates is left to git: that
// head asks"), so the processes do not grow with the heads.
func TestProveMergeOnATipCostsOneHeadNotAll(t *testing.T) {
	t.Parallel()
	s := gitsandbox.NewSandbox(t)
	dir := s.NewOrigin()
	base := s.Rev(dir, "HEAD")
	var lost []string
	for i := range 10 {
		s.Git(dir, "checkout", "-q", "-b", fmt.Sprintf("w%d", i), base)
		lost = append(lost, s.CommitFile(dir, fmt.Sprintf("w%d.txt", i), "mine\n"))
	}
	// main: a merged topic that writes w0.txt (someone else's version).
	s.Git(dir, "checkout", "-q", "-b", "topic", base)
	s.CommitFile(dir, "w0.txt", "topic's\n")
	s.Git(dir, "checkout", "-q", "main")
	s.CommitFile(dir, "main.txt", "main moved on\n")
	s.Git(dir, "merge", "-q", "--no-ff", "-m", "merge topic", "topic")
	s.Git(dir, "push", "-q", "origin", "main")
	repo := s.Discover(dir)
	count := func(heads []string) int {
		var buf bytes.Buffer
		v := s.Advertise(repo) // a view of its own: no patch id from the other count
		got := proof.ProveAll(context.Background(), s.Traced(&buf), repo, heads, v)
		for _, h := range heads {
			if r := got[h]; r.Err != nil || r.Proof != nil {
				t.Fatalf("ProveAll: %s: %+v, want no proof", h, r)
			}
		}
		return strings.Count(buf.String(), "\n")
	}
	two := count(lost[:2])
	all := count(lost)
	if all != two {
		t.Errorf("git processes: %d for w0 and w1, %d for w0…w9; want the same (only w0's paths are touched by the merge)", two, all)
	}
}

// TestProveViaDoesNotDependOnTheBatch: a head that deletes a/b/c/d,
// against a main that replaced the directory a/b/c with a file, edited the
// file and made a/b/c/d again. For the path a/b/c/d git lists only the
// commits that change a/b/c/d itself (the replacement, the directory made
// again); the batch's own matching of the commits git listed for the
// union of every head's paths also takes the edit of the file a/b/c ("one
// above"), listed for another head that changes a/b/c, and the edit's
// tree holds the deletion too. Alone the head is proved through the
// replacement; beside that head, through the edit. The proof a plan
// records and the one apply finds alone must be one.
func TestProveViaDoesNotDependOnTheBatch(t *testing.T) {
	t.Parallel()
	s := gitsandbox.NewSandbox(t)
	dir := s.NewOrigin()
	s.CommitFile(dir, "a/b/c/d", "d0\n")
	s.Git(dir, "push", "-q", "origin", "main")
	b := s.Rev(dir, "HEAD")
	s.Git(dir, "checkout", "-q", "-b", "del", b)
	s.Git(dir, "rm", "-q", "a/b/c/d")
	del := s.CommitAll(dir, "delete a/b/c/d")
	s.Git(dir, "checkout", "-q", "main")
	s.Git(dir, "rm", "-q", "a/b/c/d")
	s.Write(dir, "a/b/c", "file 1\n")
	replaced := s.CommitAll(dir, "a/b/c becomes a file")
	edited := s.CommitFile(dir, "a/b/c", "file 2\n")
	s.Git(dir, "checkout", "-q", "-b", "k", edited)
	k := s.CommitFile(dir, "a/b/c", "file 3, not pushed\n")
	s.Git(dir, "checkout", "-q", "main")
	s.Git(dir, "rm", "-q", "a/b/c")
	s.Write(dir, "a/b/c/d", "other\n")
	s.CommitAll(dir, "a/b/c is a directory again")
	s.Git(dir, "push", "-q", "origin", "main")
	repo := s.Discover(dir)
	v := s.Advertise(repo)
	ctx := context.Background()
	alone, err := proof.Prove(ctx, s.G, repo, del, v)
	if err != nil || alone == nil || alone.Kind != machine.ProofSquashMerged {
		t.Fatalf("alone: %+v, %v; want squash-merged", alone, err)
	}
	batch := proof.ProveAll(ctx, s.G, repo, []string{del, k}, v)[del]
	if d := cmp.Diff(proof.ProofResult{Proof: alone}, batch, gitsandbox.ResultOpts); d != "" {
		t.Errorf("beside k: (-alone +batch)\n%s\n(the file edit is %s, the replacement %s)", d, edited, replaced)
	}
}

// mergeHeldFixture is a head whose content only a merge on a side branch
// holds: main is Q→R→X (Q the README commit, R adds f=a); P2 (f=b, on
// R) → base (f=c, on branch basebr) → head (f=b again). The side branch
// holds M, a merge of Q and P2 with P2's tree, then an edit of f and a
// no-ff merge of a commit writing k.txt. Walked from the head (the
// per-head search), M's parents are both uninteresting and M differs
// from Q at f: git lists it, and M's tree holds head's f. Walked from the
// batch's bottom R, Q is an irrelevant parent (below the bottom, not it)
// and P2 a relevant one M is TREESAME to: git does not list M.
type mergeHeldFixture struct {
	s     *gitsandbox.Sandbox
	repo  hostio.Repo
	v     *proof.RemoteView
	head  string
	k     string
	merge string
}

func newMergeHeldFixture(t *testing.T) *mergeHeldFixture {
	s := gitsandbox.NewSandbox(t)
	dir := s.NewOrigin()
	f := &mergeHeldFixture{s: s}
	readme := s.Rev(dir, "HEAD")
	root := s.CommitFile(dir, "f", "a\n")
	s.Git(dir, "push", "-q", "origin", "main")
	s.Git(dir, "checkout", "-q", "-b", "work", root)
	p2 := s.CommitFile(dir, "f", "b\n")
	s.CommitFile(dir, "f", "c\n")
	s.Git(dir, "push", "-q", "origin", "HEAD:refs/heads/basebr")
	f.head = s.CommitFile(dir, "f", "b\n")
	s.Git(dir, "checkout", "-q", "-b", "k", root)
	f.k = s.CommitFile(dir, "k.txt", "mine\n")
	f.merge = s.Git(dir, "commit-tree", "-p", readme, "-p", p2, "-m", "merge P2", p2+"^{tree}")
	s.Git(dir, "checkout", "-q", "-b", "side", f.merge)
	y := s.CommitFile(dir, "f", "d\n")
	s.Git(dir, "checkout", "-q", "-b", "side-topic", y)
	s.CommitFile(dir, "k.txt", "topic's\n")
	s.Git(dir, "checkout", "-q", "side")
	s.Git(dir, "merge", "-q", "--no-ff", "-m", "merge side-topic", "side-topic")
	s.Git(dir, "push", "-q", "origin", "side")
	s.Git(dir, "checkout", "-q", "main")
	s.CommitFile(dir, "x.txt", "main moved on\n")
	s.Git(dir, "push", "-q", "origin", "main")
	f.repo = s.Discover(dir)
	f.v = s.Advertise(f.repo)
	return f
}

// TestProveMergeHeldContentFoundAlone: the per-head search (before
// 0215) proved the head squash-merged through the merge M; the batch of
// one head walks from R and misses M.
func TestProveMergeHeldContentFoundAlone(t *testing.T) {
	t.Parallel()
	f := newMergeHeldFixture(t)
	p, err := proof.Prove(context.Background(), f.s.G, f.repo, f.head, f.v)
	if err != nil || p == nil || p.Kind != machine.ProofSquashMerged || p.Via != f.merge {
		t.Errorf("Prove: %+v, %v; want squash-merged via the merge %s on side", p, err, f.merge)
	}
}

// TestProveMergeHeldContentBatchAgrees: the same head alone and beside
// a head whose k.txt the merge on side touches (which sends it to git's
// per-head path search) gets one result.
func TestProveMergeHeldContentBatchAgrees(t *testing.T) {
	t.Parallel()
	f := newMergeHeldFixture(t)
	checkBatchAgrees(t, f.s, f.repo, []string{f.head, f.k}, f.v, map[string]string{f.head: "head held by a merge", f.k: "k"})
}

// TestProveOddHistories: criss-cross merges (two merge bases), a head
// that is a merge base, an octopus, heads that are ancestors of each
// other, a duplicate head, an unrelated history, a head whose own commits
// merge published and unpublished work, and non-commit objects as heads:
// each gets the proof it must (or none), and the same in one batch as
// alone.
func TestProveOddHistories(t *testing.T) {
	t.Parallel()
	s := gitsandbox.NewSandbox(t)
	dir := s.NewOrigin()
	r := s.Rev(dir, "HEAD")
	branch := func(name, from string) { s.Git(dir, "checkout", "-q", "-b", name, from) }
	branch("x", r)
	a := s.CommitFile(dir, "a.txt", "a\n")
	branch("y", r)
	b := s.CommitFile(dir, "b.txt", "b\n")
	// main: M1 = merge(A, B), published. Locally M2 = merge(B, A) with
	// the same tree, then a commit of its own: merge-base --all gives A
	// and B.
	s.Git(dir, "checkout", "-q", "main")
	s.Git(dir, "reset", "-q", "--hard", a)
	s.Git(dir, "merge", "-q", "--no-ff", "-m", "M1", "y")
	m1 := s.Rev(dir, "HEAD")
	branch("cross", b)
	s.Git(dir, "merge", "-q", "--no-ff", "-m", "M2", "x")
	m2 := s.Rev(dir, "HEAD")
	crossTop := s.CommitFile(dir, "cross.txt", "mine\n")
	// An octopus of three published commits, not pushed.
	branch("z", r)
	zc := s.CommitFile(dir, "z.txt", "z\n")
	s.Git(dir, "push", "-q", "origin", "z")
	octo := s.Git(dir, "commit-tree", "-p", m1, "-p", zc, "-p", a, "-m", "octopus", m1+"^{tree}")
	// A stack: low on M1, high on low; low cherry-picked onto main.
	branch("stack", m1)
	low := s.CommitFile(dir, "low.txt", "low\n")
	high := s.CommitFile(dir, "high.txt", "high\n")
	// A head merging published z into unpublished work.
	branch("mix", m1)
	s.CommitFile(dir, "mix.txt", "mine\n")
	s.Git(dir, "merge", "-q", "--no-ff", "-m", "merge z", "z")
	mix := s.Rev(dir, "HEAD")
	// Unrelated history.
	s.Git(dir, "switch", "-q", "--orphan", "orphan")
	orphan := s.CommitFile(dir, "root.txt", "r\n")
	s.Git(dir, "checkout", "-q", "main")
	s.Git(dir, "cherry-pick", low)
	s.Git(dir, "push", "-q", "origin", "main")
	tree := s.Rev(dir, m1+"^{tree}")
	blob := s.Rev(dir, m1+":a.txt")
	repo := s.Discover(dir)
	v := s.Advertise(repo)
	names := map[string]string{a: "merge base A", b: "merge base B", m2: "criss-cross merge", crossTop: "on a criss-cross merge",
		octo: "octopus", low: "picked low", high: "high on picked low", mix: "merge of published z into own work",
		orphan: "unrelated", m1: "published merge", zc: "published on z", tree: "a tree", blob: "a blob"}
	heads := []string{a, b, m2, crossTop, octo, low, high, mix, orphan, m1, zc, low, tree, blob}
	alone := checkBatchAgrees(t, s, repo, heads, v, names)
	want := map[string]machine.ProofKind{a: machine.ProofAncestry, b: machine.ProofAncestry, m1: machine.ProofAncestry,
		zc: machine.ProofAncestry, low: machine.ProofPatchEquivalent}
	for _, h := range heads {
		got := alone[h].Proof
		switch k, ok := want[h]; {
		case ok && (got == nil || got.Kind != k):
			t.Errorf("%s: %+v (err %v), want %s", names[h], got, alone[h].Err, k)
		case !ok && got != nil:
			t.Errorf("%s: %+v, want no proof", names[h], got)
		}
	}
	for _, h := range []string{tree, blob} {
		if alone[h].Err == nil {
			t.Errorf("%s as a head: no error", names[h])
		}
	}
}

// TestProveFirstTipBelowEveryHead: the first tip is an ancestor of every
// head (the batch's bottom is the tip itself); heads published on another
// branch, patched or squashed onto it, or on none, are proved as alone.
func TestProveFirstTipBelowEveryHead(t *testing.T) {
	t.Parallel()
	s := gitsandbox.NewSandbox(t)
	dir := s.NewOrigin()
	r := s.Rev(dir, "HEAD")
	s.Git(dir, "checkout", "-q", "-b", "rel", r)
	onRel := s.CommitFile(dir, "rel.txt", "r\n")
	s.Git(dir, "checkout", "-q", "-b", "pick", onRel)
	pick := s.CommitFile(dir, "pick.txt", "p\n")
	s.Git(dir, "checkout", "-q", "-b", "sq", onRel)
	s.CommitFile(dir, "sq1", "1\n")
	sq := s.CommitFile(dir, "sq2", "2\n")
	s.Git(dir, "checkout", "-q", "-b", "lost", onRel)
	lost := s.CommitFile(dir, "lost.txt", "l\n")
	s.Git(dir, "checkout", "-q", "rel")
	s.Git(dir, "cherry-pick", pick)
	s.Git(dir, "merge", "-q", "--squash", "sq")
	s.CommitAll(dir, "squash sq")
	s.Git(dir, "push", "-q", "origin", "rel")
	repo := s.Discover(dir)
	v := s.Advertise(repo)
	if v.Tips[0].Ref != "refs/heads/main" || v.Tips[0].Commit != r {
		t.Fatalf("first tip %+v, want main at %s", v.Tips[0], r)
	}
	names := map[string]string{r: "the first tip", onRel: "on rel", pick: "picked", sq: "squashed", lost: "lost"}
	alone := checkBatchAgrees(t, s, repo, []string{lost, pick, sq, onRel, r}, v, names)
	want := map[string]machine.ProofKind{r: machine.ProofAncestry, onRel: machine.ProofAncestry,
		pick: machine.ProofPatchEquivalent, sq: machine.ProofSquashMerged}
	for h, k := range want {
		if p := alone[h].Proof; p == nil || p.Kind != k {
			t.Errorf("%s: %+v, want %s", names[h], p, k)
		}
	}
	if alone[lost].Proof != nil || alone[lost].Err != nil {
		t.Errorf("lost: %+v", alone[lost])
	}
}

// TestProveReplaceRefsAndGraftsProveNothing: a replace ref or a graft
// that makes the advertised tip look like a descendant of an unpushed
// Commit does not prove that commit, in a batch or alone: git's view
// of the history is read without them.
func TestProveReplaceRefsAndGraftsProveNothing(t *testing.T) {
	t.Parallel()
	s := gitsandbox.NewSandbox(t)
	dir := s.NewOrigin()
	base := s.Rev(dir, "HEAD")
	s.Git(dir, "checkout", "-q", "-b", "lost", base)
	lost := s.CommitFile(dir, "lost.txt", "only here\n")
	lost2 := s.CommitFile(dir, "lost2.txt", "only here too\n")
	s.Git(dir, "checkout", "-q", "main")
	tip := s.CommitFile(dir, "main.txt", "main\n")
	s.Git(dir, "push", "-q", "origin", "main")
	// main's tip grafted onto lost2, by a replace ref and by a graft file.
	s.Git(dir, "replace", "--graft", tip, lost2)
	s.Write(dir, ".git/info/grafts", tip+" "+lost2+"\n")
	if got := s.Git(dir, "rev-list", tip); !strings.Contains(got, lost) {
		t.Fatalf("fixture: the graft does not show %s below main:\n%s", lost, got)
	}
	repo := s.Discover(dir)
	v := s.Advertise(repo)
	names := map[string]string{lost: "lost", lost2: "lost2", tip: "tip"}
	alone := checkBatchAgrees(t, s, repo, []string{lost, lost2, tip}, v, names)
	for _, h := range []string{lost, lost2} {
		if alone[h].Proof != nil {
			t.Errorf("%s: proved %+v through a replace ref or graft", names[h], alone[h].Proof)
		}
	}
}

// TestProveShallowClone: in a shallow clone (history cut below the
// tips) a head on the shallow tip is proved as alone in a batch, and a
// head whose own commits reach below the cut is not proved.
func TestProveShallowClone(t *testing.T) {
	t.Parallel()
	s := gitsandbox.NewSandbox(t)
	dir := s.NewOrigin()
	for i := range 4 {
		s.CommitFile(dir, fmt.Sprintf("h%d", i), "history\n")
	}
	s.Git(dir, "push", "-q", "origin", "main")
	shallow := s.Root + "/shallow"
	s.Git(s.Root, "clone", "-q", "--depth=2", "file://"+s.Remote, shallow)
	old := s.Rev(shallow, "HEAD~1")
	s.Git(shallow, "checkout", "-q", "-b", "pick")
	pick := s.CommitFile(shallow, "pick.txt", "p\n")
	s.Git(shallow, "checkout", "-q", "-b", "onold", old)
	onOld := s.CommitFile(shallow, "onold.txt", "o\n")
	s.Git(shallow, "checkout", "-q", "-b", "lost", "main")
	lost := s.CommitFile(shallow, "lost.txt", "l\n")
	s.Git(shallow, "checkout", "-q", "main")
	s.Git(shallow, "cherry-pick", pick)
	s.Git(shallow, "push", "-q", "origin", "main")
	repo := s.Discover(shallow)
	v := s.Advertise(repo)
	names := map[string]string{pick: "picked", onOld: "on the shallow boundary", lost: "lost", old: "the boundary"}
	alone := checkBatchAgrees(t, s, repo, []string{pick, onOld, lost, old}, v, names)
	if p := alone[pick].Proof; p == nil || p.Kind != machine.ProofPatchEquivalent {
		t.Errorf("picked: %+v, want patch-equivalent", alone[pick])
	}
	if p := alone[old].Proof; p == nil || p.Kind != machine.ProofAncestry {
		t.Errorf("the boundary: %+v, want ancestry", alone[old])
	}
	for _, h := range []string{onOld, lost} {
		if alone[h].Proof != nil {
			t.Errorf("%s: %+v, want no proof", names[h], alone[h].Proof)
		}
	}
}

// TestProveAwkwardPathsInOneBatch: heads with names git quotes, globs,
// a leading dash and a newline (which no --stdin protocol can carry, so
// that head is not searched) are proved in one batch as alone, and the
// newline head does not stop the others.
func TestProveAwkwardPathsInOneBatch(t *testing.T) {
	t.Parallel()
	s := gitsandbox.NewSandbox(t)
	dir := s.NewOrigin()
	base := s.Rev(dir, "HEAD")
	heads := map[string]string{}
	for _, n := range []string{"tab\there.txt", `q"uote.txt`, "ü.txt", "-dash.txt", "*.txt", "[ab].txt", "new\nline.txt"} {
		s.Git(dir, "checkout", "-q", "-b", fmt.Sprintf("b%d", len(heads)), base)
		heads[s.CommitFile(dir, n, "content of "+n+"\n")] = n
	}
	s.Git(dir, "checkout", "-q", "main")
	s.CommitFile(dir, "a.txt", "the glob [ab].txt matches it\n")
	var hs []string
	for h, n := range heads {
		hs = append(hs, h)
		if n != "ü.txt" && n != "new\nline.txt" {
			s.Git(dir, "cherry-pick", h)
		}
	}
	s.Git(dir, "push", "-q", "origin", "main")
	repo := s.Discover(dir)
	v := s.Advertise(repo)
	alone := checkBatchAgrees(t, s, repo, hs, v, heads)
	for h, n := range heads {
		r := alone[h]
		switch n {
		case "ü.txt", "new\nline.txt":
			if r.Proof != nil || r.Err != nil {
				t.Errorf("%q: %+v, want no proof", n, r)
			}
		default:
			if r.Proof == nil || r.Proof.Kind != machine.ProofPatchEquivalent {
				t.Errorf("%q: %+v (err %v), want patch-equivalent", n, r.Proof, r.Err)
			}
		}
	}
}

// TestProveRootOnATipCostsOneHeadNotAll: an advertised branch of its
// own history (a pages branch) whose root adds a file one head also adds
// makes that head ask git its exact path question, not every head.
func TestProveRootOnATipCostsOneHeadNotAll(t *testing.T) {
	t.Parallel()
	s := gitsandbox.NewSandbox(t)
	dir := s.NewOrigin()
	base := s.Rev(dir, "HEAD")
	var lost []string
	for i := range 10 {
		s.Git(dir, "checkout", "-q", "-b", fmt.Sprintf("w%d", i), base)
		lost = append(lost, s.CommitFile(dir, fmt.Sprintf("w%d.txt", i), "mine\n"))
	}
	s.Git(dir, "switch", "-q", "--orphan", "pages")
	s.CommitFile(dir, "w0.txt", "a page\n")
	s.Git(dir, "push", "-q", "origin", "pages")
	s.Git(dir, "checkout", "-q", "main")
	s.CommitFile(dir, "main.txt", "main moved on\n")
	s.Git(dir, "push", "-q", "origin", "main")
	repo := s.Discover(dir)
	count := func(heads []string) int {
		var buf bytes.Buffer
		v := s.Advertise(repo) // a view of its own: no patch id from the other count
		got := proof.ProveAll(context.Background(), s.Traced(&buf), repo, heads, v)
		for _, h := range heads {
			if r := got[h]; r.Err != nil || r.Proof != nil {
				t.Fatalf("ProveAll: %s: %+v, want no proof", h, r)
			}
		}
		return strings.Count(buf.String(), "\n")
	}
	if two, all := count(lost[:2]), count(lost); all != two {
		t.Errorf("git processes: %d for w0 and w1, %d for w0…w9; want the same (only w0's path is touched by the root)", two, all)
	}
}

// no remote.
func TestProveWorktreeFileIsNotTheCommitsContent(t *testing.T) {
	t.Parallel()
	s := gitsandbox.NewSandbox(t)
	dir := s.NewOrigin()
	base := s.Rev(dir, "HEAD")
	s.Git(dir, "checkout", "-q", "-b", "pub", base)
	s.CommitFile(dir, "f.txt", "YYYY published\n")
	s.Git(dir, "push", "-q", "origin", "HEAD:main")
	s.Git(dir, "checkout", "-q", "-b", "work", base)
	head := s.CommitFile(dir, "f.txt", "XXXX only here\n")
	// The main checkout's f.txt: the head's blob in the index, stat clean,
	// the published bytes on disk.
	s.Git(dir, "config", "core.checkStat", "minimal")
	p := filepath.Join(dir, "f.txt")
	old := time.Unix(1600000000, 0)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	s.Git(dir, "update-index", "--refresh")
	if err := os.WriteFile(p, []byte("YYYY published\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	if got := s.Git(dir, "show", head+":f.txt"); got != "XXXX only here" {
		t.Fatalf("fixture: the head's f.txt is %q", got)
	}
	repo := s.Discover(dir)
	v := s.Advertise(repo)
	if pr, err := proof.Prove(context.Background(), s.G, repo, head, v); pr != nil {
		t.Errorf("Prove: %+v (err %v); want no proof: \"XXXX only here\" is on no remote", pr, err)
	}
}

// gitDated runs git in dir as s.git does, with every date at unix.
func gitDated(s *gitsandbox.Sandbox, dir string, unix int64, args ...string) string {
	s.T.Helper()
	date := fmt.Sprintf("@%d +0000", unix)
	var env []string
	for _, kv := range s.Env() {
		if !strings.HasPrefix(kv, "GIT_AUTHOR_DATE=") && !strings.HasPrefix(kv, "GIT_COMMITTER_DATE=") {
			env = append(env, kv)
		}
	}
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(env, "GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date)
	out, err := cmd.Output()
	if err != nil {
		s.T.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimRight(string(out), "\n")
}

// TestProveSameSecondCommitsDoNotReorderTheBatch: two branches each hold
// a commit whose tree has the head's content, all made in the same second
// (a script, a rebase). Which one names the squash (Via) follows git's
// walk order, which for equal times is the order commits were reached;
// another head of the batch, newer and on one of the branches, reaches
// that branch's commit first. The proof must not depend on the batch.
func TestProveSameSecondCommitsDoNotReorderTheBatch(t *testing.T) {
	t.Parallel()
	s := gitsandbox.NewSandbox(t)
	dir := s.NewOrigin()
	b := s.Rev(dir, "HEAD")
	const d = 1767300000
	commit := func(parent, file, content, msg string) string {
		gitDated(s, dir, d, "checkout", "-q", "--detach", parent)
		s.Write(dir, file, content)
		gitDated(s, dir, d, "add", "-A")
		gitDated(s, dir, d, "commit", "-q", "-m", msg)
		return gitDated(s, dir, d, "rev-parse", "HEAD")
	}
	head := commit(b, "f", "X\n", "the head's f")
	var holders []string
	for i := range 2 {
		y := commit(b, "f", fmt.Sprintf("other %d\n", i), "someone's f")
		x := commit(y, "f", "X\n", "the head's f again")
		holders = append(holders, x)
		tip := commit(x, "f", fmt.Sprintf("moved on %d\n", i), "f moves on")
		s.Git(dir, "push", "-q", "origin", fmt.Sprintf("%s:refs/heads/t%d", tip, i))
	}
	// A newer head on the second branch's holder.
	gitDated(s, dir, d+100, "checkout", "-q", "--detach", holders[1])
	s.Write(dir, "k.txt", "mine\n")
	gitDated(s, dir, d+100, "add", "-A")
	gitDated(s, dir, d+100, "commit", "-q", "-m", "newer work")
	k := gitDated(s, dir, d+100, "rev-parse", "HEAD")
	s.Git(dir, "checkout", "-q", "main")
	repo := s.Discover(dir)
	v := s.Advertise(repo)
	ctx := context.Background()
	alone, err := proof.Prove(ctx, s.G, repo, head, v)
	if err != nil || alone == nil || alone.Kind != machine.ProofSquashMerged {
		t.Fatalf("alone: %+v, %v; want squash-merged", alone, err)
	}
	batch := proof.ProveAll(ctx, s.G, repo, []string{head, k}, v)[head]
	if d := cmp.Diff(proof.ProofResult{Proof: alone}, batch, gitsandbox.ResultOpts); d != "" {
		t.Errorf("beside a newer head: (-alone +batch)\n%s\n(holders %v)", d, holders)
	}
}

// TestProveSHA256Repository: in a repository of 64-digit object ids the
// batch proves a picked, a squashed, a published and a lost head as alone.
func TestProveSHA256Repository(t *testing.T) {
	t.Parallel()
	s := gitsandbox.NewSandbox(t)
	s.Remote = filepath.Join(s.Root, "origin.git")
	if _, err := s.TryGit(s.Root, "init", "-q", "--bare", "--object-format=sha256", "-b", "main", s.Remote); err != nil {
		t.Skip("git without sha256 repositories")
	}
	dir := filepath.Join(s.Root, "repo")
	s.Git(s.Root, "init", "-q", "--object-format=sha256", "-b", "main", dir)
	base := s.CommitFile(dir, "README", "fixture\n")
	s.Git(dir, "remote", "add", "origin", s.Remote)
	s.Git(dir, "push", "-q", "-u", "origin", "main")
	if len(base) != 64 {
		t.Fatalf("fixture: %s is not a sha256 id", base)
	}
	s.Git(dir, "checkout", "-q", "-b", "pick", base)
	pick := s.CommitFile(dir, "pick.txt", "p\n")
	s.Git(dir, "checkout", "-q", "-b", "sq", base)
	s.CommitFile(dir, "sq1", "1\n")
	sq := s.CommitFile(dir, "sq2", "2\n")
	s.Git(dir, "checkout", "-q", "-b", "lost", base)
	lost := s.CommitFile(dir, "lost.txt", "l\n")
	s.Git(dir, "checkout", "-q", "main")
	s.Git(dir, "cherry-pick", pick)
	s.Git(dir, "merge", "-q", "--squash", "sq")
	s.CommitAll(dir, "squash sq")
	s.CommitFile(dir, "sq1", "edited\n")
	s.Git(dir, "push", "-q", "origin", "main")
	repo := s.Discover(dir)
	v := s.Advertise(repo)
	names := map[string]string{pick: "picked", sq: "squashed", lost: "lost", base: "published"}
	alone := checkBatchAgrees(t, s, repo, []string{pick, sq, lost, base}, v, names)
	want := map[string]machine.ProofKind{pick: machine.ProofPatchEquivalent, sq: machine.ProofSquashMerged, base: machine.ProofAncestry}
	for h, k := range want {
		if p := alone[h].Proof; p == nil || p.Kind != k {
			t.Errorf("%s: %+v (err %v), want %s", names[h], p, alone[h].Err, k)
		}
	}
	if r := alone[lost]; r.Proof != nil || r.Err != nil {
		t.Errorf("lost: %+v", r)
	}
}
