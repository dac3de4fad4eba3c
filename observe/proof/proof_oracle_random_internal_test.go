package proof

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/custody-sh/custody/fixtures/testsize"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
)

// A random history: published branches with merges, orphans and
// identical or skewed commit times; unpublished heads on them with
// merges of published work, some cherry-picked, squashed or pushed onto
// the tips, which then move on. Built with one git fast-import.

type genCommit struct {
	parents []int
	tree    map[string]string
	time    int64
}

type genRepo struct {
	r       *rand.Rand
	commits []genCommit
	// branches are the advertised tips by name, main first.
	branches map[string]int
	order    []string
	heads    []int
	// tags are annotated tags advertised: name → commit.
	tags map[string]int
	// skew gives some commits times before their parents'.
	skew bool
}

var genPaths = []string{"f1", "f2", "f3", "d/g1", "d/g2", "d", "e/x/y"}

func (g *genRepo) content() string {
	var b strings.Builder
	for i := range 1 + g.r.IntN(3) {
		fmt.Fprintf(&b, "line %d %d\n", i, g.r.IntN(4))
	}
	return b.String()
}

// set writes path in tree, removing what a file or directory there
// replaces.
func set(tree map[string]string, path, content string) {
	for p := range tree {
		if strings.HasPrefix(p, path+"/") || strings.HasPrefix(path, p+"/") {
			delete(tree, p)
		}
	}
	tree[path] = content
}

func (g *genRepo) mutate(tree map[string]string) {
	for range 1 + g.r.IntN(2) {
		p := genPaths[g.r.IntN(len(genPaths))]
		if g.r.IntN(6) == 0 {
			delete(tree, p)
			continue
		}
		set(tree, p, g.content())
	}
}

// time is a commit time: with skew, some are the root's or before their
// parents'; without, each is its latest parent's (identical times) or a
// minute after.
func (g *genRepo) time(parents []int) int64 {
	var t int64 = 1767225600
	for _, p := range parents {
		t = max(t, g.commits[p].time)
	}
	switch g.r.IntN(5) {
	case 0:
		if g.skew {
			return 1767225600
		}
		return t
	case 1:
		if g.skew {
			return t - int64(g.r.IntN(100000)) // before its parents
		}
		return t
	}
	return t + 60
}

func (g *genRepo) add(parents []int, tree map[string]string) int {
	g.commits = append(g.commits, genCommit{parents: parents, tree: tree, time: g.time(parents)})
	return len(g.commits) - 1
}

// child is a commit on p changing a few paths.
func (g *genRepo) child(p int) int {
	t := maps.Clone(g.commits[p].tree)
	g.mutate(t)
	return g.add([]int{p}, t)
}

// merge is a merge of ps, its tree the first's with some paths of the
// others.
func (g *genRepo) merge(ps ...int) int {
	t := maps.Clone(g.commits[ps[0]].tree)
	for _, p := range ps[1:] {
		for _, path := range slices.Sorted(maps.Keys(g.commits[p].tree)) {
			if g.r.IntN(2) == 0 {
				set(t, path, g.commits[p].tree[path])
			}
		}
	}
	if g.r.IntN(3) == 0 {
		g.mutate(t)
	}
	return g.add(ps, t)
}

// apply is a commit on p setting the paths changed from a to b as b has
// them (a cherry-pick of a..b when p has a's content there, a squash).
func (g *genRepo) apply(p, a, b int) int {
	t := maps.Clone(g.commits[p].tree)
	ta, tb := g.commits[a].tree, g.commits[b].tree
	for path, c := range tb {
		if ta[path] != c {
			set(t, path, c)
		}
	}
	for path := range ta {
		if _, ok := tb[path]; !ok {
			delete(t, path)
		}
	}
	return g.add([]int{p}, t)
}

