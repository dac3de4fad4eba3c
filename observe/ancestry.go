package observe

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/proof"
)

// Ancestors answers, with one `git rev-list --stdin` for all of them,
// which of heads are ancestors of (or equal to) tip: rev-list lists every
// commit reachable from a head and not from tip, so a head it does not
// list is reachable from tip. It is the question Prove asks of each head
// first, asked once for a whole plan or apply; a commit's ancestry never
// changes, so the answer stays true for as long as tip is the tip proved
// against.
func Ancestors(ctx context.Context, g *hostio.Git, repo hostio.Repo, tip string, heads []string) (map[string]bool, error) {
	var in bytes.Buffer
	in.WriteString("^" + tip + "\n")
	want := map[string]bool{}
	for _, h := range heads {
		if !hostio.IsHexOID(h) || want[h] {
			continue
		}
		want[h] = true
		in.WriteString(h + "\n")
	}
	out := map[string]bool{}
	if len(want) == 0 {
		return out, nil
	}
	listed, err := g.ObserveInput(ctx, repo.MainCheckout, in.Bytes(), "rev-list", "--stdin")
	if err != nil {
		return nil, fmt.Errorf("ancestry of %d heads against %s: %w", len(want), tip, err)
	}
	for _, line := range strings.Split(string(listed), "\n") {
		delete(want, strings.TrimSpace(line))
	}
	// rev-list walks the commit a tag object names, under the commit's id:
	// a head it did not list is reachable from tip only if it is that
	// commit itself.
	commits, err := areCommits(ctx, g, repo, slices.Sorted(maps.Keys(want)))
	if err != nil {
		return nil, fmt.Errorf("ancestry of %d heads against %s: %w", len(heads), tip, err)
	}
	for h := range want {
		out[h] = commits[h]
	}
	return out, nil
}

// areCommits reports which of ids name commit objects, with one git
// process (none when ids is empty).
func areCommits(ctx context.Context, g *hostio.Git, repo hostio.Repo, ids []string) (map[string]bool, error) {
	out := make(map[string]bool, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	var in bytes.Buffer
	for _, id := range ids {
		in.WriteString(id + "\n")
	}
	b, err := g.ObserveInput(ctx, repo.MainCheckout, in.Bytes(), "cat-file", "--batch-check=%(objectname) %(objecttype)")
	if err != nil {
		return nil, fmt.Errorf("types of %d objects: %w", len(ids), err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != len(ids) {
		return nil, hostio.MalformedAt(gitfiles.BatchCheckWhat, "%d lines for %d objects", len(lines), len(ids))
	}
	for i, line := range lines {
		out[ids[i]] = line == ids[i]+" commit"
	}
	return out, nil
}

// proveKnowing is Prove for a head whose ancestry of the view's first tip
// was answered already (scope.Ancestors, from Ancestors over that tip), or
// whose proof was found with others (scope.Proofs): an ancestor gets the
// proof Prove would give it without asking git again, a head of the batch
// its result; any other head is proved by Prove.
func proveKnowing(ctx context.Context, g *hostio.Git, repo hostio.Repo, head string, scope Scope) (*machine.Proof, error) {
	v := scope.View
	if v == nil || len(v.Tips) == 0 || head == "" {
		return proof.Prove(ctx, g, repo, head, v)
	}
	if !scope.Ancestors[head] {
		if r, ok := scope.Proofs.Get(ctx, head); ok {
			return r.Proof, r.Err
		}
		return proof.Prove(ctx, g, repo, head, v)
	}
	for _, t := range v.Tips {
		if t.Commit == head {
			return proof.Prove(ctx, g, repo, head, v) // a tip itself: Prove asks git nothing
		}
	}
	t := v.Tips[0]
	return &machine.Proof{Kind: machine.ProofAncestry, Remote: t.Remote, Ref: t.Ref, Tip: t.Commit, Head: head}, nil
}
