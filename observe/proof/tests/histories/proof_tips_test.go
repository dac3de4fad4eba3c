package histories

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/internal/gitsandbox"
	"github.com/custody-sh/custody/observe/proof"
)

// proveCounting proves head and returns the proof and the number of git
// processes Prove started.
func proveCounting(s *gitsandbox.Sandbox, repo hostio.Repo, head string, v *proof.RemoteView) (*machine.Proof, int) {
	s.T.Helper()
	var buf bytes.Buffer
	p, err := proof.Prove(context.Background(), s.Traced(&buf), repo, head, v)
	if err != nil {
		s.T.Fatalf("Prove(%s): %v", head, err)
	}
	return p, strings.Count(buf.String(), "\n")
}

// pushBranches pushes n branches off base, each with a commit of its own,
// named b-00 … b-NN (sorting before "release"). The commits are written by
// one fast-import (as origin/b-NN, where a push of each would leave them) and
// published by one push: two git commands, not two per branch.
func pushBranches(s *gitsandbox.Sandbox, dir, base string, n int) {
	s.T.Helper()
	var in bytes.Buffer
	push := []string{"push", "-q", "origin"}
	for i := 0; i < n; i++ {
		s.Tick++
		msg := fmt.Sprintf("someone's branch %d\n", i)
		fmt.Fprintf(&in, "commit refs/remotes/origin/b-%02d\nauthor Sandbox <sandbox@example.invalid> %d +0000\ncommitter Sandbox <sandbox@example.invalid> %d +0000\ndata %d\n%sfrom %s\n\n",
			i, 1767225600+s.Tick, 1767225600+s.Tick, len(msg), msg, base)
		push = append(push, fmt.Sprintf("refs/remotes/origin/b-%02d:refs/heads/b-%02d", i, i))
	}
	s.GitInput(dir, in.Bytes(), "fast-import", "--quiet")
	s.Git(dir, push...)
}

// TestProvePatchOnReleaseAmongManyBranches: a commit cherry-picked onto
// release, which sorts after 25 other branches, is patch-equivalent there.
// Before every tip was considered only the first 16 were tried, and the
// tree was told to push.
func TestProvePatchOnReleaseAmongManyBranches(t *testing.T) {
	t.Parallel()
	s := gitsandbox.NewSandbox(t)
	dir := s.NewOrigin()
	base := s.Rev(dir, "HEAD")
	pushBranches(s, dir, base, 25)
	s.Git(dir, "checkout", "-q", "-b", "work")
	w1 := s.CommitFile(dir, "fix.txt", "the fix\n")
	s.Git(dir, "checkout", "-q", "-b", "release", base)
	s.CommitFile(dir, "release-notes", "1.0\n")
	s.Git(dir, "cherry-pick", w1)
	s.Git(dir, "push", "-q", "origin", "release")
	tip := s.Rev(dir, "HEAD")
	repo := s.Discover(dir)
	v := s.Advertise(repo)
	if len(v.Tips) != 27 {
		t.Fatalf("fixture: %d tips advertised, want 27", len(v.Tips))
	}
	gitsandbox.CheckProof(t, "cherry-picked onto release", s.Prove(repo, w1, v), &machine.Proof{Kind: machine.ProofPatchEquivalent,
		Remote: "origin", Ref: "refs/heads/release", Tip: tip, Head: w1, Commits: []string{w1}})
}

