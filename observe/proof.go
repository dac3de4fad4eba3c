package observe

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/custody-sh/custody/machine"
)

// maxProofTips bounds how many advertised tips the patch-equivalence and
// squash checks try (default branches first).
const maxProofTips = 16

// Prove looks for a proof that head is recoverable from what the remotes
// advertise now, in order: ancestry (an advertised tip contains head),
// patch-equivalent (every commit head adds has one parent, a non-empty
// patch, and an equal whitespace-exact patch on one tip, by both
// --cherry-pick and patch-id --verbatim), squash-merged (merging head into
// one tip yields exactly the tip's tree). It returns nil, nil when nothing
// proves head.
func Prove(ctx context.Context, g *Git, repo Repo, head string, v *RemoteView) (*machine.Proof, error) {
	if v == nil || len(v.Tips) == 0 || head == "" {
		return nil, nil
	}
	proof := func(kind machine.ProofKind, t Tip) *machine.Proof {
		return &machine.Proof{Kind: kind, Remote: t.Remote, Ref: t.Ref, Tip: t.Commit, Head: head}
	}
	for _, t := range v.Tips {
		if t.Commit == head {
			return proof(machine.ProofAncestry, t), nil
		}
	}
	if ok, err := isAncestor(ctx, g, repo, head, v.Tips[0].Commit); err != nil || ok {
		if ok {
			return proof(machine.ProofAncestry, v.Tips[0]), nil
		}
		return nil, err
	}
	unique, err := uniqueCommits(ctx, g, repo, head, v.Tips)
	if err != nil {
		return nil, err
	}
	if len(unique) == 0 {
		for _, t := range v.Tips[1:] {
			ok, err := isAncestor(ctx, g, repo, head, t.Commit)
			if err != nil {
				return nil, err
			}
			if ok {
				return proof(machine.ProofAncestry, t), nil
			}
		}
		return nil, fmt.Errorf("ancestry of %s: reachable from the advertised tips, but from none alone", head)
	}
	commits := make([]string, len(unique))
	for i, u := range unique {
		commits[i] = u.commit
	}
	cands := candidateTips(v.Tips)
	if p, err := patchEquivalent(ctx, g, repo, head, unique, cands); err != nil || p != nil {
		if p != nil {
			p.Commits = commits
		}
		return p, err
	}
	p, err := squashMerged(ctx, g, repo, head, cands)
	if p != nil {
		p.Commits = commits
	}
	return p, err
}

// candidateTips returns at most maxProofTips distinct tips, in rank order.
func candidateTips(tips []Tip) []Tip {
	var out []Tip
	seen := map[string]bool{}
	for _, t := range tips {
		if seen[t.Commit] {
			continue
		}
		seen[t.Commit] = true
		out = append(out, t)
		if len(out) == maxProofTips {
			break
		}
	}
	return out
}

type uniqueCommit struct {
	commit  string
	parents int
}

// uniqueCommits lists the commits head adds over every advertised tip, with
// their parent counts.
func uniqueCommits(ctx context.Context, g *Git, repo Repo, head string, tips []Tip) ([]uniqueCommit, error) {
	var in bytes.Buffer
	for _, t := range tips {
		in.WriteString("^" + t.Commit + "\n")
	}
	in.WriteString(head + "\n")
	out, err := g.ObserveInput(ctx, repo.MainCheckout, in.Bytes(), "rev-list", "--parents", "--stdin")
	if err != nil {
		return nil, fmt.Errorf("commits %s adds over the advertised tips: %w", head, err)
	}
	var us []uniqueCommit
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			us = append(us, uniqueCommit{commit: f[0], parents: len(f) - 1})
		}
	}
	return us, nil
}

// patchIDs returns the verbatim patch id of every commit `git log args`
// lists, by commit. Commits with an empty patch are absent.
func patchIDs(ctx context.Context, g *Git, repo Repo, args ...string) (map[string]string, error) {
	logArgs := append([]string{"-c", "diff.noprefix=false", "-c", "diff.mnemonicPrefix=false", "log", "-p", "--binary",
		"--no-color", "--no-ext-diff", "--no-textconv", "--no-renames", "--no-show-signature", "--no-abbrev-commit", "--pretty=medium"}, args...)
	patches, err := g.Observe(ctx, repo.MainCheckout, logArgs...)
	if err != nil {
		return nil, err
	}
	out, err := g.ObserveInput(ctx, repo.MainCheckout, patches, "patch-id", "--verbatim")
	if err != nil {
		return nil, err
	}
	ids, err := ParsePatchIDs(out)
	if err != nil {
		return nil, err
	}
	m := make(map[string]string, len(ids))
	for _, id := range ids {
		m[id.Commit] = id.ID
	}
	return m, nil
}

