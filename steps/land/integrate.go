package land

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/proof"
	"github.com/custody-sh/custody/steps"
)

// integrator computes a landing's new tip in the repository's object
// store alone: git merge-tree --write-tree and git commit-tree write
// objects and no ref, index or working file, so neither the person's
// main checkout nor the tree changes.
type integrator struct {
	e    *steps.Env
	path string
}

// identityError is git refusing to write a commit for want of an
// identity.
type identityError struct{ err error }

func (e *identityError) Error() string { return e.err.Error() }
func (e *identityError) Unwrap() error { return e.err }

// git runs a git command that writes objects only.
func (g integrator) git(ctx context.Context, env []string, args ...string) (string, error) {
	out, err := g.e.Git.MutateWithEnv(ctx, g.e.Repo.MainCheckout, env, args...)
	return strings.TrimSpace(string(out)), err
}

// read runs a git command that reads.
func (g integrator) read(ctx context.Context, args ...string) ([]byte, error) {
	return g.e.Git.Observe(ctx, g.e.Repo.MainCheckout, args...)
}

// facts observes HEAD against the target's tip.
func (g integrator) facts(ctx context.Context, head, tip string) (machine.LandFacts, error) {
	var f machine.LandFacts
	var err error
	if f.HeadHasTarget, err = proof.IsAncestor(ctx, g.e.Git, g.e.Repo, tip, head); err != nil {
		return f, err
	}
	if f.TargetHasHead, err = proof.IsAncestor(ctx, g.e.Git, g.e.Repo, head, tip); err != nil {
		return f, err
	}
	out, err := g.read(ctx, "rev-list", "--parents", tip+".."+head, "--")
	if err != nil {
		return f, fmt.Errorf("commits of %s over %s: %w", head, tip, err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line == "" {
			continue
		}
		f.Commits++
		if len(strings.Fields(line)) > 2 {
			f.Merges++
		}
	}
	return f, nil
}

// integrate returns the tip that lands head on t by method, or the paths
// that conflict. A tip equal to t.Tip means there is nothing to land.
func (g integrator) integrate(ctx context.Context, method machine.LandMethod, head, branch string, t machine.LandTarget) (string, []string, error) {
	switch method {
	case machine.LandFastForward:
		return head, nil, nil
	case machine.LandSquash, machine.LandMerge:
		tree, conflicts, err := g.mergeTree(ctx, t.Tip, head)
		if err != nil || len(conflicts) > 0 {
			return "", conflicts, err
		}
		if method == machine.LandSquash {
			base, err := g.treeOf(ctx, t.Tip)
			if err != nil {
				return "", nil, err
			}
			if base == tree {
				return t.Tip, nil, nil
			}
			msgs, err := g.messages(ctx, t.Tip, head)
			if err != nil {
				return "", nil, err
			}
			c, err := g.commit(ctx, tree, []string{t.Tip}, machine.LandSquashMessage(branch, msgs), nil)
			return c, nil, err
		}
		c, err := g.commit(ctx, tree, []string{t.Tip, head}, machine.LandMergeMessage(branch, t.Ref), nil)
		return c, nil, err
	case machine.LandRebase:
		return g.rebase(ctx, head, t.Tip)
	}
	panic(fmt.Sprintf("land: integrate by %q", method))
}

// rebase replays each commit head adds over tip onto tip, oldest first:
// a commit whose parent is already where the replay stands is kept as
// it is; another is merged three-way against its own parent (merge-tree
// is given a scratch commit holding the replay's tree on that parent, so
// the merge base is exactly the parent, as a cherry-pick's is) and
// committed with its own author and message; one whose change is already
// there is dropped.
func (g integrator) rebase(ctx context.Context, head, tip string) (string, []string, error) {
	out, err := g.read(ctx, "rev-list", "--reverse", "--topo-order", "--parents", tip+".."+head, "--")
	if err != nil {
		return "", nil, fmt.Errorf("commits of %s over %s: %w", head, tip, err)
	}
	cur := tip
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			return "", nil, fmt.Errorf("rebase: %s is not a one-parent commit", line)
		}
		c, parent := f[0], f[1]
		if parent == cur {
			cur = c
			continue
		}
		curTree, err := g.treeOf(ctx, cur)
		if err != nil {
			return "", nil, err
		}
		scratch, err := g.commit(ctx, curTree, []string{parent}, "custody land: replay base\n", nil)
		if err != nil {
			return "", nil, err
		}
		tree, conflicts, err := g.mergeTree(ctx, scratch, c)
		if err != nil || len(conflicts) > 0 {
			return "", conflicts, err
		}
		if tree == curTree {
			continue
		}
		msg, env, err := g.original(ctx, c)
		if err != nil {
			return "", nil, err
		}
		if cur, err = g.commit(ctx, tree, []string{cur}, msg, env); err != nil {
			return "", nil, err
		}
	}
	return cur, nil, nil
}

