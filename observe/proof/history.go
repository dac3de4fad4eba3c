package proof

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/custody-sh/custody/observe/hostio"
	"slices"
	"strconv"
	"strings"
)

// historyGraph is the history every head of one proof batch and the
// advertised tips share above their common ancestors: every commit of
// `git rev-list --parents <tips> <heads> --not <bottom>`, where bottom is
// `git merge-base --octopus --all` of the first tip and every head. Each
// bottom commit is an ancestor of every head and of a tip, so everything
// one head's proof asks about lies in the graph: the commits the tips add
// over the head (its tip graph) and the commits the head adds over the
// tips (its unique commits). Within the graph, reachability is exact: a
// path from a commit of the graph to another never leaves it (a commit on
// it below bottom would put the upper end below bottom too).
type historyGraph struct {
	parents map[string][]string
	// time is each commit's committer time.
	time map[string]int64
	// fromTips are the commits of the graph some tip reaches.
	fromTips map[string]bool
	tips     []Tip
	targets  []string
	bottom   []string
}

// readHistoryGraph walks the history of heads and tips with two git
// processes, whatever their number.
func readHistoryGraph(ctx context.Context, g *hostio.Git, repo hostio.Repo, heads []string, tips []Tip) (*historyGraph, error) {
	hg := &historyGraph{tips: tips}
	seen := map[string]bool{}
	for _, t := range tips {
		if c := t.target(); !seen[c] {
			seen[c] = true
			hg.targets = append(hg.targets, c)
		}
	}
	bottom, err := commonAncestors(ctx, g, repo, append([]string{hg.targets[0]}, heads...))
	if err != nil {
		return nil, err
	}
	hg.bottom = bottom
	var in bytes.Buffer
	for _, c := range hg.targets {
		in.WriteString(c + "\n")
	}
	for _, h := range heads {
		in.WriteString(h + "\n")
	}
	for _, b := range bottom {
		in.WriteString("^" + b + "\n")
	}
	out, err := g.ObserveInput(ctx, repo.MainCheckout, in.Bytes(), "rev-list", "--parents", "--timestamp", "--stdin")
	if err != nil {
		return nil, fmt.Errorf("history of %d heads and the advertised tips: %w", len(heads), err)
	}
	hg.parents = map[string][]string{}
	hg.time = map[string]int64{}
	for lineNo := 1; len(out) > 0; lineNo++ {
		var line []byte
		line, out, _ = bytes.Cut(out, []byte{'\n'})
		ts, rest, _ := bytes.Cut(line, []byte{' '})
		t, err := strconv.ParseInt(string(ts), 10, 64)
		cs, perr := parseRevList(rest)
		if err != nil || perr != nil || len(cs) != 1 {
			return nil, hostio.MalformedAt("git rev-list", "line %d: %q is not a time and a list of object ids", lineNo, line)
		}
		hg.parents[cs[0].commit] = cs[0].parents
		hg.time[cs[0].commit] = t
	}
	hg.fromTips = hg.below(hg.targets...)
	return hg, nil
}

// commonAncestors returns the best common ancestors of commits (none when
// they share no history).
func commonAncestors(ctx context.Context, g *hostio.Git, repo hostio.Repo, commits []string) ([]string, error) {
	args := append([]string{"merge-base", "--octopus", "--all"}, commits...)
	out, err := g.Observe(ctx, repo.MainCheckout, args...)
	var ee *hostio.ExitError
	if errors.As(err, &ee) && ee.Code == 1 && len(bytes.TrimSpace(out)) == 0 && !strings.Contains(ee.Stderr, "fatal:") && !strings.Contains(ee.Stderr, "error:") {
		return nil, nil // no common ancestor: git says so by exiting 1 with no answer
	}
	if err != nil {
		return nil, fmt.Errorf("common ancestors of %d heads and the first advertised tip: %w", len(commits)-1, err)
	}
	var bases []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if !hostio.IsHexOID(line) {
			return nil, hostio.MalformedAt("git merge-base", "%q is not an object id", line)
		}
		bases = append(bases, line)
	}
	return bases, nil
}

// below returns the commits of the graph that from reach (those of from
// in the graph included), walking parent links.
func (hg *historyGraph) below(from ...string) map[string]bool {
	seen := map[string]bool{}
	var stack []string
	for _, c := range from {
		if _, ok := hg.parents[c]; ok && !seen[c] {
			seen[c] = true
			stack = append(stack, c)
		}
	}
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, p := range hg.parents[c] {
			if _, ok := hg.parents[p]; ok && !seen[p] {
				seen[p] = true
				stack = append(stack, p)
			}
		}
	}
	return seen
}

// of returns what one head's proof needs of the graph: its tip graph (the
// commits the tips reach and head does not) and its unique commits (those
// head reaches and no tip does, newest first, with their parents).
func (hg *historyGraph) of(head string) (*tipGraph, []uniqueCommit) {
	mine := hg.below(head)
	tg := &tipGraph{parents: map[string][]string{}, children: map[string][]string{}, tips: hg.tips}
	for c := range hg.fromTips {
		if mine[c] {
			continue
		}
		tg.parents[c] = hg.parents[c]
		for _, p := range hg.parents[c] {
			tg.children[p] = append(tg.children[p], c)
		}
	}
	var unique []uniqueCommit
	for c := range mine {
		if !hg.fromTips[c] {
			unique = append(unique, uniqueCommit{Commit: c, parents: hg.parents[c]})
		}
	}
	slices.SortFunc(unique, func(a, b uniqueCommit) int { return hg.newerFirst(a.Commit, b.Commit) })
	return tg, unique
}

// sortByRank sorts commits of the graph newest first (by committer time,
// then by id): an order that depends on nothing but the commits, so a
// head's candidates are tried in the same order whatever else its batch
// holds.
func (hg *historyGraph) sortByRank(cs []string) {
	slices.SortFunc(cs, hg.newerFirst)
}

func (hg *historyGraph) newerFirst(a, b string) int {
	return cmp.Or(cmp.Compare(hg.time[b], hg.time[a]), strings.Compare(a, b))
}
