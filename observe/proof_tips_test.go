package observe_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
)

// traced is a copy of the sandbox's Git whose runner writes each command
// line to buf, so a test can count the git processes one call starts.
func (s *sandbox) traced(buf *bytes.Buffer) *observe.Git {
	r := *s.g.Runner
	r.Trace = buf
	g := *s.g
	g.Runner = &r
	return &g
}

// proveCounting proves head and returns the proof and the number of git
// processes Prove started.
func (s *sandbox) proveCounting(repo observe.Repo, head string, v *observe.RemoteView) (*machine.Proof, int) {
	s.t.Helper()
	var buf bytes.Buffer
	p, err := observe.Prove(context.Background(), s.traced(&buf), repo, head, v)
	if err != nil {
		s.t.Fatalf("Prove(%s): %v", head, err)
	}
	return p, strings.Count(buf.String(), "\n")
}

// pushBranches pushes n branches off base, each with a commit of its own,
// named b-00 … b-NN (sorting before "release"). The commits are written by
// one fast-import (as origin/b-NN, where a push of each would leave them) and
// published by one push: two git commands, not two per branch.
func (s *sandbox) pushBranches(dir, base string, n int) {
	s.t.Helper()
	var in bytes.Buffer
	push := []string{"push", "-q", "origin"}
	for i := 0; i < n; i++ {
		s.tick++
		msg := fmt.Sprintf("someone's branch %d\n", i)
		fmt.Fprintf(&in, "commit refs/remotes/origin/b-%02d\nauthor Sandbox <sandbox@example.invalid> %d +0000\ncommitter Sandbox <sandbox@example.invalid> %d +0000\ndata %d\n%sfrom %s\n\n",
			i, 1767225600+s.tick, 1767225600+s.tick, len(msg), msg, base)
		push = append(push, fmt.Sprintf("refs/remotes/origin/b-%02d:refs/heads/b-%02d", i, i))
	}
	s.gitInput(dir, in.Bytes(), "fast-import", "--quiet")
	s.git(dir, push...)
}

// TestProvePatchOnReleaseAmongManyBranches: a commit cherry-picked onto
// release, which sorts after 25 other branches, is patch-equivalent there.
// Before every tip was considered only the first 16 were tried, and the
// tree was told to push.
func TestProvePatchOnReleaseAmongManyBranches(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	dir := s.newOrigin()
	base := s.rev(dir, "HEAD")
	s.pushBranches(dir, base, 25)
	s.git(dir, "checkout", "-q", "-b", "work")
	w1 := s.commitFile(dir, "fix.txt", "the fix\n")
	s.git(dir, "checkout", "-q", "-b", "release", base)
	s.commitFile(dir, "release-notes", "1.0\n")
	s.git(dir, "cherry-pick", w1)
	s.git(dir, "push", "-q", "origin", "release")
	tip := s.rev(dir, "HEAD")
	repo := s.discover(dir)
	v := s.advertise(repo)
	if len(v.Tips) != 27 {
		t.Fatalf("fixture: %d tips advertised, want 27", len(v.Tips))
	}
	checkProof(t, "cherry-picked onto release", s.prove(repo, w1, v), &machine.Proof{Kind: machine.ProofPatchEquivalent,
		Remote: "origin", Ref: "refs/heads/release", Tip: tip, Head: w1, Commits: []string{w1}})
}

