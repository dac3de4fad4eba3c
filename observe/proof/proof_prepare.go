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
//
// Each question to git is one method of searchBatch, asked in this order;
// each method starts at most one git process (none when it has nothing to
// ask).
func prepareSearches(ctx context.Context, g *hostio.Git, repo hostio.Repo, hg *historyGraph, ss []*proofSearch, cache *patchCache) error {
	if len(ss) == 0 {
		return nil
	}
	b := &searchBatch{g: g, repo: repo, hg: hg, ss: ss, cache: cache,
		listed: map[string]bool{}, own: map[string]*diffSegment{}}
	if err := b.askHeadChanges(ctx); err != nil {
		return err
	}
	b.notePaths()
	if err := b.askCommitsTouchingPaths(ctx); err != nil {
		return err
	}
	if err := b.askTouchingChanges(ctx); err != nil {
		return err
	}
	if err := b.askMergeChanges(ctx); err != nil {
		return err
	}
	return b.askPatchIDs(ctx)
}

// searchBatch is what prepareSearches's questions to git share: the
// searches of one batch, and what git has answered so far. Its methods are
// called once each, in prepareSearches's order; each reads what the ones
// before it filled in.
type searchBatch struct {
	g     *hostio.Git
	repo  hostio.Repo
	hg    *historyGraph
	ss    []*proofSearch
	cache *patchCache
	// listed are the commits whose changes a diff-tree of this batch asks
	// (each once, whichever heads share it).
	listed map[string]bool
	// own holds the diff-tree entry of each commit of listed.
	own map[string]*diffSegment
	// touched are the commits the tips add over the graph's bottom that
	// touch a path of some searchable head, as rev-list lists them.
	touched []string
	// mergesOf are the merges and roots on each search's tips whose changes
	// were asked; mergePaths the paths each of them touches against some
	// parent.
	mergesOf   map[*proofSearch][]string
	mergePaths map[string][]string
}

