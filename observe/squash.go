package observe

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/custody-sh/custody/machine"
)

// maxSquashChecks bounds the "<commit>:<path>" lines one squash search asks
// git about; beyond it only the commits that touch head's paths are asked,
// and beyond that again the state form is not tried (the tree is kept).
const maxSquashChecks = 200000

// proofSearch is what the patch-equivalence and squash checks of one head
// share: the commits head adds, the tip graph, and the patch ids of head's
// commits, of its whole change, and of every commit on the tips that
// touches a path head's commits touch.
type proofSearch struct {
	g      *Git
	repo   Repo
	head   string
	unique []uniqueCommit
	tg     *tipGraph
	// base is the one published commit head's own commits start from ("" if
	// they start from none, or from more than one).
	base string
	// changes is base..head: every path head changed, with its content.
	changes []rawChange
	// whole is the patchInfo of base..head.
	whole patchInfo
	// cands are the commits of the graph that touch a path one of head's
	// commits touches, newest first.
	cands []string
	// info holds the patchInfo of head's commits and of cands.
	info map[string]patchInfo
}

// newProofSearch computes, with at most four git processes whatever the
// number of tips (two when no commit on a tip touches head's paths), what
// the two checks need. Patch ids already in cache
// (another tree of the same plan asked) are not computed again. It
// returns nil when head's changes cannot be searched for exactly (a path
// with a newline, which git's line-based --stdin protocols cannot carry).
func newProofSearch(ctx context.Context, g *Git, repo Repo, head string, unique []uniqueCommit, tg *tipGraph, cache *patchCache) (*proofSearch, error) {
	s := &proofSearch{g: g, repo: repo, head: head, unique: unique, tg: tg, info: map[string]patchInfo{}}
	mine := map[string]bool{}
	for _, u := range unique {
		mine[u.commit] = true
	}
	below := map[string]bool{}
	for _, u := range unique {
		for _, p := range u.parents {
			if !mine[p] {
				below[p] = true
			}
		}
	}
	if len(below) == 1 {
		for p := range below {
			s.base = p
		}
	}
	var ask bytes.Buffer
	asked := map[string]bool{}
	for _, u := range unique {
		if len(u.parents) != 1 {
			continue // merges and roots have no patch of their own here
		}
		if p, ok := cache.get(u.commit); ok {
			s.info[u.commit] = p
			continue
		}
		asked[u.commit] = true
		ask.WriteString(u.commit + "\n")
	}
	if s.base != "" {
		// "<commit> <parent>": head's whole change, as if base were its
		// parent. Its header is head's, so it is renamed below (to all
		// f's) for patch-id to tell it from head's own change.
		ask.WriteString(head + " " + s.base + "\n")
	}
	segs, err := s.diffTree(ctx, ask.Bytes())
	if err != nil {
		return nil, err
	}
	var wholeSeg *diffSegment
	if s.base != "" {
		wholeSeg = &segs[len(segs)-1]
		wholeSeg.rename(strings.Repeat("f", len(head)))
	}
	paths := map[string]bool{}
	for _, sg := range segs {
		for _, c := range sg.raw {
			paths[c.path] = true
		}
	}
	for _, known := range s.info {
		for _, p := range known.paths {
			paths[p] = true
		}
	}
	if wholeSeg != nil {
		s.changes = wholeSeg.raw
	}
	for p := range paths {
		if strings.ContainsAny(p, "\n\r") {
			return nil, nil
		}
	}
	if len(paths) > 0 {
		if s.cands, err = s.touching(ctx, paths); err != nil {
			return nil, err
		}
	}
	var more bytes.Buffer
	for _, c := range s.cands {
		if p, ok := cache.get(c); ok {
			s.info[c] = p
		} else if len(tg.parents[c]) == 1 {
			asked[c] = true
			more.WriteString(c + "\n")
		} else {
			s.info[c] = patchInfo{} // a merge or root: no patch of its own
		}
	}
	if len(s.cands) == 0 {
		// No commit on a tip touches head's paths: no patch can match,
		// and only the tips themselves can hold head's content.
		return s, nil
	}
	moreSegs, err := s.diffTree(ctx, more.Bytes())
	if err != nil {
		return nil, err
	}
	all := append(segs, moreSegs...)
	infos, err := patchInfos(ctx, g, repo, all)
	if err != nil {
		return nil, err
	}
	for _, sg := range all {
		p := infos[sg.header]
		for _, c := range sg.raw {
			p.paths = append(p.paths, c.path)
		}
		if wholeSeg != nil && sg.header == wholeSeg.header {
			s.whole = p
			continue
		}
		s.info[sg.header] = p
	}
	for c := range asked {
		cache.put(c, s.info[c])
	}
	return s, nil
}

// diffTree runs diffTreeArgs over stdin (nothing when it is empty): one
// entry per line of stdin, in order.
func (s *proofSearch) diffTree(ctx context.Context, stdin []byte) ([]diffSegment, error) {
	if len(stdin) == 0 {
		return nil, nil
	}
	out, err := s.g.ObserveInput(ctx, s.repo.MainCheckout, stdin, diffTreeArgs...)
	if err != nil {
		return nil, fmt.Errorf("changes of %s: %w", s.head, err)
	}
	segs, err := parseDiffSegments(out)
	if err != nil {
		return nil, err
	}
	if n := bytes.Count(stdin, []byte{'\n'}); len(segs) != n {
		return nil, malformedAt("diff-tree", "%d entries for %d lines of input", len(segs), n)
	}
	return segs, nil
}