// patchEquivalent tries each candidate tip for a patch-equivalence proof.
// A merge, root or empty unique commit defeats it outright.
func patchEquivalent(ctx context.Context, g *Git, repo Repo, head string, unique []uniqueCommit, cands []Tip) (*machine.Proof, error) {
	args := []string{"--no-walk=unsorted"}
	for _, u := range unique {
		if u.parents != 1 {
			return nil, nil
		}
		args = append(args, u.commit)
	}
	mine, err := patchIDs(ctx, g, repo, args...)
	if err != nil {
		return nil, fmt.Errorf("patch ids of %s: %w", head, err)
	}
	for _, u := range unique {
		if mine[u.commit] == "" {
			return nil, nil // an empty patch proves nothing
		}
	}
	// One look at every candidate's commits at once: unless each of head's
	// patches is somewhere among them, no single tip can hold them all.
	unionArgs := []string{"--no-merges"}
	for _, t := range cands {
		unionArgs = append(unionArgs, t.Commit)
	}
	union, err := patchIDs(ctx, g, repo, append(unionArgs, "--not", head)...)
	if err != nil {
		return nil, fmt.Errorf("patch ids of the advertised tips: %w", err)
	}
	inUnion := map[string]bool{}
	for _, id := range union {
		inUnion[id] = true
	}
	for _, u := range unique {
		if !inUnion[mine[u.commit]] {
			return nil, nil
		}
	}
	for _, t := range cands {
		out, err := g.Observe(ctx, repo.MainCheckout, "rev-list", "--cherry-pick", "--right-only", "--no-merges", t.Commit+"..."+head)
		if err != nil {
			return nil, fmt.Errorf("cherry-pick equivalence against %s: %w", t.Ref, err)
		}
		if len(bytes.TrimSpace(out)) > 0 {
			continue
		}
		theirs, err := patchIDs(ctx, g, repo, "--no-merges", t.Commit, "--not", head)
		if err != nil {
			return nil, fmt.Errorf("patch ids of %s: %w", t.Ref, err)
		}
		have := map[string]bool{}
		for _, id := range theirs {
			have[id] = true
		}
		all := true
		for _, u := range unique {
			if !have[mine[u.commit]] {
				all = false
				break
			}
		}
		if all {
			return &machine.Proof{Kind: machine.ProofPatchEquivalent, Remote: t.Remote, Ref: t.Ref, Tip: t.Commit, Head: head}, nil
		}
	}
	return nil, nil
}

// squashMerged tries each candidate tip: a three-way merge of head into it
// (`git merge-tree --write-tree`, no worktree touched) that yields exactly
// the tip's tree proves every change head makes is already published.
func squashMerged(ctx context.Context, g *Git, repo Repo, head string, cands []Tip) (*machine.Proof, error) {
	cands, err := squashCandidates(ctx, g, repo, head, cands)
	if err != nil {
		return nil, err
	}
	for _, t := range cands {
		tree, err := g.Observe(ctx, repo.MainCheckout, "rev-parse", "--verify", t.Commit+"^{tree}")
		if err != nil {
			continue // a tag of a blob or tree: no merge to try
		}
		out, err := g.Observe(ctx, repo.MainCheckout, "merge-tree", "--write-tree", "--no-messages", t.Commit, head)
		if err != nil {
			continue // conflicts (exit 1) or unrelated histories: not proof
		}
		merged, _, _ := strings.Cut(string(out), "\n")
		if strings.TrimSpace(merged) != strings.TrimSpace(string(tree)) {
			continue
		}
		base, err := g.Observe(ctx, repo.MainCheckout, "merge-base", t.Commit, head)
		if err != nil {
			return nil, fmt.Errorf("merge base of %s and %s: %w", t.Ref, head, err)
		}
		// A merge driver or attribute can make the merge agree with the tip
		// while dropping head's change; so every path head changed since
		// the base must also be identical in the tip.
		ok, err := changesPublished(ctx, g, repo, strings.TrimSpace(string(base)), head, t.Commit)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		return &machine.Proof{Kind: machine.ProofSquashMerged, Remote: t.Remote, Ref: t.Ref, Tip: t.Commit, Head: head,
			Base: strings.TrimSpace(string(base))}, nil
	}
	return nil, nil
}

