package observe_test

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
)

// Hostile and odd histories put to the batched proof search (ProveAll):
// no head may be proved unless every commit of it is on an advertised tip
// (or its content is, for a squash), and no head's result may depend on
// the batch it is proved in.

// proveAlone is every head's result when proved alone.
func proveAlone(ctx context.Context, g *observe.Git, repo observe.Repo, heads []string, v *observe.RemoteView) map[string]observe.ProofResult {
	out := map[string]observe.ProofResult{}
	for _, h := range heads {
		p, err := observe.Prove(ctx, g, repo, h, v)
		out[h] = observe.ProofResult{Proof: p, Err: err}
	}
	return out
}

// checkBatchAgrees fails t where ProveAll(heads) differs from each head
// proved alone, and returns the results alone.
func checkBatchAgrees(t *testing.T, s *sandbox, repo observe.Repo, heads []string, v *observe.RemoteView, names map[string]string) map[string]observe.ProofResult {
	t.Helper()
	ctx := context.Background()
	alone := proveAlone(ctx, s.g, repo, heads, v)
	got := observe.ProveAll(ctx, s.g, repo, heads, v)
	for _, h := range heads {
		if d := cmp.Diff(alone[h], got[h], resultOpts); d != "" {
			t.Errorf("%s: (-alone +batch)\n%s", names[h], d)
		}
	}
	return alone
}

// TestRedteamTagObjectHeadIsNotProved: a HEAD that names an annotated tag
// object (a detached HEAD file or a branch ref written by hand with the
// tag's id) whose commit is on no remote is not proved. The walk lists
// the tag's commit, never the tag, so the batch took the tag for a common
// ancestor and proved it by the first tip's ancestry.
func TestRedteamTagObjectHeadIsNotProved(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	dir := s.newOrigin()
	s.git(dir, "checkout", "-q", "-b", "lost")
	lost := s.commitFile(dir, "lost.txt", "only here\n")
	s.git(dir, "tag", "-a", "-m", "a local tag", "local-tag", lost)
	tag := s.rev(dir, "refs/tags/local-tag")
	if tag == lost {
		t.Fatal("fixture: the tag is not an annotated tag object")
	}
	s.git(dir, "checkout", "-q", "main")
	repo := s.discover(dir)
	v := s.advertise(repo)
	ctx := context.Background()
	if p, err := observe.Prove(ctx, s.g, repo, lost, v); err != nil || p != nil {
		t.Fatalf("fixture: the tag's commit alone: %+v, %v; want no proof", p, err)
	}
	if p, err := observe.Prove(ctx, s.g, repo, tag, v); p != nil {
		t.Errorf("Prove(a tag object of an unpushed commit) = %+v (err %v); want no proof: %s is on no remote", p, err, lost)
	}
	r := observe.ProveAll(ctx, s.g, repo, []string{tag, lost}, v)[tag]
	if r.Proof != nil {
		t.Errorf("ProveAll: the tag object: %+v; want no proof", r.Proof)
	}
}