func newGenRepo(seed uint64, skew bool) *genRepo {
	g := &genRepo{r: rand.New(rand.NewPCG(seed, seed*7+1)), branches: map[string]int{}, tags: map[string]int{}, skew: skew}
	root := g.add(nil, map[string]string{"f1": "one\n", "d/g1": "g\n"})
	g.branches["main"] = root
	g.order = []string{"main"}
	published := []int{root}
	for i := range 2 + g.r.IntN(2) {
		name := fmt.Sprintf("b%d", i)
		g.branches[name] = published[g.r.IntN(len(published))]
		g.order = append(g.order, name)
	}
	if g.r.IntN(3) == 0 {
		g.branches["orphan"] = g.add(nil, map[string]string{"f2": "orphan\n"})
		g.order = append(g.order, "orphan")
	}
	grow := func(n int) {
		for range n {
			name := g.order[g.r.IntN(len(g.order))]
			tip := g.branches[name]
			switch g.r.IntN(5) {
			case 0:
				other := published[g.r.IntN(len(published))]
				if other != tip {
					tip = g.merge(tip, other)
				} else {
					tip = g.child(tip)
				}
			default:
				tip = g.child(tip)
			}
			g.branches[name] = tip
			published = append(published, tip)
		}
	}
	grow(8 + g.r.IntN(8))
	// The heads.
	for range 5 + g.r.IntN(4) {
		from := published[g.r.IntN(len(published))]
		var h int
		switch g.r.IntN(8) {
		case 0:
			h = from // published already
		case 1:
			if len(g.heads) > 0 {
				h = g.heads[g.r.IntN(len(g.heads))]
				if len(g.commits[h].parents) > 0 && g.r.IntN(2) == 0 {
					h = g.commits[h].parents[0] // below another head
				}
				break
			}
			fallthrough
		default:
			h = from
			for range 1 + g.r.IntN(3) {
				if g.r.IntN(5) == 0 {
					h = g.merge(h, published[g.r.IntN(len(published))])
				} else {
					h = g.child(h)
				}
			}
			onto := g.order[g.r.IntN(len(g.order))]
			switch g.r.IntN(5) {
			case 0: // each commit picked onto a tip, first parent chain
				var chain []int
				for c := h; c != from && len(g.commits[c].parents) > 0; c = g.commits[c].parents[0] {
					chain = append(chain, c)
				}
				for i := len(chain) - 1; i >= 0; i-- {
					c := chain[i]
					g.branches[onto] = g.apply(g.branches[onto], g.commits[c].parents[0], c)
				}
			case 1: // squashed onto a tip
				g.branches[onto] = g.apply(g.branches[onto], from, h)
			case 2: // pushed
				g.branches[onto] = g.merge(g.branches[onto], h)
			}
		}
		g.heads = append(g.heads, h)
	}
	grow(3 + g.r.IntN(5))
	if g.r.IntN(2) == 0 {
		g.tags["t1"] = published[g.r.IntN(len(published))]
	}
	return g
}

// Write builds the history in a new repository under dir with one git
// fast-import and returns each commit's id.
func (g *genRepo) write(t *testing.T, run func(stdin []byte, args ...string) string) []string {
	t.Helper()
	var in bytes.Buffer
	for i, c := range g.commits {
		fmt.Fprintf(&in, "commit refs/gen/c%d\nmark :%d\ncommitter G <g@example.invalid> %d +0000\ndata 3\nc%d\n", i, i+1, c.time, i%10)
		for j, p := range c.parents {
			if j == 0 {
				fmt.Fprintf(&in, "from :%d\n", p+1)
			} else {
				fmt.Fprintf(&in, "merge :%d\n", p+1)
			}
		}
		in.WriteString("deleteall\n")
		for _, p := range slices.Sorted(maps.Keys(c.tree)) {
			fmt.Fprintf(&in, "M 100644 inline %s\ndata %d\n%s\n", p, len(c.tree[p]), c.tree[p])
		}
	}
	for name, c := range g.tags {
		fmt.Fprintf(&in, "tag %s\nfrom :%d\ntagger G <g@example.invalid> 1767225600 +0000\ndata 3\ntag\n", name, c+1)
	}
	marks := filepath.Join(t.TempDir(), "marks")
	run(in.Bytes(), "fast-import", "--quiet", "--export-marks="+marks)
	b, err := os.ReadFile(marks)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(g.commits))
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		m, id, _ := strings.Cut(line, " ")
		n, err := strconv.Atoi(strings.TrimPrefix(m, ":"))
		if err != nil || n < 1 || n > len(ids) {
			t.Fatalf("marks: %q", line)
		}
		ids[n-1] = id
	}
	return ids
}