// squashCandidates keeps the tips that hold head's version of every path
// head changed since its merge base with the first tip: a tip missing one of
// them cannot have absorbed head's changes. One cat-file call answers for
// all tips; it only narrows the tips the merge is tried on.
func squashCandidates(ctx context.Context, g *Git, repo Repo, head string, cands []Tip) ([]Tip, error) {
	if len(cands) == 0 {
		return nil, nil
	}
	base, err := g.Observe(ctx, repo.MainCheckout, "merge-base", cands[0].Commit, head)
	if err != nil {
		return cands, nil // unrelated histories: let each tip be tried
	}
	raw, err := g.Observe(ctx, repo.MainCheckout, "diff-tree", "-r", "-z", "--no-renames", strings.TrimSpace(string(base)), head)
	if err != nil {
		return nil, fmt.Errorf("paths %s changes: %w", head, err)
	}
	type change struct{ path, oid string }
	var changes []change
	f := bytes.Split(bytes.TrimSuffix(raw, []byte{0}), []byte{0})
	for i := 0; i+1 < len(f); i += 2 {
		meta := strings.Fields(string(f[i]))
		if len(meta) < 5 {
			return cands, nil
		}
		p := string(f[i+1])
		if strings.ContainsAny(p, "\n\r") {
			return cands, nil // the batch protocol is line based
		}
		oid := meta[3]
		if strings.Trim(oid, "0") == "" {
			oid = "" // deleted by head
		}
		changes = append(changes, change{p, oid})
	}
	if len(changes) == 0 {
		// Commits that cancel out change nothing overall, yet their content
		// exists nowhere else: no squash can have published it.
		return nil, nil
	}
	if len(changes)*len(cands) > 20000 {
		return cands, nil
	}
	var in bytes.Buffer
	for _, t := range cands {
		for _, c := range changes {
			in.WriteString(t.Commit + ":" + c.path + "\n")
		}
	}
	out, err := g.ObserveInput(ctx, repo.MainCheckout, in.Bytes(), "cat-file", "--batch-check=%(objectname)")
	if err != nil {
		return nil, fmt.Errorf("paths on the advertised tips: %w", err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(changes)*len(cands) {
		return cands, nil
	}
	var kept []Tip
	for i, t := range cands {
		ok := true
		for j, c := range changes {
			got := lines[i*len(changes)+j]
			if strings.HasSuffix(got, " missing") {
				got = ""
			}
			if got != c.oid {
				ok = false
				break
			}
		}
		if ok {
			kept = append(kept, t)
		}
	}
	return kept, nil
}

// changesPublished reports whether every path head changes relative to base
// has exactly head's content (or absence) in tip: no path head changed is
// among the paths where head and tip differ.
func changesPublished(ctx context.Context, g *Git, repo Repo, base, head, tip string) (bool, error) {
	changed, err := g.Observe(ctx, repo.MainCheckout, "diff-tree", "-r", "-z", "--no-renames", "--name-only", base, head)
	if err != nil {
		return false, fmt.Errorf("paths %s changes: %w", head, err)
	}
	differ, err := g.Observe(ctx, repo.MainCheckout, "diff-tree", "-r", "-z", "--no-renames", "--name-only", head, tip)
	if err != nil {
		return false, fmt.Errorf("paths where %s and %s differ: %w", head, tip, err)
	}
	if len(bytes.Trim(changed, "\x00")) == 0 {
		return false, nil // nothing changed overall: nothing proves intermediate content published
	}
	d := map[string]bool{}
	for _, p := range bytes.Split(differ, []byte{0}) {
		if len(p) > 0 {
			d[string(p)] = true
		}
	}
	for _, p := range bytes.Split(changed, []byte{0}) {
		if len(p) > 0 && d[string(p)] {
			return false, nil
		}
	}
	return true, nil
}

// Ancestry looks only for an ancestry proof of head (used for submodules,
// whose archive-free removal needs their exact commits on a remote).
func Ancestry(ctx context.Context, g *Git, repo Repo, head string, v *RemoteView) (*machine.Proof, error) {
	if v == nil || len(v.Tips) == 0 || head == "" {
		return nil, nil
	}
	for _, t := range v.Tips {
		if t.Commit == head {
			return &machine.Proof{Kind: machine.ProofAncestry, Remote: t.Remote, Ref: t.Ref, Tip: t.Commit, Head: head}, nil
		}
	}
	unique, err := uniqueCommits(ctx, g, repo, head, v.Tips)
	if err != nil || len(unique) > 0 {
		return nil, err
	}
	for _, t := range v.Tips {
		ok, err := isAncestor(ctx, g, repo, head, t.Commit)
		if err != nil {
			return nil, err
		}
		if ok {
			return &machine.Proof{Kind: machine.ProofAncestry, Remote: t.Remote, Ref: t.Ref, Tip: t.Commit, Head: head}, nil
		}
	}
	return nil, nil
}