// TestProvePatchOnlyOnPullHead: a patch published only as a pull request
// head (refs/pull/7/head, which the forge advertises and serves) proves
// the tree: Advertise fetches its commits into no ref, and Prove tries it.
// A synthetic refs/pull/N/merge is never fetched.
func TestProvePatchOnlyOnPullHead(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	dir := s.newOrigin()
	base := s.rev(dir, "HEAD")
	s.pushBranches(dir, base, 20)
	s.git(dir, "checkout", "-q", "-b", "work")
	w1 := s.commitFile(dir, "feature.txt", "feature\n")
	w2 := s.commitFile(dir, "feature.txt", "feature, better\n")

	// Another clone rebases the work onto a newer main and opens a pull
	// request; the forge also made a test merge.
	other := s.root + "/other"
	s.git(s.root, "clone", "-q", s.remote, other)
	s.commitFile(other, "main-advance", "m\n")
	s.git(other, "push", "-q", "origin", "main")
	s.git(other, "fetch", "-q", dir, "work")
	s.git(other, "checkout", "-q", "-b", "pr")
	s.git(other, "cherry-pick", w1, w2)
	pr := s.rev(other, "HEAD")
	s.git(other, "push", "-q", "origin", "HEAD:refs/pull/7/head")
	s.git(other, "checkout", "-q", "main")
	s.write(other, "synthetic", "only in the test merge\n")
	s.git(other, "add", "synthetic")
	merge := s.git(other, "commit-tree", "-p", s.rev(other, "main"), "-p", pr, "-m", "test merge", s.git(other, "write-tree"))
	s.git(other, "push", "-q", "origin", merge+":refs/pull/7/merge")
	s.git(dir, "checkout", "-q", "main")
	for _, c := range []string{pr, merge} {
		if _, err := s.tryGit(dir, "cat-file", "-e", c); err == nil {
			t.Fatalf("fixture: %s is already here", c)
		}
	}

	before := s.forEachRef(dir)
	repo := s.discover(dir)
	v := s.advertise(repo)
	if d := cmp.Diff(before, s.forEachRef(dir)); d != "" {
		t.Errorf("Advertise changed local refs (-before +after):\n%s", d)
	}
	for _, ref := range tipRefs(v) {
		if ref == "origin refs/pull/7/merge" {
			t.Errorf("the synthetic test merge, not present here, is a tip")
		}
	}
	if _, err := s.tryGit(dir, "cat-file", "-e", merge); err == nil {
		t.Errorf("Advertise fetched the synthetic refs/pull/7/merge")
	}
	checkProof(t, "patch only on a pull request head", s.prove(repo, w2, v), &machine.Proof{Kind: machine.ProofPatchEquivalent,
		Remote: "origin", Ref: "refs/pull/7/head", Tip: pr, Head: w2, Commits: []string{w1, w2}})
	if d := cmp.Diff(before, s.forEachRef(dir)); d != "" {
		t.Errorf("Prove changed local refs (-before +after):\n%s", d)
	}
	// Once the test merge's objects are here, it counts while advertised.
	s.git(dir, "fetch", "-q", "--no-write-fetch-head", "origin", "refs/pull/7/merge")
	found := false
	for _, ref := range tipRefs(s.advertise(repo)) {
		found = found || ref == "origin refs/pull/7/merge"
	}
	if !found {
		t.Errorf("the test merge, present here, is not a tip")
	}
}

// TestSynthetic: which advertised refs are forge-made test merges.
func TestSynthetic(t *testing.T) {
	t.Parallel()
	for ref, want := range map[string]bool{
		"refs/pull/7/merge":            true,
		"refs/merge-requests/12/merge": true,
		"refs/pull/7/head":             false,
		"refs/merge-requests/12/head":  false,
		"refs/heads/merge":             false,
		"refs/pull/merge":              false,
		"refs/pull//merge":             false,
		"refs/tags/pull/7/merge":       false,
		"refs/pull/7/merge/x":          false,
	} {
		if got := observe.Synthetic(ref); got != want {
			t.Errorf("Synthetic(%q) = %v, want %v", ref, got, want)
		}
	}
}

// squashFixture is a branch "sq" of three commits that edit README and
// add a.txt and b.txt, squash-merged into main, which then goes on.
type squashFixture struct {
	s            *sandbox
	dir          string
	base, head   string
	squash       string
	unique       []string
	repo         observe.Repo
	big          func(edit map[int]string) string
	afterSquash  func()
	beforeSquash func()
}