// TestProvePatchOnlyOnPullHead: a patch published only as a pull request
// head (refs/pull/7/head, which the forge advertises and serves) proves
// the tree: Advertise fetches its commits into no ref, and Prove tries it.
// A synthetic refs/pull/N/merge is never fetched.
func TestProvePatchOnlyOnPullHead(t *testing.T) {
	t.Parallel()
	s := gitsandbox.NewSandbox(t)
	dir := s.NewOrigin()
	base := s.Rev(dir, "HEAD")
	pushBranches(s, dir, base, 20)
	s.Git(dir, "checkout", "-q", "-b", "work")
	w1 := s.CommitFile(dir, "feature.txt", "feature\n")
	w2 := s.CommitFile(dir, "feature.txt", "feature, better\n")

	// Another clone rebases the work onto a newer main and opens a pull
	// request; the forge also made a test merge.
	other := s.Root + "/other"
	s.Git(s.Root, "clone", "-q", s.Remote, other)
	s.CommitFile(other, "main-advance", "m\n")
	s.Git(other, "push", "-q", "origin", "main")
	s.Git(other, "fetch", "-q", dir, "work")
	s.Git(other, "checkout", "-q", "-b", "pr")
	s.Git(other, "cherry-pick", w1, w2)
	pr := s.Rev(other, "HEAD")
	s.Git(other, "push", "-q", "origin", "HEAD:refs/pull/7/head")
	s.Git(other, "checkout", "-q", "main")
	s.Write(other, "synthetic", "only in the test merge\n")
	s.Git(other, "add", "synthetic")
	merge := s.Git(other, "commit-tree", "-p", s.Rev(other, "main"), "-p", pr, "-m", "test merge", s.Git(other, "write-tree"))
	s.Git(other, "push", "-q", "origin", merge+":refs/pull/7/merge")
	s.Git(dir, "checkout", "-q", "main")
	for _, c := range []string{pr, merge} {
		if _, err := s.TryGit(dir, "cat-file", "-e", c); err == nil {
			t.Fatalf("fixture: %s is already here", c)
		}
	}

	before := s.ForEachRef(dir)
	repo := s.Discover(dir)
	v := s.Advertise(repo)
	if d := cmp.Diff(before, s.ForEachRef(dir)); d != "" {
		t.Errorf("Advertise changed local refs (-before +after):\n%s", d)
	}
	for _, ref := range gitsandbox.TipRefs(v) {
		if ref == "origin refs/pull/7/merge" {
			t.Errorf("the synthetic test merge, not present here, is a tip")
		}
	}
	if _, err := s.TryGit(dir, "cat-file", "-e", merge); err == nil {
		t.Errorf("Advertise fetched the synthetic refs/pull/7/merge")
	}
	gitsandbox.CheckProof(t, "patch only on a pull request head", s.Prove(repo, w2, v), &machine.Proof{Kind: machine.ProofPatchEquivalent,
		Remote: "origin", Ref: "refs/pull/7/head", Tip: pr, Head: w2, Commits: []string{w1, w2}})
	if d := cmp.Diff(before, s.ForEachRef(dir)); d != "" {
		t.Errorf("Prove changed local refs (-before +after):\n%s", d)
	}
	// Once the test merge's objects are here, it counts while advertised.
	s.Git(dir, "fetch", "-q", "--no-write-fetch-head", "origin", "refs/pull/7/merge")
	found := false
	for _, ref := range gitsandbox.TipRefs(s.Advertise(repo)) {
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
		if got := proof.Synthetic(ref); got != want {
			t.Errorf("Synthetic(%q) = %v, want %v", ref, got, want)
		}
	}
}

// squashFixture is a branch "sq" of three commits that edit README and
// add a.txt and b.txt, squash-merged into main, which then goes on.
type squashFixture struct {
	s            *gitsandbox.Sandbox
	dir          string
	base, head   string
	squash       string
	unique       []string
	repo         hostio.Repo
	big          func(edit map[int]string) string
	afterSquash  func()
	beforeSquash func()
}