// askHeadChanges asks one diff-tree for the changes of the heads' own
// commits with one parent (each asked once, whichever heads share it; none
// whose patch id the cache holds) and for each head's whole change
// base..head. It fills in own, each search's whole change, and the info of
// the commits the cache answered.
func (b *searchBatch) askHeadChanges(ctx context.Context) error {
	var ask bytes.Buffer
	type slot struct {
		whole  *proofSearch
		commit string
	}
	var slots []slot
	for _, s := range b.ss {
		for _, u := range s.unique {
			if len(u.parents) != 1 {
				continue // merges and roots have no patch of their own here
			}
			if p, ok := b.cache.get(u.Commit); ok {
				s.info[u.Commit] = p
				continue
			}
			s.asked[u.Commit] = true
			if !b.listed[u.Commit] {
				b.listed[u.Commit] = true
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
	segs, err := diffTreeStdin(ctx, b.g, b.repo, ask.Bytes())
	if err != nil {
		return err
	}
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
		b.own[sg.header] = sg
	}
	return nil
}

// notePaths fills in each search's paths (those its own commits, its whole
// change and its cached commits touch) and marks not searchable a search
// with a path git's line-based --stdin protocols cannot carry. It asks git
// nothing.
func (b *searchBatch) notePaths() {
	for _, s := range b.ss {
		for _, u := range s.unique {
			if sg, ok := b.own[u.Commit]; ok {
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
	}
}

// askCommitsTouchingPaths asks one rev-list for the commits on the tips
// that touch a path of any searchable head (none when no head has a path)
// and fills in touched.
func (b *searchBatch) askCommitsTouchingPaths(ctx context.Context) error {
	union := map[string]bool{}
	for _, s := range b.ss {
		if s.searchable {
			maps.Copy(union, s.paths)
		}
	}
	touched, err := touchingAny(ctx, b.g, b.repo, b.hg, union)
	if err != nil {
		return err
	}
	b.touched = touched
	return nil
}

// askTouchingChanges asks one diff-tree for the changes of the commits of
// touched that some searchable head's tip graph holds and that have one
// parent (each asked once; none already listed or whose patch id the cache
// holds), and adds their entries to own.
func (b *searchBatch) askTouchingChanges(ctx context.Context) error {
	var more bytes.Buffer
	var moreCommits []string
	for _, c := range b.touched {
		in := false
		for _, s := range b.ss {
			if s.searchable && s.tg.has(c) {
				in = true
				break
			}
		}
		if !in || len(b.hg.parents[c]) != 1 || b.listed[c] {
			continue
		}
		if _, ok := b.cache.get(c); ok {
			continue
		}
		b.listed[c] = true
		more.WriteString(c + "\n")
		moreCommits = append(moreCommits, c)
	}
	moreSegs, err := diffTreeStdin(ctx, b.g, b.repo, more.Bytes())
	if err != nil {
		return err
	}
	for i := range moreSegs {
		if moreSegs[i].header != moreCommits[i] {
			return hostio.MalformedAt("diff-tree", "entry %d is %s, asked about %s", i+1, moreSegs[i].header, moreCommits[i])
		}
		b.own[moreSegs[i].header] = &moreSegs[i]
	}
	return nil
}

// askMergeChanges asks one diff-tree for the paths the merges and roots on
// each searchable head's tips change against each of their parents, and
// fills in mergesOf and mergePaths.
//
// git's rev-list decides a merge by its "relevant" parents, which depend on
// where its walk stops, so custody asks their changes against every parent
// itself (one diff-tree for all heads) and takes the same rule for every
// walk: a merge touches a head's paths when its change against some parent
// does. A head whose tips hold more than maxMergeCands of them takes none.
func (b *searchBatch) askMergeChanges(ctx context.Context) error {
	b.mergesOf = map[*proofSearch][]string{}
	var merges []string
	seenMerge := map[string]bool{}
	for _, s := range b.ss {
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
		b.mergesOf[s] = ms
		for _, m := range ms {
			if !seenMerge[m] {
				seenMerge[m] = true
				merges = append(merges, m)
			}
		}
	}
	slices.Sort(merges)
	mergePaths, err := changedAgainstEachParent(ctx, b.g, b.repo, merges)
	if err != nil {
		return err
	}
	b.mergePaths = mergePaths
	return nil
}

// maxMergeCands bounds the merges and roots on one head's tips whose
// changes a proof search asks git for; beyond it no merge is a candidate
// (the squash commit a tree's proof names is then a commit with one
// parent, or a tip).
const maxMergeCands = 2000

// askPatchIDs picks each searchable head's candidates and asks one
// patch-id for the patch ids of every commit and whole change whose id is
// not yet known (none when no head has a candidate).
func (b *searchBatch) askPatchIDs(ctx context.Context) error {
	return patchIDsOf(ctx, b.g, b.repo, b.pickCandidates(), b.own, b.cache)
}

// pickCandidates fills in each searchable head's cands (the commits on its
// tips that touch its paths, newest first) and the info of those whose
// patch needs no git (cached, or a merge or root, which has none), marks
// the others asked, and returns the searches with a candidate: only those
// need patch ids. It asks git nothing.
func (b *searchBatch) pickCandidates() []*proofSearch {
	var want []*proofSearch
	for _, s := range b.ss {
		if !s.searchable || len(s.paths) == 0 {
			continue
		}
		var mine []string
		for _, c := range b.touched {
			if s.tg.has(c) && len(b.hg.parents[c]) == 1 && touchesAny(b.pathsOf(c), s.paths) {
				mine = append(mine, c)
			}
		}
		for _, m := range b.mergesOf[s] {
			if touchesAny(b.mergePaths[m], s.paths) {
				mine = append(mine, m)
			}
		}
		b.hg.sortByRank(mine)
		s.cands = mine
		for _, c := range s.cands {
			if p, ok := b.cache.get(c); ok {
				s.info[c] = p
			} else if len(b.hg.parents[c]) == 1 {
				s.asked[c] = true
			} else {
				s.info[c] = patchInfo{} // a merge or root: no patch of its own
			}
		}
		if len(s.cands) > 0 {
			// No commit on a tip touches head's paths otherwise: no patch
			// can match, and only the tips themselves can hold head's
			// content.
			want = append(want, s)
		}
	}
	return want
}

// pathsOf returns the paths commit c changes: from its diff-tree entry of
// this batch, or else from the cache.
func (b *searchBatch) pathsOf(c string) []string {
	if sg, ok := b.own[c]; ok {
		ps := make([]string, len(sg.raw))
		for i, r := range sg.raw {
			ps[i] = r.path
		}
		return ps
	}
	p, _ := b.cache.get(c)
	return p.paths
}

// wholeHeader is the header a whole change base..head is renamed to: an
// id of head's length no commit has (all f's but the entry's number), so
// that patch-id names each whole change of a batch apart from every
// Commit and from the others.
func wholeHeader(head string, n int) string {
	num := fmt.Sprintf("%x", n)
	return strings.Repeat("f", len(head)-len(num)-1) + "e" + num
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