func newSquashFixture(t *testing.T) *squashFixture {
	s := newSandbox(t)
	dir := s.newOrigin()
	f := &squashFixture{s: s, dir: dir}
	var lines []string
	for i := 1; i <= 30; i++ {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	f.big = func(edit map[int]string) string {
		l := append([]string(nil), lines...)
		for i, v := range edit {
			l[i-1] = v
		}
		return strings.Join(l, "\n") + "\n"
	}
	s.commitFile(dir, "big.txt", f.big(nil))
	s.git(dir, "push", "-q", "origin", "main")
	f.base = s.rev(dir, "HEAD")
	s.git(dir, "checkout", "-q", "-b", "sq")
	f.unique = append(f.unique, s.commitFile(dir, "a.txt", "a\n"))
	f.unique = append(f.unique, s.commitFile(dir, "big.txt", f.big(map[int]string{3: "line three"})))
	f.unique = append(f.unique, s.commitFile(dir, "big.txt", f.big(map[int]string{3: "line three", 5: "line five"})))
	f.head = s.rev(dir, "HEAD")
	s.git(dir, "checkout", "-q", "main")
	return f
}

// squashInto squash-merges sq into main, with edit run before committing
// the squash, and returns the squash commit.
func (f *squashFixture) squashInto(edit func()) string {
	f.s.git(f.dir, "merge", "-q", "--squash", "sq")
	if edit != nil {
		edit()
	}
	f.squash = f.s.commitAll(f.dir, "squash sq")
	return f.squash
}

func (f *squashFixture) prove() *machine.Proof {
	f.s.git(f.dir, "push", "-q", "origin", "main")
	f.repo = f.s.discover(f.dir)
	return f.s.prove(f.repo, f.head, f.s.advertise(f.repo))
}

func (f *squashFixture) want(via string) *machine.Proof {
	return &machine.Proof{Kind: machine.ProofSquashMerged, Remote: "origin", Ref: "refs/heads/main", Tip: f.s.rev(f.dir, "main"),
		Head: f.head, Base: f.base, Via: via, Commits: f.unique}
}

// TestProveSquashThenEditedAgain: main squash-merged the branch and then
// edited the same files (a.txt and the squashed lines of big.txt). The tip
// no longer holds the branch's content, the squash commit does: the proof
// names it (Via).
func TestProveSquashThenEditedAgain(t *testing.T) {
	t.Parallel()
	f := newSquashFixture(t)
	sq := f.squashInto(nil)
	f.s.commitFile(f.dir, "a.txt", "a, edited on main\n")
	f.s.commitFile(f.dir, "big.txt", f.big(map[int]string{3: "line 3 again", 5: "line five", 29: "main's"}))
	checkProof(t, "squash edited again", f.prove(), f.want(sq))
}

// TestProveSquashAfterMainEditedTheFile: main edited big.txt far from the
// branch's lines before the squash, so the squash commit's big.txt is
// neither the branch's nor main's old one; its change equals the branch's
// whole change (same patch): proof, also after main edited again.
func TestProveSquashAfterMainEditedTheFile(t *testing.T) {
	t.Parallel()
	f := newSquashFixture(t)
	f.s.commitFile(f.dir, "big.txt", f.big(map[int]string{25: "main's line 25"}))
	sq := f.squashInto(nil)
	f.s.commitFile(f.dir, "big.txt", f.big(map[int]string{25: "main's line 25", 3: "line three", 5: "changed later"}))
	checkProof(t, "squash after main's edit", f.prove(), f.want(sq))
}

// TestProveSquashLossyThenEdited: squashes that lost part of the branch
// are no proof, whatever main did before or after.
func TestProveSquashLossyThenEdited(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		before bool
		edit   func(f *squashFixture)
	}{
		{"dropped hunk, edited later", false, func(f *squashFixture) {
			f.s.write(f.dir, "big.txt", f.big(map[int]string{3: "line three"}))
		}},
		{"dropped hunk after main's edit", true, func(f *squashFixture) {
			f.s.write(f.dir, "big.txt", f.big(map[int]string{25: "main's line 25", 3: "line three"}))
		}},
		{"altered line after main's edit", true, func(f *squashFixture) {
			f.s.write(f.dir, "big.txt", f.big(map[int]string{25: "main's line 25", 3: "line three", 5: "line FIVE"}))
		}},
		{"file left out", false, func(f *squashFixture) { f.s.git(f.dir, "rm", "-q", "-f", "a.txt") }},
		{"mode dropped", false, func(f *squashFixture) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newSquashFixture(t)
			if tc.name == "mode dropped" {
				// The branch makes a.txt executable; the squash does not.
				f.s.git(f.dir, "checkout", "-q", "sq")
				chmod(t, filepath.Join(f.dir, "a.txt"), 0o755)
				f.head = f.s.commitAll(f.dir, "exec")
				f.unique = append(f.unique, f.head)
				f.s.git(f.dir, "checkout", "-q", "main")
				f.s.git(f.dir, "merge", "-q", "--squash", "sq")
				chmod(t, filepath.Join(f.dir, "a.txt"), 0o644)
				f.s.commitAll(f.dir, "squash without the mode")
			} else {
				if tc.before {
					f.s.commitFile(f.dir, "big.txt", f.big(map[int]string{25: "main's line 25"}))
				}
				f.squashInto(func() { tc.edit(f) })
				f.s.commitFile(f.dir, "a.txt", "a, edited on main\n")
			}
			if p := f.prove(); p != nil {
				t.Errorf("a lossy squash proved the branch: %+v", p)
			}
		})
	}
}

