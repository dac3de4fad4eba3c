package proof

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/hostio"
)

// maxSquashChecks bounds the "<commit>:<path>" lines one squash search asks
// Git about; beyond it only the commits that touch head's paths are asked,
// and beyond that again the state form is not tried (the tree is kept).
const maxSquashChecks = 200000

// proofSearch is what the patch-equivalence and squash checks of one head
// share: the commits head adds, the tip graph, and the patch ids of head's
// commits, of its whole change, and of every commit on the tips that
// touches a path head's commits touch.
type proofSearch struct {
	g      *hostio.Git
	repo   hostio.Repo
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
	// asked are the commits of info whose patch ids this search computed
	// (not found in the view's cache).
	asked map[string]bool
	// paths are the paths head's own commits and whole change touch.
	paths map[string]bool
	// wholeSeg is the diff-tree entry of base..head.
	wholeSeg *diffSegment
	// searchable is false when head's changes cannot be searched for
	// exactly (a path with a newline, which git's line-based --stdin
	// protocols cannot carry): no patch or squash proof is tried.
	searchable bool
}

// squashMergedAll runs squashMerged for every search in ss, the contents
// of all their candidates asked of git with one cat-file. It returns each
// search's result; an error is that of the shared question.
//
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
func squashMergedAll(ctx context.Context, g *hostio.Git, repo hostio.Repo, ss []*proofSearch) (map[*proofSearch]ProofResult, error) {
	out := make(map[*proofSearch]ProofResult, len(ss))
	var in bytes.Buffer
	cands := make([][]squashCand, len(ss))
	for i, s := range ss {
		out[s] = ProofResult{}
		if s.base == "" || len(s.changes) == 0 {
			continue
		}
		cands[i] = s.squashCands()
		for _, c := range cands[i] {
			for _, ch := range s.changes {
				in.WriteString(c.commit + ":" + ch.path + "\n")
			}
		}
	}
	lines, err := catFileInChunks(ctx, g, repo, in.Bytes())
	if err != nil {
		return nil, fmt.Errorf("paths on the advertised tips: %w", err)
	}
	for i, s := range ss {
		n := len(cands[i]) * len(s.changes)
		p, err := s.squashMerged(ctx, cands[i], lines[:n])
		lines = lines[n:]
		out[s] = ProofResult{Proof: p, Err: err}
	}
	return out, nil
}

// catFileInChunks asks `git cat-file --batch-check=%(objectname)` each
// line of questions and returns the answers, in order. The questions go
// in as few processes as keep each answer within half the runner's output
// bound (an answer is at most its question and " missing"), so however
// many heads a batch holds, it never fails for its size.
func catFileInChunks(ctx context.Context, g *hostio.Git, repo hostio.Repo, questions []byte) ([]string, error) {
	limit := g.Runner.MaxOutput
	if limit <= 0 {
		limit = hostio.DefaultMaxOutput
	}
	var answers []string
	for len(questions) > 0 {
		n, size := 0, 0
		for n < len(questions) {
			i := bytes.IndexByte(questions[n:], '\n')
			if i < 0 {
				return nil, hostio.MalformedAt(gitfiles.BatchCheckWhat, "a question without its newline")
			}
			if size+i+len(" missing\n") > limit/2 && n > 0 {
				break
			}
			size += i + len(" missing\n")
			n += i + 1
		}
		chunk := questions[:n]
		questions = questions[n:]
		out, err := g.ObserveInput(ctx, repo.MainCheckout, chunk, "cat-file", "--batch-check=%(objectname)")
		if err != nil {
			return nil, err
		}
		got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
		if want := bytes.Count(chunk, []byte{'\n'}); len(got) != want {
			return nil, hostio.MalformedAt(gitfiles.BatchCheckWhat, "%d answers for %d questions", len(got), want)
		}
		answers = append(answers, got...)
	}
	return answers, nil
}

// squashMerged is the search of one head, given the object ids git found
// at each changed path of each of cands (answers, candidate by candidate).
func (s *proofSearch) squashMerged(ctx context.Context, cands []squashCand, answers []string) (*machine.Proof, error) {
	if s.base == "" || len(s.changes) == 0 {
		return nil, nil
	}
	p, err := s.squashState(ctx, cands, answers)
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

// squashCand is a commit whose tree may hold head's content: a tip's
// target (tip set) or a candidate on the tips.
type squashCand struct {
	commit string
	tip    *Tip
}

// squashCands lists the commits the first form of squashMerged asks
// about, in the order it tries them: every tip, then the candidates (the
// tips are left out when asking about them all would exceed
// maxSquashChecks, and everything when the candidates alone would).
func (s *proofSearch) squashCands() []squashCand {
	var cs []squashCand
	seen := map[string]bool{}
	for i, t := range s.tg.tips {
		if c := t.target(); !seen[c] {
			seen[c] = true
			cs = append(cs, squashCand{c, &s.tg.tips[i]})
		}
	}
	if len(cs)*len(s.changes) > maxSquashChecks {
		cs = nil
	}
	for _, c := range s.cands {
		if !seen[c] {
			seen[c] = true
			cs = append(cs, squashCand{commit: c})
		}
	}
	if len(cs)*len(s.changes) > maxSquashChecks {
		return nil
	}
	return cs
}

// squashState is the first form of squashMerged: of the candidates whose
// object ids (answers, from the batched cat-file) are head's at every
// changed path, the first whose entries diff-tree (which also compares
// modes) finds equal.
func (s *proofSearch) squashState(ctx context.Context, cs []squashCand, answers []string) (*machine.Proof, error) {
	for i, c := range cs {
		ok := true
		for j, ch := range s.changes {
			got := answers[i*len(s.changes)+j]
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