// TestRedteamAncestorsOfATagObject: Ancestors, which plan asks first for
// every head, does not take an annotated tag object of an unpushed commit
// for an ancestor of the tip (rev-list lists the tag's commit, never the
// tag, so the tag was never "listed").
func TestRedteamAncestorsOfATagObject(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	dir := s.newOrigin()
	tip := s.rev(dir, "HEAD")
	s.git(dir, "checkout", "-q", "-b", "lost")
	lost := s.commitFile(dir, "lost.txt", "only here\n")
	s.git(dir, "tag", "-a", "-m", "a local tag", "local-tag", lost)
	tag := s.rev(dir, "refs/tags/local-tag")
	repo := s.discover(dir)
	got, err := observe.Ancestors(context.Background(), s.g, repo, tip, []string{tag, lost})
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

// TestRedteamHeadSpelledOtherwise: a head named otherwise than as git's
// walk prints it (upper-case hex, which git reads as the same object, or
// an abbreviation) is not proved by the first tip's ancestry when its
// commit is on no remote.
func TestRedteamHeadSpelledOtherwise(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	dir := s.newOrigin()
	s.git(dir, "checkout", "-q", "-b", "lost")
	lost := s.commitFile(dir, "lost.txt", "only here\n")
	s.git(dir, "checkout", "-q", "main")
	repo := s.discover(dir)
	v := s.advertise(repo)
	ctx := context.Background()
	for _, h := range []string{strings.ToUpper(lost), lost[:12]} {
		if p, err := observe.Prove(ctx, s.g, repo, h, v); p != nil {
			t.Errorf("Prove(%s) = %+v (err %v); want no proof: the commit is on no remote", h, p, err)
		}
	}
}

// TestRedteamMergeOnATipCostsOneHeadNotAll: a merge on main touching the
// file of one head makes that head ask git its exact path question; the
// other heads, whose paths the merge does not touch, do not (0215: "a
// merge or root commit among a head's candidates is left to git: that
// head asks"), so the processes do not grow with the heads.
func TestRedteamMergeOnATipCostsOneHeadNotAll(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	dir := s.newOrigin()
	base := s.rev(dir, "HEAD")
	var lost []string
	for i := range 10 {
		s.git(dir, "checkout", "-q", "-b", fmt.Sprintf("w%d", i), base)
		lost = append(lost, s.commitFile(dir, fmt.Sprintf("w%d.txt", i), "mine\n"))
	}
	// main: a merged topic that writes w0.txt (someone else's version).
	s.git(dir, "checkout", "-q", "-b", "topic", base)
	s.commitFile(dir, "w0.txt", "topic's\n")
	s.git(dir, "checkout", "-q", "main")
	s.commitFile(dir, "main.txt", "main moved on\n")
	s.git(dir, "merge", "-q", "--no-ff", "-m", "merge topic", "topic")
	s.git(dir, "push", "-q", "origin", "main")
	repo := s.discover(dir)
	count := func(heads []string) int {
		var buf bytes.Buffer
		v := s.advertise(repo) // a view of its own: no patch id from the other count
		got := observe.ProveAll(context.Background(), s.traced(&buf), repo, heads, v)
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

// TestRedteamViaDoesNotDependOnTheBatch: a head that deletes a/b/c/d,
// against a main that replaced the directory a/b/c with a file, edited the
// file and made a/b/c/d again. For the path a/b/c/d git lists only the
// commits that change a/b/c/d itself (the replacement, the directory made
// again); the batch's own matching of the commits git listed for the
// union of every head's paths also takes the edit of the file a/b/c ("one
// above"), listed for another head that changes a/b/c, and the edit's
// tree holds the deletion too. Alone the head is proved through the
// replacement; beside that head, through the edit. The proof a plan
// records and the one apply finds alone must be one.
func TestRedteamViaDoesNotDependOnTheBatch(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	dir := s.newOrigin()
	s.commitFile(dir, "a/b/c/d", "d0\n")
	s.git(dir, "push", "-q", "origin", "main")
	b := s.rev(dir, "HEAD")
	s.git(dir, "checkout", "-q", "-b", "del", b)
	s.git(dir, "rm", "-q", "a/b/c/d")
	del := s.commitAll(dir, "delete a/b/c/d")
	s.git(dir, "checkout", "-q", "main")
	s.git(dir, "rm", "-q", "a/b/c/d")
	s.write(dir, "a/b/c", "file 1\n")
	replaced := s.commitAll(dir, "a/b/c becomes a file")
	edited := s.commitFile(dir, "a/b/c", "file 2\n")
	s.git(dir, "checkout", "-q", "-b", "k", edited)
	k := s.commitFile(dir, "a/b/c", "file 3, not pushed\n")
	s.git(dir, "checkout", "-q", "main")
	s.git(dir, "rm", "-q", "a/b/c")
	s.write(dir, "a/b/c/d", "other\n")
	s.commitAll(dir, "a/b/c is a directory again")
	s.git(dir, "push", "-q", "origin", "main")
	repo := s.discover(dir)
	v := s.advertise(repo)
	ctx := context.Background()
	alone, err := observe.Prove(ctx, s.g, repo, del, v)
	if err != nil || alone == nil || alone.Kind != machine.ProofSquashMerged {
		t.Fatalf("alone: %+v, %v; want squash-merged", alone, err)
	}
	batch := observe.ProveAll(ctx, s.g, repo, []string{del, k}, v)[del]
	if d := cmp.Diff(observe.ProofResult{Proof: alone}, batch, resultOpts); d != "" {
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
	s     *sandbox
	repo  observe.Repo
	v     *observe.RemoteView
	head  string
	k     string
	merge string
}

func newMergeHeldFixture(t *testing.T) *mergeHeldFixture {
	s := newSandbox(t)
	dir := s.newOrigin()
	f := &mergeHeldFixture{s: s}
	readme := s.rev(dir, "HEAD")
	root := s.commitFile(dir, "f", "a\n")
	s.git(dir, "push", "-q", "origin", "main")
	s.git(dir, "checkout", "-q", "-b", "work", root)
	p2 := s.commitFile(dir, "f", "b\n")
	s.commitFile(dir, "f", "c\n")
	s.git(dir, "push", "-q", "origin", "HEAD:refs/heads/basebr")
	f.head = s.commitFile(dir, "f", "b\n")
	s.git(dir, "checkout", "-q", "-b", "k", root)
	f.k = s.commitFile(dir, "k.txt", "mine\n")
	f.merge = s.git(dir, "commit-tree", "-p", readme, "-p", p2, "-m", "merge P2", p2+"^{tree}")
	s.git(dir, "checkout", "-q", "-b", "side", f.merge)
	y := s.commitFile(dir, "f", "d\n")
	s.git(dir, "checkout", "-q", "-b", "side-topic", y)
	s.commitFile(dir, "k.txt", "topic's\n")
	s.git(dir, "checkout", "-q", "side")
	s.git(dir, "merge", "-q", "--no-ff", "-m", "merge side-topic", "side-topic")
	s.git(dir, "push", "-q", "origin", "side")
	s.git(dir, "checkout", "-q", "main")
	s.commitFile(dir, "x.txt", "main moved on\n")
	s.git(dir, "push", "-q", "origin", "main")
	f.repo = s.discover(dir)
	f.v = s.advertise(f.repo)
	return f
}

// TestRedteamMergeHeldContentFoundAlone: the per-head search (before
// 0215) proved the head squash-merged through the merge M; the batch of
// one head walks from R and misses M.
func TestRedteamMergeHeldContentFoundAlone(t *testing.T) {
	t.Parallel()
	f := newMergeHeldFixture(t)
	p, err := observe.Prove(context.Background(), f.s.g, f.repo, f.head, f.v)
	if err != nil || p == nil || p.Kind != machine.ProofSquashMerged || p.Via != f.merge {
		t.Errorf("Prove: %+v, %v; want squash-merged via the merge %s on side", p, err, f.merge)
	}
}

// TestRedteamMergeHeldContentBatchAgrees: the same head alone and beside
// a head whose k.txt the merge on side touches (which sends it to git's
// per-head path search) gets one result.
func TestRedteamMergeHeldContentBatchAgrees(t *testing.T) {
	t.Parallel()
	f := newMergeHeldFixture(t)
	checkBatchAgrees(t, f.s, f.repo, []string{f.head, f.k}, f.v, map[string]string{f.head: "head held by a merge", f.k: "k"})
}

// TestRedteamOddHistories: criss-cross merges (two merge bases), a head
// that is a merge base, an octopus, heads that are ancestors of each
// other, a duplicate head, an unrelated history, a head whose own commits
// merge published and unpublished work, and non-commit objects as heads:
// each gets the proof it must (or none), and the same in one batch as
// alone.
func TestRedteamOddHistories(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	dir := s.newOrigin()
	r := s.rev(dir, "HEAD")
	branch := func(name, from string) { s.git(dir, "checkout", "-q", "-b", name, from) }
	branch("x", r)
	a := s.commitFile(dir, "a.txt", "a\n")
	branch("y", r)
	b := s.commitFile(dir, "b.txt", "b\n")
	// main: M1 = merge(A, B), published. Locally M2 = merge(B, A) with
	// the same tree, then a commit of its own: merge-base --all gives A
	// and B.
	s.git(dir, "checkout", "-q", "main")
	s.git(dir, "reset", "-q", "--hard", a)
	s.git(dir, "merge", "-q", "--no-ff", "-m", "M1", "y")
	m1 := s.rev(dir, "HEAD")
	branch("cross", b)
	s.git(dir, "merge", "-q", "--no-ff", "-m", "M2", "x")
	m2 := s.rev(dir, "HEAD")
	crossTop := s.commitFile(dir, "cross.txt", "mine\n")
	// An octopus of three published commits, not pushed.
	branch("z", r)
	zc := s.commitFile(dir, "z.txt", "z\n")
	s.git(dir, "push", "-q", "origin", "z")
	octo := s.git(dir, "commit-tree", "-p", m1, "-p", zc, "-p", a, "-m", "octopus", m1+"^{tree}")
	// A stack: low on M1, high on low; low cherry-picked onto main.
	branch("stack", m1)
	low := s.commitFile(dir, "low.txt", "low\n")
	high := s.commitFile(dir, "high.txt", "high\n")
	// A head merging published z into unpublished work.
	branch("mix", m1)
	s.commitFile(dir, "mix.txt", "mine\n")
	s.git(dir, "merge", "-q", "--no-ff", "-m", "merge z", "z")
	mix := s.rev(dir, "HEAD")
	// Unrelated history.
	s.git(dir, "switch", "-q", "--orphan", "orphan")
	orphan := s.commitFile(dir, "root.txt", "r\n")
	s.git(dir, "checkout", "-q", "main")
	s.git(dir, "cherry-pick", low)
	s.git(dir, "push", "-q", "origin", "main")
	tree := s.rev(dir, m1+"^{tree}")
	blob := s.rev(dir, m1+":a.txt")
	repo := s.discover(dir)
	v := s.advertise(repo)
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

// TestRedteamFirstTipBelowEveryHead: the first tip is an ancestor of every
// head (the batch's bottom is the tip itself); heads published on another
// branch, patched or squashed onto it, or on none, are proved as alone.
func TestRedteamFirstTipBelowEveryHead(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	dir := s.newOrigin()
	r := s.rev(dir, "HEAD")
	s.git(dir, "checkout", "-q", "-b", "rel", r)
	onRel := s.commitFile(dir, "rel.txt", "r\n")
	s.git(dir, "checkout", "-q", "-b", "pick", onRel)
	pick := s.commitFile(dir, "pick.txt", "p\n")
	s.git(dir, "checkout", "-q", "-b", "sq", onRel)
	s.commitFile(dir, "sq1", "1\n")
	sq := s.commitFile(dir, "sq2", "2\n")
	s.git(dir, "checkout", "-q", "-b", "lost", onRel)
	lost := s.commitFile(dir, "lost.txt", "l\n")
	s.git(dir, "checkout", "-q", "rel")
	s.git(dir, "cherry-pick", pick)
	s.git(dir, "merge", "-q", "--squash", "sq")
	s.commitAll(dir, "squash sq")
	s.git(dir, "push", "-q", "origin", "rel")
	repo := s.discover(dir)
	v := s.advertise(repo)
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

// TestRedteamReplaceRefsAndGraftsProveNothing: a replace ref or a graft
// that makes the advertised tip look like a descendant of an unpushed
// commit does not prove that commit, in a batch or alone: git's view
// of the history is read without them.
func TestRedteamReplaceRefsAndGraftsProveNothing(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	dir := s.newOrigin()
	base := s.rev(dir, "HEAD")
	s.git(dir, "checkout", "-q", "-b", "lost", base)
	lost := s.commitFile(dir, "lost.txt", "only here\n")
	lost2 := s.commitFile(dir, "lost2.txt", "only here too\n")
	s.git(dir, "checkout", "-q", "main")
	tip := s.commitFile(dir, "main.txt", "main\n")
	s.git(dir, "push", "-q", "origin", "main")
	// main's tip grafted onto lost2, by a replace ref and by a graft file.
	s.git(dir, "replace", "--graft", tip, lost2)
	s.write(dir, ".git/info/grafts", tip+" "+lost2+"\n")
	if got := s.git(dir, "rev-list", tip); !strings.Contains(got, lost) {
		t.Fatalf("fixture: the graft does not show %s below main:\n%s", lost, got)
	}
	repo := s.discover(dir)
	v := s.advertise(repo)
	names := map[string]string{lost: "lost", lost2: "lost2", tip: "tip"}
	alone := checkBatchAgrees(t, s, repo, []string{lost, lost2, tip}, v, names)
	for _, h := range []string{lost, lost2} {
		if alone[h].Proof != nil {
			t.Errorf("%s: proved %+v through a replace ref or graft", names[h], alone[h].Proof)
		}
	}
}

// TestRedteamShallowClone: in a shallow clone (history cut below the
// tips) a head on the shallow tip is proved as alone in a batch, and a
// head whose own commits reach below the cut is not proved.
func TestRedteamShallowClone(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	dir := s.newOrigin()
	for i := range 4 {
		s.commitFile(dir, fmt.Sprintf("h%d", i), "history\n")
	}
	s.git(dir, "push", "-q", "origin", "main")
	shallow := s.root + "/shallow"
	s.git(s.root, "clone", "-q", "--depth=2", "file://"+s.remote, shallow)
	old := s.rev(shallow, "HEAD~1")
	s.git(shallow, "checkout", "-q", "-b", "pick")
	pick := s.commitFile(shallow, "pick.txt", "p\n")
	s.git(shallow, "checkout", "-q", "-b", "onold", old)
	onOld := s.commitFile(shallow, "onold.txt", "o\n")
	s.git(shallow, "checkout", "-q", "-b", "lost", "main")
	lost := s.commitFile(shallow, "lost.txt", "l\n")
	s.git(shallow, "checkout", "-q", "main")
	s.git(shallow, "cherry-pick", pick)
	s.git(shallow, "push", "-q", "origin", "main")
	repo := s.discover(shallow)
	v := s.advertise(repo)
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

// TestRedteamAwkwardPathsInOneBatch: heads with names git quotes, globs,
// a leading dash and a newline (which no --stdin protocol can carry, so
// that head is not searched) are proved in one batch as alone, and the
// newline head does not stop the others.
func TestRedteamAwkwardPathsInOneBatch(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	dir := s.newOrigin()
	base := s.rev(dir, "HEAD")
	heads := map[string]string{}
	for _, n := range []string{"tab\there.txt", `q"uote.txt`, "ü.txt", "-dash.txt", "*.txt", "[ab].txt", "new\nline.txt"} {
		s.git(dir, "checkout", "-q", "-b", fmt.Sprintf("b%d", len(heads)), base)
		heads[s.commitFile(dir, n, "content of "+n+"\n")] = n
	}
	s.git(dir, "checkout", "-q", "main")
	s.commitFile(dir, "a.txt", "the glob [ab].txt matches it\n")
	var hs []string
	for h, n := range heads {
		hs = append(hs, h)
		if n != "ü.txt" && n != "new\nline.txt" {
			s.git(dir, "cherry-pick", h)
		}
	}
	s.git(dir, "push", "-q", "origin", "main")
	repo := s.discover(dir)
	v := s.advertise(repo)
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

// TestRedteamRootOnATipCostsOneHeadNotAll: an advertised branch of its
// own history (a pages branch) whose root adds a file one head also adds
// makes that head ask git its exact path question, not every head.
func TestRedteamRootOnATipCostsOneHeadNotAll(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	dir := s.newOrigin()
	base := s.rev(dir, "HEAD")
	var lost []string
	for i := range 10 {
		s.git(dir, "checkout", "-q", "-b", fmt.Sprintf("w%d", i), base)
		lost = append(lost, s.commitFile(dir, fmt.Sprintf("w%d.txt", i), "mine\n"))
	}
	s.git(dir, "switch", "-q", "--orphan", "pages")
	s.commitFile(dir, "w0.txt", "a page\n")
	s.git(dir, "push", "-q", "origin", "pages")
	s.git(dir, "checkout", "-q", "main")
	s.commitFile(dir, "main.txt", "main moved on\n")
	s.git(dir, "push", "-q", "origin", "main")
	repo := s.discover(dir)
	count := func(heads []string) int {
		var buf bytes.Buffer
		v := s.advertise(repo) // a view of its own: no patch id from the other count
		got := observe.ProveAll(context.Background(), s.traced(&buf), repo, heads, v)
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

// TestRedteamBrokenObjectIsItsHeadsOwn: a head whose own commit's content
// is missing from the object store (a corrupt or partial repository) gets
// an error and no proof; the heads beside it are proved as alone.
func TestRedteamBrokenObjectIsItsHeadsOwn(t *testing.T) {
	t.Parallel()
	z := newProofZoo(t)
	s := z.s
	s.git(z.dir, "checkout", "-q", "-b", "broken", z.heads["old main"])
	broken := s.commitFile(z.dir, "broken.txt", "content that goes missing\n")
	blob := s.rev(z.dir, broken+":broken.txt")
	// Off the branch: git's diff would read the checkout's file instead.
	s.git(z.dir, "checkout", "-q", "main")
	if err := os.Remove(filepath.Join(z.dir, ".git", "objects", blob[:2], blob[2:])); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	heads := []string{z.heads["patch"], broken, z.heads["squash"], z.heads["lost"], z.heads["held by a merge"]}
	got := observe.ProveAll(ctx, s.g, z.repo, heads, z.v)
	if r := got[broken]; r.Proof != nil || r.Err == nil {
		t.Errorf("the broken head: %+v, want an error and no proof", r)
	}
	for _, h := range heads {
		if h == broken {
			continue
		}
		p, err := observe.Prove(ctx, s.g, z.repo, h, z.v)
		if d := cmp.Diff(observe.ProofResult{Proof: p, Err: err}, got[h], resultOpts); d != "" {
			t.Errorf("%s beside a broken head: (-alone +batch)\n%s", h, d)
		}
	}
}

// TestRedteamCancelledBatch: a batch whose context ends gets an error for
// every head, no proof, and returns.
func TestRedteamCancelledBatch(t *testing.T) {
	t.Parallel()
	z := newProofZoo(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var heads []string
	for _, k := range z.kinds() {
		heads = append(heads, z.heads[k])
	}
	got := observe.ProveAll(ctx, z.s.g, z.repo, heads, z.v)
	for _, k := range z.kinds() {
		r := got[z.heads[k]]
		if r.Proof != nil && r.Proof.Kind != machine.ProofAncestry {
			t.Errorf("%s: proved %+v with the context ended", k, r.Proof)
		}
		if r.Proof == nil && r.Err == nil && k != "lost" && k != "empty" {
			t.Errorf("%s: neither proof nor error with the context ended", k)
		}
	}
	ps := observe.StartProofs(ctx, z.s.g, z.repo, heads, z.v)
	ps.Wait()
}

// TestRedteamWorktreeFileIsNotTheCommitsContent: git's diff reads a blob
// from the main checkout's file instead of the object store when the
// index says that file holds the blob and its stat is clean. With
// core.checkStat=minimal and the file's size and mtime kept, the file can
// hold other bytes: the head's change was then hashed as the published
// commit's, and the head proved squash-merged although its content is on
// no remote.
func TestRedteamWorktreeFileIsNotTheCommitsContent(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	dir := s.newOrigin()
	base := s.rev(dir, "HEAD")
	s.git(dir, "checkout", "-q", "-b", "pub", base)
	s.commitFile(dir, "f.txt", "YYYY published\n")
	s.git(dir, "push", "-q", "origin", "HEAD:main")
	s.git(dir, "checkout", "-q", "-b", "work", base)
	head := s.commitFile(dir, "f.txt", "XXXX only here\n")
	// The main checkout's f.txt: the head's blob in the index, stat clean,
	// the published bytes on disk.
	s.git(dir, "config", "core.checkStat", "minimal")
	p := filepath.Join(dir, "f.txt")
	old := time.Unix(1600000000, 0)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	s.git(dir, "update-index", "--refresh")
	if err := os.WriteFile(p, []byte("YYYY published\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	if got := s.git(dir, "show", head+":f.txt"); got != "XXXX only here" {
		t.Fatalf("fixture: the head's f.txt is %q", got)
	}
	repo := s.discover(dir)
	v := s.advertise(repo)
	if pr, err := observe.Prove(context.Background(), s.g, repo, head, v); pr != nil {
		t.Errorf("Prove: %+v (err %v); want no proof: \"XXXX only here\" is on no remote", pr, err)
	}
}

// gitDated runs git in dir as s.git does, with every date at unix.
func gitDated(s *sandbox, dir string, unix int64, args ...string) string {
	s.t.Helper()
	date := fmt.Sprintf("@%d +0000", unix)
	var env []string
	for _, kv := range s.env() {
		if !strings.HasPrefix(kv, "GIT_AUTHOR_DATE=") && !strings.HasPrefix(kv, "GIT_COMMITTER_DATE=") {
			env = append(env, kv)
		}
	}
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(env, "GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date)
	out, err := cmd.Output()
	if err != nil {
		s.t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimRight(string(out), "\n")
}

// TestRedteamSameSecondCommitsDoNotReorderTheBatch: two branches each hold
// a commit whose tree has the head's content, all made in the same second
// (a script, a rebase). Which one names the squash (Via) follows git's
// walk order, which for equal times is the order commits were reached;
// another head of the batch, newer and on one of the branches, reaches
// that branch's commit first. The proof must not depend on the batch.
func TestRedteamSameSecondCommitsDoNotReorderTheBatch(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	dir := s.newOrigin()
	b := s.rev(dir, "HEAD")
	const d = 1767300000
	commit := func(parent, file, content, msg string) string {
		gitDated(s, dir, d, "checkout", "-q", "--detach", parent)
		s.write(dir, file, content)
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
		s.git(dir, "push", "-q", "origin", fmt.Sprintf("%s:refs/heads/t%d", tip, i))
	}
	// A newer head on the second branch's holder.
	gitDated(s, dir, d+100, "checkout", "-q", "--detach", holders[1])
	s.write(dir, "k.txt", "mine\n")
	gitDated(s, dir, d+100, "add", "-A")
	gitDated(s, dir, d+100, "commit", "-q", "-m", "newer work")
	k := gitDated(s, dir, d+100, "rev-parse", "HEAD")
	s.git(dir, "checkout", "-q", "main")
	repo := s.discover(dir)
	v := s.advertise(repo)
	ctx := context.Background()
	alone, err := observe.Prove(ctx, s.g, repo, head, v)
	if err != nil || alone == nil || alone.Kind != machine.ProofSquashMerged {
		t.Fatalf("alone: %+v, %v; want squash-merged", alone, err)
	}
	batch := observe.ProveAll(ctx, s.g, repo, []string{head, k}, v)[head]
	if d := cmp.Diff(observe.ProofResult{Proof: alone}, batch, resultOpts); d != "" {
		t.Errorf("beside a newer head: (-alone +batch)\n%s\n(holders %v)", d, holders)
	}
}

// TestRedteamSHA256Repository: in a repository of 64-digit object ids the
// batch proves a picked, a squashed, a published and a lost head as alone.
func TestRedteamSHA256Repository(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.remote = filepath.Join(s.root, "origin.git")
	if _, err := s.tryGit(s.root, "init", "-q", "--bare", "--object-format=sha256", "-b", "main", s.remote); err != nil {
		t.Skip("git without sha256 repositories")
	}
	dir := filepath.Join(s.root, "repo")
	s.git(s.root, "init", "-q", "--object-format=sha256", "-b", "main", dir)
	base := s.commitFile(dir, "README", "fixture\n")
	s.git(dir, "remote", "add", "origin", s.remote)
	s.git(dir, "push", "-q", "-u", "origin", "main")
	if len(base) != 64 {
		t.Fatalf("fixture: %s is not a sha256 id", base)
	}
	s.git(dir, "checkout", "-q", "-b", "pick", base)
	pick := s.commitFile(dir, "pick.txt", "p\n")
	s.git(dir, "checkout", "-q", "-b", "sq", base)
	s.commitFile(dir, "sq1", "1\n")
	sq := s.commitFile(dir, "sq2", "2\n")
	s.git(dir, "checkout", "-q", "-b", "lost", base)
	lost := s.commitFile(dir, "lost.txt", "l\n")
	s.git(dir, "checkout", "-q", "main")
	s.git(dir, "cherry-pick", pick)
	s.git(dir, "merge", "-q", "--squash", "sq")
	s.commitAll(dir, "squash sq")
	s.commitFile(dir, "sq1", "edited\n")
	s.git(dir, "push", "-q", "origin", "main")
	repo := s.discover(dir)
	v := s.advertise(repo)
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