func newSquashFixture(t *testing.T) *squashFixture {
	s := gitsandbox.NewSandbox(t)
	dir := s.NewOrigin()
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
	s.CommitFile(dir, "big.txt", f.big(nil))
	s.Git(dir, "push", "-q", "origin", "main")
	f.base = s.Rev(dir, "HEAD")
	s.Git(dir, "checkout", "-q", "-b", "sq")
	f.unique = append(f.unique, s.CommitFile(dir, "a.txt", "a\n"))
	f.unique = append(f.unique, s.CommitFile(dir, "big.txt", f.big(map[int]string{3: "line three"})))
	f.unique = append(f.unique, s.CommitFile(dir, "big.txt", f.big(map[int]string{3: "line three", 5: "line five"})))
	f.head = s.Rev(dir, "HEAD")
	s.Git(dir, "checkout", "-q", "main")
	return f
}

// squashInto squash-merges sq into main, with edit run before committing
// the squash, and returns the squash commit.
func (f *squashFixture) squashInto(edit func()) string {
	f.s.Git(f.dir, "merge", "-q", "--squash", "sq")
	if edit != nil {
		edit()
	}
	f.squash = f.s.CommitAll(f.dir, "squash sq")
	return f.squash
}

func (f *squashFixture) prove() *machine.Proof {
	f.s.Git(f.dir, "push", "-q", "origin", "main")
	f.repo = f.s.Discover(f.dir)
	return f.s.Prove(f.repo, f.head, f.s.Advertise(f.repo))
}