// randomWorld is one random history in a repository of its own, with its
// view and heads.
type randomWorld struct {
	g     *hostio.Git
	repo  hostio.Repo
	v     *RemoteView
	heads []string
	run   func(stdin []byte, args ...string) string
	// gen and ids are the history as generated: reachability is read off
	// it, not asked of git (whose walks cut short on skewed clocks).
	gen   *genRepo
	ids   []string
	index map[string]int
}

// reach returns the commits c reaches (itself included), from the
// generated history.
func (w *randomWorld) reach(cs ...string) map[string]bool {
	seen := map[string]bool{}
	var stack []int
	for _, c := range cs {
		if i, ok := w.index[c]; ok && !seen[c] {
			seen[c] = true
			stack = append(stack, i)
		}
	}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, p := range w.gen.commits[i].parents {
			if !seen[w.ids[p]] {
				seen[w.ids[p]] = true
				stack = append(stack, p)
			}
		}
	}
	return seen
}

// unique returns the commits head reaches and no tip does, sorted.
func (w *randomWorld) unique(head string) []string {
	var targets []string
	for _, t := range w.v.Tips {
		targets = append(targets, t.target())
	}
	published := w.reach(targets...)
	var out []string
	for c := range w.reach(head) {
		if !published[c] {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}

// gitWrapper is the git the random worlds run, with the home their
// fixture commands run in (TestMain pins observe.Git's environment).
type gitWrapper struct {
	git, bin, home string
}

func newGitWrapper(t *testing.T) gitWrapper {
	t.Helper()
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := gitWrapper{git: gitPath, bin: gitPath, home: filepath.Join(root, "home")}
	if err := os.MkdirAll(w.home, 0o755); err != nil {
		t.Fatal(err)
	}
	return w
}

func newRandomWorld(t *testing.T, gw gitWrapper, seed uint64, skew bool) *randomWorld {
	t.Helper()
	gitPath, home := gw.git, gw.home
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "repo")
	for _, d := range []string{dir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C", "TZ=UTC", "PATH=" + os.Getenv("PATH")}
	run := func(stdin []byte, args ...string) string {
		t.Helper()
		cmd := exec.Command(gitPath, args...)
		cmd.Dir = dir
		cmd.Env = env
		cmd.Stdin = bytes.NewReader(stdin)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return strings.TrimRight(string(out), "\n")
	}
	run(nil, "init", "-q", "-b", "main")
	gen := newGenRepo(seed, skew)
	ids := gen.write(t, run)
	g := hostio.NewGit(&hostio.Runner{})
	g.Bin = gw.bin
	w := &randomWorld{g: g, repo: hostio.Repo{CommonDir: filepath.Join(dir, ".git"), MainCheckout: dir, Toplevel: dir}, run: run,
		gen: gen, ids: ids, index: map[string]int{}}
	for i, id := range ids {
		w.index[id] = i
	}
	w.v = &RemoteView{Remotes: []string{"origin"}, patches: newPatchCache()}
	for i, name := range gen.order {
		w.v.Tips = append(w.v.Tips, Tip{Remote: "origin", Ref: "refs/heads/" + name, Commit: ids[gen.branches[name]], Default: i == 0})
	}
	for _, name := range slices.Sorted(maps.Keys(gen.tags)) {
		tag := run(nil, "rev-parse", "refs/tags/"+name)
		w.v.Tips = append(w.v.Tips, Tip{Remote: "origin", Ref: "refs/tags/" + name, Commit: tag, Target: ids[gen.tags[name]]})
	}
	seen := map[string]bool{}
	for _, h := range gen.heads {
		if !seen[ids[h]] {
			seen[ids[h]] = true
			w.heads = append(w.heads, ids[h])
		}
	}
	return w
}

// valid checks p independently of the proof search: every claim it makes
// is git's answer, and nothing of head is left out.
func (w *randomWorld) valid(head string, p *machine.Proof) error {
	var tip *Tip
	for i, t := range w.v.Tips {
		if t.Ref == p.Ref && t.Commit == p.Tip {
			tip = &w.v.Tips[i]
		}
	}
	if tip == nil || p.Head != head {
		return fmt.Errorf("names no advertised tip, or another head")
	}
	isAncestor := func(a, b string) bool { return w.reach(b)[a] }
	unique := w.unique(head)
	switch p.Kind {
	case machine.ProofAncestry:
		if !isAncestor(head, tip.target()) {
			return fmt.Errorf("ancestry: %s does not reach the head", p.Ref)
		}
		return nil
	case machine.ProofPatchEquivalent:
		if !slices.Equal(unique, slices.Sorted(slices.Values(p.Commits))) {
			return fmt.Errorf("patch: covers %v, the head adds %v", p.Commits, unique)
		}
		if out := w.run(nil, "rev-list", "--cherry-pick", "--right-only", tip.target()+"..."+head); out != "" {
			return fmt.Errorf("patch: git's --cherry-pick leaves %s", out)
		}
		return nil
	case machine.ProofSquashMerged:
		if !slices.Equal(unique, slices.Sorted(slices.Values(p.Commits))) {
			return fmt.Errorf("squash: covers %v, the head adds %v", p.Commits, unique)
		}
		if !isAncestor(p.Base, head) || !isAncestor(p.Base, tip.target()) && !slices.ContainsFunc(w.v.Tips, func(t Tip) bool { return isAncestor(p.Base, t.target()) }) {
			return fmt.Errorf("squash: base %s is not below the head and a tip", p.Base)
		}
		via := cmpOr(p.Via, tip.target())
		if !isAncestor(via, tip.target()) {
			return fmt.Errorf("squash: %s is not on %s", via, p.Ref)
		}
		// Every path the head's own commits change (not only base..head):
		// each must be as the head has it in via, or as base has it.
		changed := strings.Fields(w.run(nil, "diff-tree", "-r", "--name-only", "--no-renames", p.Base, head))
		if len(changed) == 0 {
			return fmt.Errorf("squash: the head changes nothing over its base")
		}
		differ := strings.Fields(w.run(nil, "diff-tree", "-r", "--name-only", "--no-renames", head, via))
		for _, c := range changed {
			if slices.Contains(differ, c) {
				return fmt.Errorf("squash: %s differs between the head and %s", c, via)
			}
		}
		return nil
	}
	return fmt.Errorf("unknown kind %q", p.Kind)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// randomSeeds is how many random histories each random test checks:
// CUSTODY_PROOF_SEEDS, else 6 under CUSTODY_TEST_FULL, else 2 (seeds 0 and
// 1; TestRandomBatchAgreesWithAloneSeed270 keeps the one history that
// found a bug).
func randomSeeds(t *testing.T) int {
	t.Helper()
	n, err := testsize.Size("CUSTODY_PROOF_SEEDS", 2, 6)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRandomProofsAreValid: on random histories every proof the batched
// search gives, alone or in a batch, is true by git's own answers.
func TestRandomProofsAreValid(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	gw := newGitWrapper(t)
	for seed := range uint64(randomSeeds(t)) {
		w := newRandomWorld(t, gw, seed, true)
		check := func(how, h string, r ProofResult) {
			if r.Proof == nil {
				return
			}
			if err := w.valid(h, r.Proof); err != nil {
				t.Errorf("seed %d, %s %s: %+v: %v", seed, how, h, r.Proof, err)
			}
		}
		for h, r := range ProveAll(ctx, w.g, w.repo, w.heads, w.v) {
			check("batch", h, r)
		}
		for _, h := range w.heads {
			p, err := Prove(ctx, w.g, w.repo, h, w.v)
			check("alone", h, ProofResult{Proof: p, Err: err})
		}
	}
}

// TestRandomBatchAgreesWithAlone: on random histories a head's result is
// the same in the whole batch, in a batch of every other head, and alone.
func TestRandomBatchAgreesWithAlone(t *testing.T) {
	t.Parallel()
	gw := newGitWrapper(t)
	for seed := range uint64(randomSeeds(t)) {
		checkRandomBatchAgrees(t, gw, seed)
	}
}

// TestRandomBatchAgreesWithAloneSeed270: the history of seed 270 (found
// among 450) has a head whose squash commit (Via) differs between the
// batch and alone.
func TestRandomBatchAgreesWithAloneSeed270(t *testing.T) {
	t.Parallel()
	checkRandomBatchAgrees(t, newGitWrapper(t), 270)
}

func checkRandomBatchAgrees(t *testing.T, gw gitWrapper, seed uint64) {
	t.Helper()
	ctx := context.Background()
	w := newRandomWorld(t, gw, seed, true)
	alone := map[string]ProofResult{}
	for _, h := range w.heads {
		p, err := Prove(ctx, w.g, w.repo, h, w.v)
		alone[h] = ProofResult{Proof: p, Err: err}
	}
	var odd []string
	for i, h := range w.heads {
		if i%2 == 0 {
			odd = append(odd, h)
		}
	}
	for name, batch := range map[string][]string{"all": w.heads, "every other": odd} {
		for h, r := range ProveAll(ctx, w.g, w.repo, batch, w.v) {
			if d := diffResult(alone[h], r); d != "" {
				t.Errorf("seed %d, batch %s, %s: alone %s", seed, name, h, d)
			}
		}
	}
}

// TestRandomBatchAgreesWithOracle: on random histories the batched search
// proves alone what the per-head search before 0215 proved: the same kind
// of proof of the same commits from the same base, or none, or the same
// error. Which squash commit a squash-merged proof names (and so which tip
// reaches it) may differ: 0215 tries the candidates in committer-time
// order and takes a merge by its changes against every parent, where the
// per-head search took git's walk order and rev-list's walk-dependent
// answer for merges. TestRandomProofsAreValid holds every proof, squash
// Commit included, to the generated history.
func TestRandomBatchAgreesWithOracle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	gw := newGitWrapper(t)
	for seed := range uint64(randomSeeds(t)) {
		w := newRandomWorld(t, gw, seed, false)
		for _, h := range w.heads {
			op, oerr := oracleProve(ctx, w.g, w.repo, h, &RemoteView{Remotes: w.v.Remotes, Tips: w.v.Tips})
			p, err := Prove(ctx, w.g, w.repo, h, w.v)
			if op != nil && p != nil && op.Kind == machine.ProofSquashMerged && p.Kind == machine.ProofSquashMerged {
				q := *p
				q.Remote, q.Ref, q.Tip, q.Via = op.Remote, op.Ref, op.Tip, op.Via
				p = &q
			}
			if d := diffResult(ProofResult{Proof: op, Err: oerr}, ProofResult{Proof: p, Err: err}); d != "" {
				t.Errorf("seed %d, %s: per-head %s", seed, h, d)
			}
		}
	}
}

// diffResult describes how b differs from a ("" when alike): the same
// proof (covered commits in any order) or the same error text.
func diffResult(a, b ProofResult) string {
	es := func(e error) string {
		if e == nil {
			return ""
		}
		return e.Error()
	}
	ps := func(p *machine.Proof) string {
		if p == nil {
			return "none"
		}
		q := *p
		q.Commits = slices.Sorted(slices.Values(p.Commits))
		return fmt.Sprintf("%+v", q)
	}
	if ps(a.Proof) == ps(b.Proof) && es(a.Err) == es(b.Err) {
		return ""
	}
	return fmt.Sprintf("%s (err %q), other %s (err %q)", ps(a.Proof), es(a.Err), ps(b.Proof), es(b.Err))
}