// touching lists the commits the tips add over head that touch one of
// paths (literally, every parent followed), with one git process.
func (s *proofSearch) touching(ctx context.Context, paths map[string]bool) ([]string, error) {
	var in bytes.Buffer
	seen := map[string]bool{}
	for _, t := range s.tg.tips {
		if c := t.target(); !seen[c] {
			seen[c] = true
			in.WriteString(c + "\n")
		}
	}
	in.WriteString("^" + s.head + "\n--\n")
	for _, p := range slices.Sorted(maps.Keys(paths)) {
		in.WriteString(p + "\n")
	}
	out, err := s.g.ObserveInput(ctx, s.repo.MainCheckout, in.Bytes(), "--literal-pathspecs", "rev-list", "--full-history", "--stdin")
	if err != nil {
		return nil, fmt.Errorf("commits on the advertised tips touching what %s changes: %w", s.head, err)
	}
	cs, err := parseRevList(out)
	if err != nil {
		return nil, fmt.Errorf("commits on the advertised tips touching what %s changes: %w", s.head, err)
	}
	var cands []string
	for _, c := range cs {
		if s.tg.has(c.commit) {
			cands = append(cands, c.commit)
		}
	}
	return cands, nil
}

// squashMerged looks for a published commit that holds every change head
// makes over base, in two forms (docs/decisions/0052-squash-commit-found-on-the-tip.md):
//
//   - its tree holds head's exact content and mode (or absence) of every
//     path head changed since base: a tip first, then any commit on a tip
//     that touches those paths (the squash commit, when the tip has edited
//     the same files since);
//   - its own change has the verbatim patch id, paths and modes of head's
//     whole change base..head (the squash commit, when the tip had edited
//     the same files before it, elsewhere in them).
//
// No merge is run, so no merge driver or attribute of the repository takes
// part. Commits that cancel out (no change overall) publish nothing.
func (s *proofSearch) squashMerged(ctx context.Context) (*machine.Proof, error) {
	if s.base == "" || len(s.changes) == 0 {
		return nil, nil
	}
	for _, c := range s.changes {
		if strings.ContainsAny(c.path, "\n\r") {
			return nil, nil
		}
	}
	p, err := s.squashState(ctx)
	if err != nil || p != nil {
		return p, err
	}
	if s.whole.id == "" {
		return nil, nil
	}
	for _, c := range s.cands {
		if p, ok := s.info[c]; ok && len(s.tg.parents[c]) == 1 && p.id == s.whole.id && p.shape == s.whole.shape {
			if r := s.tg.reaching(c); len(r) > 0 {
				return s.squashProof(r[0], c), nil
			}
		}
	}
	return nil, nil
}

func (s *proofSearch) squashProof(t Tip, via string) *machine.Proof {
	p := &machine.Proof{Kind: machine.ProofSquashMerged, Remote: t.Remote, Ref: t.Ref, Tip: t.Commit, Head: s.head, Base: s.base}
	if via != t.target() {
		p.Via = via
	}
	return p
}

// squashState is the first form of squashMerged: one cat-file call over
// every candidate, then one diff-tree (which also compares modes) for the
// first candidate that holds head's content.
func (s *proofSearch) squashState(ctx context.Context) (*machine.Proof, error) {
	type cand struct {
		commit string
		tip    *Tip
	}
	var cs []cand
	seen := map[string]bool{}
	for i, t := range s.tg.tips {
		if c := t.target(); !seen[c] {
			seen[c] = true
			cs = append(cs, cand{c, &s.tg.tips[i]})
		}
	}
	if len(cs)*len(s.changes) > maxSquashChecks {
		cs = nil
	}
	for _, c := range s.cands {
		if !seen[c] {
			seen[c] = true
			cs = append(cs, cand{commit: c})
		}
	}
	if len(cs)*len(s.changes) > maxSquashChecks {
		return nil, nil
	}
	var in bytes.Buffer
	for _, c := range cs {
		for _, ch := range s.changes {
			in.WriteString(c.commit + ":" + ch.path + "\n")
		}
	}
	out, err := s.g.ObserveInput(ctx, s.repo.MainCheckout, in.Bytes(), "cat-file", "--batch-check=%(objectname)")
	if err != nil {
		return nil, fmt.Errorf("paths on the advertised tips: %w", err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(cs)*len(s.changes) {
		return nil, fmt.Errorf("paths on the advertised tips: %d answers for %d questions", len(lines), len(cs)*len(s.changes))
	}
	for i, c := range cs {
		ok := true
		for j, ch := range s.changes {
			got := lines[i*len(s.changes)+j]
			if strings.HasSuffix(got, " missing") {
				got = ""
			}
			if got != ch.newOID {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		same, err := s.sameEntries(ctx, c.commit)
		if err != nil || !same {
			if err != nil {
				return nil, err
			}
			continue
		}
		t := c.tip
		if t == nil {
			r := s.tg.reaching(c.commit)
			if len(r) == 0 {
				continue
			}
			t = &r[0]
		}
		return s.squashProof(*t, c.commit), nil
	}
	return nil, nil
}

// sameEntries reports whether commit has head's exact entry (content and
// mode, or absence) at every path head changed since base.
func (s *proofSearch) sameEntries(ctx context.Context, commit string) (bool, error) {
	differ, err := s.g.Observe(ctx, s.repo.MainCheckout, "diff-tree", "-r", "-z", "--no-renames", "--name-only", s.head, commit)
	if err != nil {
		return false, fmt.Errorf("paths where %s and %s differ: %w", s.head, commit, err)
	}
	d := map[string]bool{}
	for _, p := range bytes.Split(differ, []byte{0}) {
		if len(p) > 0 {
			d[string(p)] = true
		}
	}
	for _, c := range s.changes {
		if d[c.path] {
			return false, nil
		}
	}
	return true, nil
}