func (f *squashFixture) want(via string) *machine.Proof {
	return &machine.Proof{Kind: machine.ProofSquashMerged, Remote: "origin", Ref: "refs/heads/main", Tip: f.s.Rev(f.dir, "main"),
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
	f.s.CommitFile(f.dir, "a.txt", "a, edited on main\n")
	f.s.CommitFile(f.dir, "big.txt", f.big(map[int]string{3: "line 3 again", 5: "line five", 29: "main's"}))
	gitsandbox.CheckProof(t, "squash edited again", f.prove(), f.want(sq))
}

// TestProveSquashAfterMainEditedTheFile: main edited big.txt far from the
// branch's lines before the squash, so the squash commit's big.txt is
// neither the branch's nor main's old one; its change equals the branch's
// whole change (same patch): proof, also after main edited again.
func TestProveSquashAfterMainEditedTheFile(t *testing.T) {
	t.Parallel()
	f := newSquashFixture(t)
	f.s.CommitFile(f.dir, "big.txt", f.big(map[int]string{25: "main's line 25"}))
	sq := f.squashInto(nil)
	f.s.CommitFile(f.dir, "big.txt", f.big(map[int]string{25: "main's line 25", 3: "line three", 5: "changed later"}))
	gitsandbox.CheckProof(t, "squash after main's edit", f.prove(), f.want(sq))
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
			f.s.Write(f.dir, "big.txt", f.big(map[int]string{3: "line three"}))
		}},
		{"dropped hunk after main's edit", true, func(f *squashFixture) {
			f.s.Write(f.dir, "big.txt", f.big(map[int]string{25: "main's line 25", 3: "line three"}))
		}},
		{"altered line after main's edit", true, func(f *squashFixture) {
			f.s.Write(f.dir, "big.txt", f.big(map[int]string{25: "main's line 25", 3: "line three", 5: "line FIVE"}))
		}},
		{"file left out", false, func(f *squashFixture) { f.s.Git(f.dir, "rm", "-q", "-f", "a.txt") }},
		{"mode dropped", false, func(f *squashFixture) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newSquashFixture(t)
			if tc.name == "mode dropped" {
				// The branch makes a.txt executable; the squash does not.
				f.s.Git(f.dir, "checkout", "-q", "sq")
				chmod(t, filepath.Join(f.dir, "a.txt"), 0o755)
				f.head = f.s.CommitAll(f.dir, "exec")
				f.unique = append(f.unique, f.head)
				f.s.Git(f.dir, "checkout", "-q", "main")
				f.s.Git(f.dir, "merge", "-q", "--squash", "sq")
				chmod(t, filepath.Join(f.dir, "a.txt"), 0o644)
				f.s.CommitAll(f.dir, "squash without the mode")
			} else {
				if tc.before {
					f.s.CommitFile(f.dir, "big.txt", f.big(map[int]string{25: "main's line 25"}))
				}
				f.squashInto(func() { tc.edit(f) })
				f.s.CommitFile(f.dir, "a.txt", "a, edited on main\n")
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
		s := gitsandbox.NewSandbox(t)
		dir := s.NewOrigin()
		base := s.Rev(dir, "HEAD")
		pushBranches(s, dir, base, n)
		s.Git(dir, "checkout", "-q", "-b", "pick")
		pick := s.CommitFile(dir, "pick.txt", "p\n")
		s.Git(dir, "checkout", "-q", "-b", "sq", base)
		s.CommitFile(dir, "sq1", "1\n")
		sq := s.CommitFile(dir, "sq2", "2\n")
		s.Git(dir, "checkout", "-q", "-b", "lost", base)
		lost := s.CommitFile(dir, "lost", "l\n")
		s.Git(dir, "checkout", "-q", "-b", "pr", base)
		belowPR := s.CommitFile(dir, "pr1", "1\n")
		s.CommitFile(dir, "pr2", "2\n")
		s.Git(dir, "push", "-q", "origin", "HEAD:refs/pull/9/head")
		s.Git(dir, "checkout", "-q", "main")
		s.Git(dir, "cherry-pick", pick)
		s.Git(dir, "merge", "-q", "--squash", "sq")
		s.CommitAll(dir, "squash")
		s.CommitFile(dir, "sq1", "edited\n")
		s.Git(dir, "push", "-q", "origin", "main")
		published := s.Rev(dir, "HEAD~1")
		repo := s.Discover(dir)
		v := s.Advertise(repo)
		out := map[string]int{}
		for name, head := range map[string]string{"published": published, "below a pull head": belowPR, "patch": pick, "squash": sq, "lost": lost} {
			p, c := proveCounting(s, repo, head, v)
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
	s := gitsandbox.NewSandbox(t)
	dir := s.NewOrigin()
	base := s.Rev(dir, "HEAD")
	var heads []string
	for i := 0; i < 2; i++ {
		s.Git(dir, "checkout", "-q", "-b", fmt.Sprintf("w%d", i), base)
		heads = append(heads, s.CommitFile(dir, "shared.txt", fmt.Sprintf("version %d\n", i)))
	}
	s.Git(dir, "checkout", "-q", "main")
	for i := 0; i < 5; i++ {
		s.CommitFile(dir, "shared.txt", fmt.Sprintf("main %d\n", i))
	}
	s.Git(dir, "push", "-q", "origin", "main")
	repo := s.Discover(dir)
	v := s.Advertise(repo)
	var first, second bytes.Buffer
	for i, buf := range []*bytes.Buffer{&first, &second} {
		if p, err := proof.Prove(context.Background(), s.Traced(buf), repo, heads[i], v); err != nil || p != nil {
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
	s := gitsandbox.NewSandbox(t)
	dir := s.NewOrigin()
	base := s.Rev(dir, "HEAD")
	names := []string{"tab\there.txt", `q"uote.txt`, "ü.txt", "-dash.txt", "*.txt", "[ab].txt"}
	s.Git(dir, "checkout", "-q", "-b", "sq")
	var unique []string
	for _, n := range names {
		unique = append(unique, s.CommitFile(dir, n, "content of "+n+"\n"))
	}
	head := s.Rev(dir, "HEAD")
	s.Git(dir, "checkout", "-q", "-b", "one", base)
	one := s.CommitFile(dir, "[ab].txt", "picked\n")
	s.Git(dir, "checkout", "-q", "main")
	s.CommitFile(dir, "a.txt", "a file the glob [ab].txt would match\n")
	s.Git(dir, "cherry-pick", one)
	s.GitFails(dir, "merge", "-q", "--squash", "sq")
	// The squash resolves [ab].txt (added on both sides) to the branch's.
	s.Write(dir, "[ab].txt", "content of [ab].txt\n")
	sq := s.CommitAll(dir, "squash")
	for _, n := range names {
		s.Write(dir, n, "edited on main\n")
	}
	s.CommitAll(dir, "edit them all")
	s.Git(dir, "push", "-q", "origin", "main")
	tip := s.Rev(dir, "HEAD")
	repo := s.Discover(dir)
	v := s.Advertise(repo)
	gitsandbox.CheckProof(t, "squash of awkward names", s.Prove(repo, head, v), &machine.Proof{Kind: machine.ProofSquashMerged,
		Remote: "origin", Ref: "refs/heads/main", Tip: tip, Head: head, Base: base, Via: sq, Commits: unique})
	gitsandbox.CheckProof(t, "cherry-pick of [ab].txt", s.Prove(repo, one, v), &machine.Proof{Kind: machine.ProofPatchEquivalent,
		Remote: "origin", Ref: "refs/heads/main", Tip: tip, Head: one, Commits: []string{one}})

	// Another branch adds the same files and one more, never published.
	s.Git(dir, "checkout", "-q", "-b", "more", head)
	more := s.CommitFile(dir, "tab\tmore.txt", "only here\n")
	if p := s.Prove(repo, more, s.Advertise(repo)); p != nil {
		t.Errorf("a squash without tab\\tmore.txt proved it: %+v", p)
	}
}

// TestProveConcurrentlyOnOneView: plan's workers prove trees in parallel
// against one view, sharing its patch ids; the proofs are those a fresh
// view gives each tree alone. (Run with -race to check the sharing.)
func TestProveConcurrentlyOnOneView(t *testing.T) {
	t.Parallel()
	s := gitsandbox.NewSandbox(t)
	dir := s.NewOrigin()
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
	base := s.CommitFile(dir, "shared.txt", shared(nil))
	s.Git(dir, "push", "-q", "origin", "main")
	// Trees edit their own line of shared.txt (so they share the commits
	// on main that touch it) and add a file of their own: three, one of
	// each kind below, bounded; six under fixtures.Full.
	trees := 3
	if fixtures.Full() {
		trees = 6
	}
	var heads []string
	for i := 0; i < trees; i++ {
		s.Git(dir, "checkout", "-q", "-b", fmt.Sprintf("w%d", i), base)
		s.CommitFile(dir, "shared.txt", shared(map[int]string{1 + 6*i: fmt.Sprintf("tree %d", i)}))
		heads = append(heads, s.CommitFile(dir, fmt.Sprintf("own-%d.txt", i), "x\n"))
	}
	s.Git(dir, "checkout", "-q", "main")
	for i, h := range heads {
		switch i % 3 {
		case 0: // rebase-merged
			s.Git(dir, "cherry-pick", h+"~1", h)
		case 1: // squash-merged
			s.Git(dir, "merge", "-q", "--squash", h)
			s.CommitAll(dir, "squash")
		}
	}
	s.CommitFile(dir, "shared.txt", s.Git(dir, "show", "HEAD:shared.txt")+"\nmain's own line\n")
	s.Git(dir, "push", "-q", "origin", "main")
	repo := s.Discover(dir)
	want := make([]*machine.Proof, len(heads))
	for i, h := range heads {
		want[i] = s.Prove(repo, h, s.Advertise(repo))
	}
	v := s.Advertise(repo)
	got := make([]*machine.Proof, len(heads))
	errs := make([]error, len(heads))
	done := make(chan int)
	for i, h := range heads {
		go func() {
			got[i], errs[i] = proof.Prove(context.Background(), s.G, repo, h, v)
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
		gitsandbox.CheckProof(t, fmt.Sprintf("tree %d", i), got[i], want[i])
		if (want[i] == nil) != (i%3 == 2) {
			t.Errorf("tree %d: proof %+v", i, want[i])
		}
	}
}