// mergeTree merges b into a three-way (git merge-tree --write-tree) and
// returns the tree, or the conflicting paths.
func (g integrator) mergeTree(ctx context.Context, a, b string) (string, []string, error) {
	out, err := g.e.Git.Mutate(ctx, g.e.Repo.MainCheckout, "merge-tree", "--write-tree", "--name-only", "-z", "--no-messages", a, b)
	var ee *hostio.ExitError
	conflicted := errors.As(err, &ee) && ee.Code == 1
	if err != nil && !conflicted {
		return "", nil, fmt.Errorf("merge %s into %s: %w", b, a, err)
	}
	fields := bytes.Split(out, []byte{0})
	tree := strings.TrimSpace(string(fields[0]))
	if !conflicted {
		return tree, nil, nil
	}
	var paths []string
	for _, f := range fields[1:] {
		if p := string(f); p != "" && !slices.Contains(paths, p) {
			paths = append(paths, p)
		}
	}
	if len(paths) == 0 {
		paths = []string{"(git named no path)"}
	}
	return "", paths, nil
}

// treeOf is commit c's tree.
func (g integrator) treeOf(ctx context.Context, c string) (string, error) {
	out, err := g.read(ctx, "rev-parse", "--verify", "--end-of-options", c+"^{tree}")
	if err != nil {
		return "", fmt.Errorf("tree of %s: %w", c, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// messages are the full messages of the commits head adds over tip,
// oldest first.
func (g integrator) messages(ctx context.Context, tip, head string) ([]string, error) {
	out, err := g.read(ctx, "log", "-z", "--reverse", "--format=%B", tip+".."+head, "--")
	if err != nil {
		return nil, fmt.Errorf("messages of %s over %s: %w", head, tip, err)
	}
	var msgs []string
	for _, m := range strings.Split(string(out), "\x00") {
		if strings.TrimSpace(m) != "" {
			msgs = append(msgs, m)
		}
	}
	return msgs, nil
}

// original is commit c's message, as stored, and the environment that
// gives a replay of it c's author and author date.
func (g integrator) original(ctx context.Context, c string) (string, []string, error) {
	raw, err := g.read(ctx, "cat-file", "commit", c)
	if err != nil {
		return "", nil, fmt.Errorf("read %s: %w", c, err)
	}
	header, msg, _ := strings.Cut(string(raw), "\n\n")
	for _, line := range strings.Split(header, "\n") {
		rest, ok := strings.CutPrefix(line, "author ")
		if !ok {
			continue
		}
		// "Name <email> 1700000000 +0000"
		lt, gt := strings.LastIndex(rest, " <"), strings.LastIndex(rest, "> ")
		if lt < 0 || gt < lt {
			break
		}
		return msg, []string{"GIT_AUTHOR_NAME=" + rest[:lt], "GIT_AUTHOR_EMAIL=" + rest[lt+2:gt], "GIT_AUTHOR_DATE=@" + rest[gt+2:]}, nil
	}
	return "", nil, fmt.Errorf("commit %s names no author", c)
}

// commit writes a commit of tree on parents with msg (git commit-tree),
// under git's own identity unless env gives the author.
func (g integrator) commit(ctx context.Context, tree string, parents []string, msg string, env []string) (string, error) {
	args := []string{"commit-tree", tree}
	for _, p := range parents {
		args = append(args, "-p", p)
	}
	args = append(args, "-m", strings.TrimRight(msg, "\n"))
	c, err := g.git(ctx, env, args...)
	if err != nil {
		var ee *hostio.ExitError
		if errors.As(err, &ee) && (strings.Contains(ee.Stderr, "identity") || strings.Contains(ee.Stderr, "empty ident") || strings.Contains(ee.Stderr, "tell me who you are")) {
			return "", &identityError{err}
		}
		return "", fmt.Errorf("commit %s: %w", tree, err)
	}
	return c, nil
}
