package proof

import (
	"bytes"
	"context"
	"fmt"
	"github.com/custody-sh/custody/observe/hostio"
	"maps"
	"slices"
	"strings"
)

// newProofSearch starts the search of head, whose unique commits and tip
// graph are known; prepareSearches fills in the rest.
func newProofSearch(g *hostio.Git, repo hostio.Repo, head string, unique []uniqueCommit, tg *tipGraph) *proofSearch {
	s := &proofSearch{g: g, repo: repo, head: head, unique: unique, tg: tg, info: map[string]patchInfo{},
		asked: map[string]bool{}, paths: map[string]bool{}, searchable: true}
	mine := map[string]bool{}
	for _, u := range unique {
		mine[u.Commit] = true
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
	return s
}

// prepareSearches computes what the patch-equivalence and squash checks of
// every search need, with at most four git processes for all of them (one
// more for each search whose paths a merge or root on the tips touches):
// one diff-tree of the heads' own commits and whole changes, one rev-list
// of the commits on the tips that touch any of their paths, one diff-tree
// of those, and one patch-id. Patch ids already in cache (another tree of
// the same plan asked) are not computed again. A search whose paths git's
// line-based --stdin protocols cannot carry (a newline) is marked not
// searchable: it finds no proof.
func prepareSearches(ctx context.Context, g *hostio.Git, repo hostio.Repo, hg *historyGraph, ss []*proofSearch, cache *patchCache) error {
	if len(ss) == 0 {
		return nil
	}
	// The heads' own commits (each asked once, whichever heads share it)
	// and each head's whole change base..head.
	var ask bytes.Buffer
	type slot struct {
		whole  *proofSearch
		commit string
	}
	var slots []slot
	listed := map[string]bool{}
	for _, s := range ss {
		for _, u := range s.unique {
			if len(u.parents) != 1 {
				continue // merges and roots have no patch of their own here
			}
			if p, ok := cache.get(u.Commit); ok {
				s.info[u.Commit] = p
				continue
			}
			s.asked[u.Commit] = true
			if !listed[u.Commit] {
				listed[u.Commit] = true
				ask.WriteString(u.Commit + "\n")
				slots = append(slots, slot{commit: u.Commit})
			}
		}
		if s.base != "" {
			// "<commit> <parent>": head's whole change, as if base were its
			// parent. Its header is head's, so it is renamed below for
			// patch-id to tell it from head's own change.
			ask.WriteString(s.head + " " + s.base + "\n")
			slots = append(slots, slot{whole: s})
		}
	}
	segs, err := diffTreeStdin(ctx, g, repo, ask.Bytes())
	if err != nil {
		return err
	}
	own := map[string]*diffSegment{}
	for i := range segs {
		sg := &segs[i]
		if w := slots[i].whole; w != nil {
			sg.rename(wholeHeader(w.head, i))
			w.wholeSeg = sg
			w.changes = sg.raw
			continue
		}
		if sg.header != slots[i].commit {
			return hostio.MalformedAt("diff-tree", "entry %d is %s, asked about %s", i+1, sg.header, slots[i].commit)
		}
		own[sg.header] = sg
	}
	union := map[string]bool{}
	for _, s := range ss {
		for _, u := range s.unique {
			if sg, ok := own[u.Commit]; ok {
				for _, c := range sg.raw {
					s.paths[c.path] = true
				}
			}
		}
		if s.wholeSeg != nil {
			for _, c := range s.wholeSeg.raw {
				s.paths[c.path] = true
			}
		}
		for _, known := range s.info {
			for _, p := range known.paths {
				s.paths[p] = true
			}
		}
		for p := range s.paths {
			if strings.ContainsAny(p, "\n\r") {
				s.searchable = false
			}
		}
		if s.searchable {
			maps.Copy(union, s.paths)
		}
	}
	touched, err := touchingAny(ctx, g, repo, hg, union)
	if err != nil {
		return err
	}
	// The commits some head's tip graph holds among them, and the changes
	// of those with one parent (each asked once).
	var more bytes.Buffer
	var moreCommits []string
	for _, c := range touched {
		in := false
		for _, s := range ss {
			if s.searchable && s.tg.has(c) {
				in = true
				break
			}
		}
		if !in || len(hg.parents[c]) != 1 || listed[c] {
			continue
		}
		if _, ok := cache.get(c); ok {
			continue
		}
		listed[c] = true
		more.WriteString(c + "\n")
		moreCommits = append(moreCommits, c)
	}
	moreSegs, err := diffTreeStdin(ctx, g, repo, more.Bytes())
	if err != nil {
		return err
	}
	for i := range moreSegs {
		if moreSegs[i].header != moreCommits[i] {
			return hostio.MalformedAt("diff-tree", "entry %d is %s, asked about %s", i+1, moreSegs[i].header, moreCommits[i])
		}
		own[moreSegs[i].header] = &moreSegs[i]
	}
	pathsOf := func(c string) []string {
		if sg, ok := own[c]; ok {
			ps := make([]string, len(sg.raw))
			for i, r := range sg.raw {
				ps[i] = r.path
			}
			return ps
		}
		p, _ := cache.get(c)
		return p.paths
	}
	// The merges and roots on each head's tips: git's rev-list decides a
	// merge by its "relevant" parents, which depend on where its walk
	// stops, so custody asks their changes against every parent itself
	// (one diff-tree for all heads) and takes the same rule for every
	// walk: a merge touches a head's paths when its change against some
	// parent does. A head whose tips hold more than maxMergeCands of them
	// takes none.
	mergesOf := map[*proofSearch][]string{}
	var merges []string
	seenMerge := map[string]bool{}
	for _, s := range ss {
		if !s.searchable || len(s.paths) == 0 {
			continue
		}
		var ms []string
		for c, ps := range s.tg.parents {
			if len(ps) != 1 {
				ms = append(ms, c)
			}
		}
		if len(ms) > maxMergeCands {
			continue
		}
		mergesOf[s] = ms
		for _, m := range ms {
			if !seenMerge[m] {
				seenMerge[m] = true
				merges = append(merges, m)
			}
		}
	}
	slices.Sort(merges)
	mergePaths, err := changedAgainstEachParent(ctx, g, repo, merges)
	if err != nil {
		return err
	}
	var wantIDs []*proofSearch
	for _, s := range ss {
		if !s.searchable || len(s.paths) == 0 {
			continue
		}
		var mine []string
		for _, c := range touched {
			if s.tg.has(c) && len(hg.parents[c]) == 1 && touchesAny(pathsOf(c), s.paths) {
				mine = append(mine, c)
			}
		}
		for _, m := range mergesOf[s] {
			if touchesAny(mergePaths[m], s.paths) {
				mine = append(mine, m)
			}
		}
		hg.sortByRank(mine)
		s.cands = mine
		for _, c := range s.cands {
			if p, ok := cache.get(c); ok {
				s.info[c] = p
			} else if len(hg.parents[c]) == 1 {
				s.asked[c] = true
			} else {
				s.info[c] = patchInfo{} // a merge or root: no patch of its own
			}
		}
		if len(s.cands) > 0 {
			// No commit on a tip touches head's paths otherwise: no patch
			// can match, and only the tips themselves can hold head's
			// content.
			wantIDs = append(wantIDs, s)
		}
	}
	return patchIDsOf(ctx, g, repo, wantIDs, own, cache)
}

// maxMergeCands bounds the merges and roots on one head's tips whose
// changes a proof search asks git for; beyond it no merge is a candidate
// (the squash commit a tree's proof names is then a commit with one
// parent, or a tip).
const maxMergeCands = 2000

// changedAgainstEachParent returns, for each of commits (merges and roots
// of the graph), every path its change against any of its parents (the
// empty tree, for a root) touches, with one git process.
func changedAgainstEachParent(ctx context.Context, g *hostio.Git, repo hostio.Repo, commits []string) (map[string][]string, error) {
	out := make(map[string][]string, len(commits))
	if len(commits) == 0 {
		return out, nil
	}
	var in bytes.Buffer
	for _, c := range commits {
		in.WriteString(c + "\n")
	}
	b, err := g.ObserveInput(ctx, repo.MainCheckout, in.Bytes(), "diff-tree", "--stdin", "-m", "--root", "--always", "-r", "--name-only", "-z",
		"--no-renames", "--no-ext-diff", "--no-textconv", "--no-relative")
	if err != nil {
		return nil, fmt.Errorf("changes of %d merges on the advertised tips: %w", len(commits), err)
	}
	// Each commit's entry starts with its id (--always: even when every
	// change is empty), once or once per parent, followed by the paths of
	// its changes; the commits come in the order asked.
	next, cur := 0, ""
	for _, tok := range strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00") {
		switch {
		case tok == cur:
		case next < len(commits) && tok == commits[next]:
			cur = tok
			next++
		case cur == "":
			return nil, hostio.MalformedAt("diff-tree", "output does not start with %s", commits[0])
		default:
			out[cur] = append(out[cur], tok)
		}
	}
	if next != len(commits) {
		return nil, hostio.MalformedAt("diff-tree", "no entry for %s", commits[next])
	}
	return out, nil
}