func chmod(t *testing.T, p string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

// TestProveCostDoesNotGrowWithTips: the git processes one Prove starts do
// not depend on the number of advertised tips, for a tree that is
// published, patch-equivalent, squash-merged, or on no remote. (A count,
// not a time.)
func TestProveCostDoesNotGrowWithTips(t *testing.T) {
	t.Parallel()
	counts := func(n int) map[string]int {
		s := newSandbox(t)
		dir := s.newOrigin()
		base := s.rev(dir, "HEAD")
		s.pushBranches(dir, base, n)
		s.git(dir, "checkout", "-q", "-b", "pick")
		pick := s.commitFile(dir, "pick.txt", "p\n")
		s.git(dir, "checkout", "-q", "-b", "sq", base)
		s.commitFile(dir, "sq1", "1\n")
		sq := s.commitFile(dir, "sq2", "2\n")
		s.git(dir, "checkout", "-q", "-b", "lost", base)
		lost := s.commitFile(dir, "lost", "l\n")
		s.git(dir, "checkout", "-q", "-b", "pr", base)
		belowPR := s.commitFile(dir, "pr1", "1\n")
		s.commitFile(dir, "pr2", "2\n")
		s.git(dir, "push", "-q", "origin", "HEAD:refs/pull/9/head")
		s.git(dir, "checkout", "-q", "main")
		s.git(dir, "cherry-pick", pick)
		s.git(dir, "merge", "-q", "--squash", "sq")
		s.commitAll(dir, "squash")
		s.commitFile(dir, "sq1", "edited\n")
		s.git(dir, "push", "-q", "origin", "main")
		published := s.rev(dir, "HEAD~1")
		repo := s.discover(dir)
		v := s.advertise(repo)
		out := map[string]int{}
		for name, head := range map[string]string{"published": published, "below a pull head": belowPR, "patch": pick, "squash": sq, "lost": lost} {
			p, c := s.proveCounting(repo, head, v)
			if (p == nil) != (name == "lost") || name == "below a pull head" && p.Ref != "refs/pull/9/head" {
				t.Errorf("%d tips, %s: proof %+v", n, name, p)
			}
			out[name] = c
		}
		return out
	}
	few, many := counts(3), counts(40)
	if d := cmp.Diff(few, many); d != "" {
		t.Errorf("git processes per proof, 5 tips (-) vs 42 tips (+):\n%s", d)
	}
	t.Logf("git processes per proof: %v", few)
}

// TestProveSharesPatchIDsPerView: a second tree proven against the same
// view does not compute the patch ids of the tips' commits again.
func TestProveSharesPatchIDsPerView(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	dir := s.newOrigin()
	base := s.rev(dir, "HEAD")
	var heads []string
	for i := 0; i < 2; i++ {
		s.git(dir, "checkout", "-q", "-b", fmt.Sprintf("w%d", i), base)
		heads = append(heads, s.commitFile(dir, "shared.txt", fmt.Sprintf("version %d\n", i)))
	}
	s.git(dir, "checkout", "-q", "main")
	for i := 0; i < 5; i++ {
		s.commitFile(dir, "shared.txt", fmt.Sprintf("main %d\n", i))
	}
	s.git(dir, "push", "-q", "origin", "main")
	repo := s.discover(dir)
	v := s.advertise(repo)
	var first, second bytes.Buffer
	for i, buf := range []*bytes.Buffer{&first, &second} {
		if p, err := observe.Prove(context.Background(), s.traced(buf), repo, heads[i], v); err != nil || p != nil {
			t.Fatalf("Prove(%s) = %+v, %v; want no proof", heads[i], p, err)
		}
	}
	diffTrees := func(b *bytes.Buffer) int { return strings.Count(b.String(), " diff-tree --stdin") }
	if diffTrees(&first) != 2 || diffTrees(&second) != 1 {
		t.Errorf("diff-tree --stdin runs: first tree %d, second %d; want 2 then 1 (the tips' commits from the view's cache)\n%s\n%s",
			diffTrees(&first), diffTrees(&second), first.String(), second.String())
	}
}

// TestProveAwkwardPaths: paths git quotes (a tab, a quote, non-ASCII,
// a leading dash, glob characters) are searched for literally: a squash
// of such files that main then edited, and a cherry-pick of one, are
// found; a squash that dropped one of them is not proof.
func TestProveAwkwardPaths(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	dir := s.newOrigin()
	base := s.rev(dir, "HEAD")
	names := []string{"tab\there.txt", `q"uote.txt`, "ü.txt", "-dash.txt", "*.txt", "[ab].txt"}
	s.git(dir, "checkout", "-q", "-b", "sq")
	var unique []string
	for _, n := range names {
		unique = append(unique, s.commitFile(dir, n, "content of "+n+"\n"))
	}
	head := s.rev(dir, "HEAD")
	s.git(dir, "checkout", "-q", "-b", "one", base)
	one := s.commitFile(dir, "[ab].txt", "picked\n")
	s.git(dir, "checkout", "-q", "main")
	s.commitFile(dir, "a.txt", "a file the glob [ab].txt would match\n")
	s.git(dir, "cherry-pick", one)
	s.gitFails(dir, "merge", "-q", "--squash", "sq")
	// The squash resolves [ab].txt (added on both sides) to the branch's.
	s.write(dir, "[ab].txt", "content of [ab].txt\n")
	sq := s.commitAll(dir, "squash")
	for _, n := range names {
		s.write(dir, n, "edited on main\n")
	}
	s.commitAll(dir, "edit them all")
	s.git(dir, "push", "-q", "origin", "main")
	tip := s.rev(dir, "HEAD")
	repo := s.discover(dir)
	v := s.advertise(repo)
	checkProof(t, "squash of awkward names", s.prove(repo, head, v), &machine.Proof{Kind: machine.ProofSquashMerged,
		Remote: "origin", Ref: "refs/heads/main", Tip: tip, Head: head, Base: base, Via: sq, Commits: unique})
	checkProof(t, "cherry-pick of [ab].txt", s.prove(repo, one, v), &machine.Proof{Kind: machine.ProofPatchEquivalent,
		Remote: "origin", Ref: "refs/heads/main", Tip: tip, Head: one, Commits: []string{one}})

	// Another branch adds the same files and one more, never published.
	s.git(dir, "checkout", "-q", "-b", "more", head)
	more := s.commitFile(dir, "tab\tmore.txt", "only here\n")
	if p := s.prove(repo, more, s.advertise(repo)); p != nil {
		t.Errorf("a squash without tab\\tmore.txt proved it: %+v", p)
	}
}

// TestProveConcurrentlyOnOneView: plan's workers prove trees in parallel
// against one view, sharing its patch ids; the proofs are those a fresh
// view gives each tree alone. (Run with -race to check the sharing.)
func TestProveConcurrentlyOnOneView(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	dir := s.newOrigin()
	var lines []string
	for i := 1; i <= 40; i++ {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	shared := func(edit map[int]string) string {
		l := append([]string(nil), lines...)
		for i, v := range edit {
			l[i-1] = v
		}
		return strings.Join(l, "\n") + "\n"
	}
	base := s.commitFile(dir, "shared.txt", shared(nil))
	s.git(dir, "push", "-q", "origin", "main")
	// Six trees edit their own line of shared.txt (so they share the
	// commits on main that touch it) and add a file of their own.
	var heads []string
	for i := 0; i < 6; i++ {
		s.git(dir, "checkout", "-q", "-b", fmt.Sprintf("w%d", i), base)
		s.commitFile(dir, "shared.txt", shared(map[int]string{1 + 6*i: fmt.Sprintf("tree %d", i)}))
		heads = append(heads, s.commitFile(dir, fmt.Sprintf("own-%d.txt", i), "x\n"))
	}
	s.git(dir, "checkout", "-q", "main")
	for i, h := range heads {
		switch i % 3 {
		case 0: // rebase-merged
			s.git(dir, "cherry-pick", h+"~1", h)
		case 1: // squash-merged
			s.git(dir, "merge", "-q", "--squash", h)
			s.commitAll(dir, "squash")
		}
	}
	s.commitFile(dir, "shared.txt", s.git(dir, "show", "HEAD:shared.txt")+"\nmain's own line\n")
	s.git(dir, "push", "-q", "origin", "main")
	repo := s.discover(dir)
	want := make([]*machine.Proof, len(heads))
	for i, h := range heads {
		want[i] = s.prove(repo, h, s.advertise(repo))
	}
	v := s.advertise(repo)
	got := make([]*machine.Proof, len(heads))
	errs := make([]error, len(heads))
	done := make(chan int)
	for i, h := range heads {
		go func() {
			got[i], errs[i] = observe.Prove(context.Background(), s.g, repo, h, v)
			done <- i
		}()
	}
	for range heads {
		<-done
	}
	for i := range heads {
		if errs[i] != nil {
			t.Errorf("tree %d: %v", i, errs[i])
		}
		checkProof(t, fmt.Sprintf("tree %d", i), got[i], want[i])
		if (want[i] == nil) != (i%3 == 2) {
			t.Errorf("tree %d: proof %+v", i, want[i])
		}
	}
}
