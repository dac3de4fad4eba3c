package proof

import (
	"bytes"
	"context"
	"fmt"
	"github.com/custody-sh/custody/observe/hostio"
	"strings"
)

// tipGraph is the history the advertised tips add over head: every commit
// of `git rev-list --parents <tips> --not <head>`, with its parents. One
// walk answers, for every tip at once, which commits it reaches: a tip
// reaches a commit c outside the graph exactly when it is c, or reaches a
// Commit of the graph that has c as a parent (every commit between a tip
// and a descendant of c that head does not reach is in the graph).
type tipGraph struct {
	parents  map[string][]string
	children map[string][]string
	tips     []Tip
}

// readTipGraph walks the history tips add over head with one git process.
func readTipGraph(ctx context.Context, g *hostio.Git, repo hostio.Repo, head string, tips []Tip) (*tipGraph, error) {
	var in bytes.Buffer
	seen := map[string]bool{}
	for _, t := range tips {
		if c := t.target(); !seen[c] {
			seen[c] = true
			in.WriteString(c + "\n")
		}
	}
	in.WriteString("^" + head + "\n")
	out, err := g.ObserveInput(ctx, repo.MainCheckout, in.Bytes(), "rev-list", "--parents", "--stdin")
	if err != nil {
		return nil, fmt.Errorf("history the advertised tips add over %s: %w", head, err)
	}
	cs, err := parseRevList(out)
	if err != nil {
		return nil, err
	}
	tg := &tipGraph{parents: map[string][]string{}, children: map[string][]string{}, tips: tips}
	for _, c := range cs {
		tg.parents[c.commit] = c.parents
		for _, p := range c.parents {
			tg.children[p] = append(tg.children[p], c.commit)
		}
	}
	return tg, nil
}

// revListCommit is one line of `git rev-list [--parents]`.
type revListCommit struct {
	commit  string
	parents []string
}

// parseRevList parses `git rev-list` output, with or without --parents:
// one commit per line, followed by its parents, separated by single
// spaces. Any other line is an error wrapping ErrMalformed naming the line
// number: a commit silently dropped could make head's own commits look
// fewer than they are. A trailing line without newline is accepted.
func parseRevList(b []byte) ([]revListCommit, error) {
	var out []revListCommit
	for lineNo := 1; len(b) > 0; lineNo++ {
		var line []byte
		line, b, _ = bytes.Cut(b, []byte{'\n'})
		f := strings.Split(string(line), " ")
		for _, id := range f {
			if !hostio.IsHexOID(id) {
				return nil, hostio.MalformedAt("git rev-list", "line %d: %q is not a list of object ids", lineNo, line)
			}
		}
		out = append(out, revListCommit{commit: f[0], parents: f[1:]})
	}
	return out, nil
}

// above returns the commits of the graph that reach one of from (those of
// from in the graph included), walking child links.
func (tg *tipGraph) above(from ...string) map[string]bool {
	seen := map[string]bool{}
	var stack []string
	for _, c := range from {
		if _, ok := tg.parents[c]; ok && !seen[c] {
			seen[c] = true
			stack = append(stack, c)
		}
	}
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, k := range tg.children[c] {
			if !seen[k] {
				seen[k] = true
				stack = append(stack, k)
			}
		}
	}
	return seen
}

// reaching returns, in rank order, the tips that reach commit c, which may
// lie outside the graph (head, or a commit below it).
func (tg *tipGraph) reaching(c string) []Tip {
	set := tg.above(append([]string{c}, tg.children[c]...)...)
	var out []Tip
	for _, t := range tg.tips {
		if t.target() == c || set[t.target()] {
			out = append(out, t)
		}
	}
	return out
}

// has reports whether c is in the graph: some tip reaches it and head
// does not.
func (tg *tipGraph) has(c string) bool {
	_, ok := tg.parents[c]
	return ok
}

// UniqueCommits lists the commits head adds over every advertised tip, with
// their parents, in one `git rev-list --parents --stdin`.
func UniqueCommits(ctx context.Context, g *hostio.Git, repo hostio.Repo, head string, tips []Tip) ([]uniqueCommit, error) {
	var in bytes.Buffer
	seen := map[string]bool{}
	for _, t := range tips {
		if c := t.target(); !seen[c] {
			seen[c] = true
			in.WriteString("^" + c + "\n")
		}
	}
	in.WriteString(head + "\n")
	out, err := g.ObserveInput(ctx, repo.MainCheckout, in.Bytes(), "rev-list", "--parents", "--stdin")
	if err != nil {
		return nil, fmt.Errorf("commits %s adds over the advertised tips: %w", head, err)
	}
	cs, err := parseRevList(out)
	if err != nil {
		return nil, fmt.Errorf("commits %s adds over the advertised tips: %w", head, err)
	}
	us := make([]uniqueCommit, len(cs))
	for i, c := range cs {
		us[i] = uniqueCommit{Commit: c.commit, parents: c.parents}
	}
	return us, nil
}