// patchIDsOf computes, with one git patch-id, the patch ids of the own
// commits, candidates and whole change of every search in ss, from the
// diff-tree entries in own (and each search's whole entry), and caches
// those of commits.
func patchIDsOf(ctx context.Context, g *hostio.Git, repo hostio.Repo, ss []*proofSearch, own map[string]*diffSegment, cache *patchCache) error {
	if len(ss) == 0 {
		return nil
	}
	var all []diffSegment
	added := map[string]bool{}
	for _, s := range ss {
		for _, c := range slices.Sorted(maps.Keys(s.asked)) {
			sg, ok := own[c]
			if !ok {
				return fmt.Errorf("changes of %s: no diff-tree entry for %s", s.head, c)
			}
			if !added[c] {
				added[c] = true
				all = append(all, *sg)
			}
		}
		if s.wholeSeg != nil {
			all = append(all, *s.wholeSeg)
		}
	}
	infos, err := patchInfos(ctx, g, repo, all)
	if err != nil {
		return err
	}
	withPaths := func(sg *diffSegment) patchInfo {
		p := infos[sg.header]
		for _, c := range sg.raw {
			p.paths = append(p.paths, c.path)
		}
		return p
	}
	for _, s := range ss {
		for c := range s.asked {
			p := withPaths(own[c])
			s.info[c] = p
			cache.put(c, p)
		}
		if s.wholeSeg != nil {
			s.whole = withPaths(s.wholeSeg)
		}
	}
	return nil
}

