package proof

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
)

// The per-head proof search as it was before one search proved every head
// of a plan (docs/decisions/0215-one-proof-search-per-plan.md), kept as an
// oracle: on any history, the batched search must prove what it proved
// (proof_oracle_random_internal_test.go compares them).

// oracleProve is Prove before 0215: its own tip graph, unique commits,
// diff-tree, path search, patch-id and cat-file for head alone.
func oracleProve(ctx context.Context, g *hostio.Git, repo hostio.Repo, head string, v *RemoteView) (*machine.Proof, error) {
	if v == nil || len(v.Tips) == 0 || head == "" {
		return nil, nil
	}
	if t, ok := exactTip(v.Tips, head); ok {
		return ancestryProof(t, head), nil
	}
	tg, err := readTipGraph(ctx, g, repo, head, v.Tips)
	if err != nil {
		return nil, err
	}
	if r := tg.reaching(head); len(r) > 0 {
		return ancestryProof(r[0], head), nil
	}
	unique, err := UniqueCommits(ctx, g, repo, head, v.Tips)
	if err != nil {
		return nil, err
	}
	if len(unique) == 0 {
		return nil, errReachableFromNoneAlone(head)
	}
	commits := make([]string, len(unique))
	for i, u := range unique {
		commits[i] = u.Commit
	}
	s, err := oracleNewProofSearch(ctx, g, repo, head, unique, tg, v.patches)
	if err != nil || s == nil {
		return nil, err
	}
	p, err := s.patchEquivalent(ctx)
	if err == nil && p == nil {
		p, err = oracleSquashMerged(ctx, s)
	}
	if p != nil {
		p.Commits = commits
	}
	return p, err
}

// oracleNewProofSearch is newProofSearch before 0215.
func oracleNewProofSearch(ctx context.Context, g *hostio.Git, repo hostio.Repo, head string, unique []uniqueCommit, tg *tipGraph, cache *patchCache) (*proofSearch, error) {
	s := &proofSearch{g: g, repo: repo, head: head, unique: unique, tg: tg, info: map[string]patchInfo{}}
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
	var ask bytes.Buffer
	asked := map[string]bool{}
	for _, u := range unique {
		if len(u.parents) != 1 {
			continue
		}
		if p, ok := cache.get(u.Commit); ok {
			s.info[u.Commit] = p
			continue
		}
		asked[u.Commit] = true
		ask.WriteString(u.Commit + "\n")
	}
	if s.base != "" {
		ask.WriteString(head + " " + s.base + "\n")
	}
	segs, err := diffTreeStdin(ctx, g, repo, ask.Bytes())
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
		if s.cands, err = oracleTouching(ctx, s, paths); err != nil {
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
			s.info[c] = patchInfo{}
		}
	}
	if len(s.cands) == 0 {
		return s, nil
	}
	moreSegs, err := diffTreeStdin(ctx, g, repo, more.Bytes())
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

// oracleSquashMerged is squashMerged before 0215.
func oracleSquashMerged(ctx context.Context, s *proofSearch) (*machine.Proof, error) {
	if s.base == "" || len(s.changes) == 0 {
		return nil, nil
	}
	for _, c := range s.changes {
		if strings.ContainsAny(c.path, "\n\r") {
			return nil, nil
		}
	}
	p, err := oracleSquashState(ctx, s)
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

// oracleSquashState is squashState before 0215, with its own cat-file.
func oracleSquashState(ctx context.Context, s *proofSearch) (*machine.Proof, error) {
	cs := s.squashCands()
	if len(cs) == 0 {
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
	return s.squashState(ctx, cs, lines)
}

// oracleTouching is the per-head search of the commits on the tips that
// touch paths, as the per-head proof asked it: git's own pathspec answer.
func oracleTouching(ctx context.Context, s *proofSearch, paths map[string]bool) ([]string, error) {
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
		return nil, err
	}
	cs, err := parseRevList(out)
	if err != nil {
		return nil, err
	}
	var cands []string
	for _, c := range cs {
		if s.tg.has(c.commit) {
			cands = append(cands, c.commit)
		}
	}
	return cands, nil
}
