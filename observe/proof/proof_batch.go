package proof

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
)

// ProofResult is what proving one head found: its proof, nil when nothing
// proves it, or the error that stopped the search (Proof is nil then).
type ProofResult struct {
	Proof *machine.Proof
	Err   error
}

// ProveAll proves each of heads exactly as Prove proves it alone, asking
// Git the questions of all of them at once: the history, the changes of
// their own commits, the commits on the tips that touch their paths, the
// patch ids and the squash contents each take one git process for the
// whole batch (docs/decisions/0215-one-proof-search-per-plan.md). Only
// what is asked of one head's candidate alone (git's --cherry-pick
// agreement, the entries of a squash commit that holds its content, the
// exact path search when a merge touches its paths) costs a process of
// its own. When a question asked for the whole batch fails, each head is
// proved alone, so one head's trouble is only its own.
//
// Shallow remotes are asked last, and only of heads nothing else proves:
// their tips prove only the history they hold (proveShallow).
func ProveAll(ctx context.Context, g *hostio.Git, repo hostio.Repo, heads []string, v *RemoteView) map[string]ProofResult {
	out := proveAllWhole(ctx, g, repo, heads, v)
	if v == nil || len(v.shallow) == 0 {
		return out
	}
	for h, r := range out {
		if r.Proof != nil || r.Err != nil || !hostio.IsHexOID(h) {
			continue
		}
		p, err := proveShallow(ctx, g, repo, h, v)
		out[h] = ProofResult{Proof: p, Err: err}
	}
	return out
}

// proveAllWhole is ProveAll against the tips of remotes that hold whole
// history.
func proveAllWhole(ctx context.Context, g *hostio.Git, repo hostio.Repo, heads []string, v *RemoteView) map[string]ProofResult {
	out := make(map[string]ProofResult, len(heads))
	var need []string
	for _, h := range heads {
		if _, ok := out[h]; ok {
			continue
		}
		out[h] = ProofResult{}
		if v == nil || len(v.Tips) == 0 || h == "" {
			continue
		}
		if t, ok := exactTip(v.Tips, h); ok {
			out[h] = ProofResult{Proof: ancestryProof(t, h)}
			continue
		}
		if !hostio.IsHexOID(h) {
			// git would resolve a name or an abbreviation, and walk the
			// commit it names under another spelling: what it says of
			// that commit is no proof of h.
			out[h] = ProofResult{Err: fmt.Errorf("%q is not a full commit id, so whether it is published cannot be told", h)}
			continue
		}
		need = append(need, h)
	}
	if len(need) == 0 {
		return out
	}
	got, err := proveBatch(ctx, g, repo, need, v)
	if err == nil {
		maps.Copy(out, got)
		return out
	}
	if len(need) == 1 || ctx.Err() != nil {
		for _, h := range need {
			out[h] = ProofResult{Err: err}
		}
		return out
	}
	for _, h := range need {
		one, err := proveBatch(ctx, g, repo, []string{h}, v)
		if err != nil {
			out[h] = ProofResult{Err: err}
			continue
		}
		out[h] = one[h]
	}
	return out
}

// proveBatch proves heads, none of them a tip itself. An error is one of
// a question asked for every head; a head's own trouble is in its result.
func proveBatch(ctx context.Context, g *hostio.Git, repo hostio.Repo, heads []string, v *RemoteView) (map[string]ProofResult, error) {
	hg, err := readHistoryGraph(ctx, g, repo, heads, v.Tips)
	if err != nil {
		return nil, err
	}
	out := make(map[string]ProofResult, len(heads))
	var searches []*proofSearch
	for _, h := range heads {
		if _, ok := hg.parents[h]; !ok {
			if slices.Contains(hg.bottom, h) {
				// A common ancestor itself (the walk stops there): the
				// first tip, whose common ancestor with every head it is,
				// reaches it.
				out[h] = ProofResult{Proof: ancestryProof(v.Tips[0], h)}
			} else {
				// Not a commit git walked under this id (a tag object,
				// say): what git says of the commit it names is no proof.
				out[h] = ProofResult{Err: fmt.Errorf("%s is not a commit, so whether it is published cannot be told", h)}
			}
			continue
		}
		tg, unique := hg.of(h)
		if r := tg.reaching(h); len(r) > 0 {
			out[h] = ProofResult{Proof: ancestryProof(r[0], h)}
			continue
		}
		if len(unique) == 0 {
			out[h] = ProofResult{Err: errReachableFromNoneAlone(h)}
			continue
		}
		out[h] = ProofResult{}
		searches = append(searches, newProofSearch(g, repo, h, unique, tg))
	}
	if err := prepareSearches(ctx, g, repo, hg, searches, v.patches); err != nil {
		return nil, err
	}
	var squash []*proofSearch
	for _, s := range searches {
		if !s.searchable {
			continue
		}
		p, err := s.patchEquivalent(ctx)
		switch {
		case err != nil:
			out[s.head] = ProofResult{Err: err}
		case p != nil:
			out[s.head] = ProofResult{Proof: s.withCommits(p)}
		default:
			squash = append(squash, s)
		}
	}
	found, err := squashMergedAll(ctx, g, repo, squash)
	if err != nil {
		return nil, err
	}
	for s, r := range found {
		if r.Proof != nil {
			r.Proof = s.withCommits(r.Proof)
		}
		out[s.head] = r
	}
	return out, nil
}

// ProofSet is the proofs of a batch of heads, found in the background
// (StartProofs) while the trees they belong to are observed.
type ProofSet struct {
	Done chan struct{}
	Res  map[string]ProofResult
}

// StartProofs starts ProveAll of heads against v and returns at once.
func StartProofs(ctx context.Context, g *hostio.Git, repo hostio.Repo, heads []string, v *RemoteView) *ProofSet {
	ps := &ProofSet{Done: make(chan struct{})}
	go func() {
		defer close(ps.Done)
		ps.Res = ProveAll(ctx, g, repo, heads, v)
	}()
	return ps
}

// Get waits for the batch and returns head's result; false when the set
// is nil, head is not in it, or ctx ended first.
func (ps *ProofSet) Get(ctx context.Context, head string) (ProofResult, bool) {
	if ps == nil {
		return ProofResult{}, false
	}
	select {
	case <-ps.Done:
	case <-ctx.Done():
		return ProofResult{}, false
	}
	r, ok := ps.Res[head]
	return r, ok
}

// Wait returns once the batch is done (at once for a nil set).
func (ps *ProofSet) Wait() {
	if ps != nil {
		<-ps.Done
	}
}