// wholeHeader is the header a whole change base..head is renamed to: an
// id of head's length no commit has (all f's but the entry's number), so
// that patch-id names each whole change of a batch apart from every
// Commit and from the others.
func wholeHeader(head string, n int) string {
	num := fmt.Sprintf("%x", n)
	return strings.Repeat("f", len(head)-len(num)-1) + "e" + num
}

// diffTreeStdin runs diffTreeArgs over stdin (nothing when it is empty):
// one entry per line of stdin, in order.
func diffTreeStdin(ctx context.Context, g *hostio.Git, repo hostio.Repo, stdin []byte) ([]diffSegment, error) {
	if len(stdin) == 0 {
		return nil, nil
	}
	out, err := g.ObserveObjects(ctx, repo, stdin, diffTreeArgs...)
	if err != nil {
		return nil, fmt.Errorf("changes of the commits proofs compare: %w", err)
	}
	segs, err := parseDiffSegments(out)
	if err != nil {
		return nil, err
	}
	if n := bytes.Count(stdin, []byte{'\n'}); len(segs) != n {
		return nil, hostio.MalformedAt("diff-tree", "%d entries for %d lines of input", len(segs), n)
	}
	return segs, nil
}

// touchingAny lists the commits the tips add over the graph's bottom that
// touch one of paths (literally, every parent followed), with one git
// process; none when paths is empty.
func touchingAny(ctx context.Context, g *hostio.Git, repo hostio.Repo, hg *historyGraph, paths map[string]bool) ([]string, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	var in bytes.Buffer
	for _, c := range hg.targets {
		in.WriteString(c + "\n")
	}
	for _, b := range hg.bottom {
		in.WriteString("^" + b + "\n")
	}
	in.WriteString("--\n")
	for _, p := range slices.Sorted(maps.Keys(paths)) {
		in.WriteString(p + "\n")
	}
	out, err := g.ObserveInput(ctx, repo.MainCheckout, in.Bytes(), "--literal-pathspecs", "rev-list", "--full-history", "--stdin")
	if err != nil {
		return nil, fmt.Errorf("commits on the advertised tips touching what the heads change: %w", err)
	}
	cs, err := parseRevList(out)
	if err != nil {
		return nil, fmt.Errorf("commits on the advertised tips touching what the heads change: %w", err)
	}
	ids := make([]string, len(cs))
	for i, c := range cs {
		ids[i] = c.commit
	}
	return ids, nil
}

// touchesAny reports whether a commit changing the entries changed would
// be listed by `git rev-list -- <paths>` for that reason alone: a changed
// entry is one of paths or lies below one of them. (git may list more, a
// submodule above a path, say; a commit it lists for another head's paths
// then never counts for this one, so a head's candidates are the same in
// every batch.)
func touchesAny(changed []string, paths map[string]bool) bool {
	for _, c := range changed {
		if paths[c] {
			return true
		}
		for i := 0; i < len(c); i++ {
			if c[i] == '/' && paths[c[:i]] {
				return true
			}
		}
	}
	return false
}
