package proof

import (
	"bytes"
	"context"
	"fmt"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
)

// Prove looks for a proof that head is recoverable from what the remotes
// Advertise now, in order: ancestry (an advertised tip contains head),
// patch-equivalent (every commit head adds has one parent, a non-empty
// patch, and an equal whitespace-exact patch on one tip, by both
// --cherry-pick and patch-id --verbatim), squash-merged (a commit on one
// tip holds every change head makes over the published history; see
// squash.go). It returns nil, nil when nothing proves head.
//
// Every advertised tip is considered, and the number of git processes
// does not depend on how many there are: one walk of the history the tips
// and head share above their common ancestors answers for all of them at
// once (docs/decisions/0051-every-tip-in-one-walk.md). Prove is ProveAll
// of head alone, so a head proved in a batch and alone is proved alike.
func Prove(ctx context.Context, g *hostio.Git, repo hostio.Repo, head string, v *RemoteView) (*machine.Proof, error) {
	r := ProveAll(ctx, g, repo, []string{head}, v)[head]
	return r.Proof, r.Err
}

// errReachableFromNoneAlone is the error of a head every commit of which
// some tip reaches, though no one tip reaches head.
func errReachableFromNoneAlone(head string) error {
	return fmt.Errorf("ancestry of %s: reachable from the advertised tips, but from none alone", head)
}

// withCommits is p naming the commits head adds over the tips, which it
// covers.
func (s *proofSearch) withCommits(p *machine.Proof) *machine.Proof {
	p.Commits = make([]string, len(s.unique))
	for i, u := range s.unique {
		p.Commits[i] = u.Commit
	}
	return p
}

// exactTip returns the first tip (in rank order) that names head itself.
func exactTip(tips []Tip, head string) (Tip, bool) {
	for _, t := range tips {
		if t.Commit == head || t.target() == head {
			return t, true
		}
	}
	return Tip{}, false
}

func ancestryProof(t Tip, head string) *machine.Proof {
	return &machine.Proof{Kind: machine.ProofAncestry, Remote: t.Remote, Ref: t.Ref, Tip: t.Commit, Head: head}
}

type uniqueCommit struct {
	Commit  string
	parents []string
}

// patchEquivalent looks for one tip that holds, for every commit head adds,
// a commit with the same verbatim patch id and the same paths and modes,
// and that reaches the published commit head's own commits start from.
// Every tip is judged from the one tip graph; only the first tip that
// qualifies is put to `git rev-list --cherry-pick`, which must agree. A
// merge, root or empty unique commit defeats it outright.
func (s *proofSearch) patchEquivalent(ctx context.Context) (*machine.Proof, error) {
	if s.base == "" {
		return nil, nil
	}
	qualify := map[string]bool{}
	for _, t := range s.tg.reaching(s.base) {
		qualify[t.Ref+"\x00"+t.Remote] = true
	}
	for _, u := range s.unique {
		if len(u.parents) != 1 {
			return nil, nil
		}
		mine := s.info[u.Commit]
		if mine.id == "" {
			return nil, nil // an empty patch proves nothing
		}
		var matches []string
		for _, c := range s.cands {
			if p, ok := s.info[c]; ok && len(s.tg.parents[c]) == 1 && p.id == mine.id && p.shape == mine.shape {
				matches = append(matches, c)
			}
		}
		if len(matches) == 0 {
			return nil, nil
		}
		reach := s.tg.above(matches...)
		for _, t := range s.tg.tips {
			if !reach[t.target()] {
				delete(qualify, t.Ref+"\x00"+t.Remote)
			}
		}
		if len(qualify) == 0 {
			return nil, nil
		}
	}
	for _, t := range s.tg.tips {
		if !qualify[t.Ref+"\x00"+t.Remote] {
			continue
		}
		out, err := s.g.Observe(ctx, s.repo.MainCheckout, "rev-list", "--cherry-pick", "--right-only", "--no-merges", t.target()+"..."+s.head)
		if err != nil {
			return nil, fmt.Errorf("cherry-pick equivalence against %s: %w", t.Ref, err)
		}
		if len(bytes.TrimSpace(out)) > 0 {
			return nil, nil // git disagrees: not proof
		}
		return &machine.Proof{Kind: machine.ProofPatchEquivalent, Remote: t.Remote, Ref: t.Ref, Tip: t.Commit, Head: s.head}, nil
	}
	return nil, nil
}

// Ancestry looks only for an ancestry proof of head (used for submodules,
// whose archive-free removal needs their exact commits on a remote).
// A shallow remote is asked last, and proves only the history it holds
// (proveShallow).
func Ancestry(ctx context.Context, g *hostio.Git, repo hostio.Repo, head string, v *RemoteView) (*machine.Proof, error) {
	p, err := ancestryWhole(ctx, g, repo, head, v)
	if p != nil || err != nil || v == nil || len(v.shallow) == 0 || !hostio.IsHexOID(head) {
		return p, err
	}
	return proveShallow(ctx, g, repo, head, v)
}

// ancestryWhole is Ancestry against the tips of remotes that hold whole
// history.
func ancestryWhole(ctx context.Context, g *hostio.Git, repo hostio.Repo, head string, v *RemoteView) (*machine.Proof, error) {
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
	return nil, nil
}
