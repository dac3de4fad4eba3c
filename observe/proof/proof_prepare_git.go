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
