package proof

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
)

// shallowRepo is a local remote's repository that is shallow: git treats
// the commits its shallow file lists as having no parents, and it holds
// nothing of their history. Its tips are never proof of what lies past
// that boundary (docs/decisions/0223-remotes-read-from-config.md).
type shallowRepo struct {
	// gitDir is the git dir git opens for the remote.
	gitDir string
	// boundary is the set of commits the shallow file lists.
	boundary map[string]bool
}

// shallowTips is what one shallow remote advertised.
type shallowTips struct {
	remote string
	repo   *shallowRepo
	tips   []Tip
}

// readShallow looks at the git dir git opens among dirs (the first that
// is a repository: HEAD, objects and refs present) and returns its shallow
// boundary, nil when it is not shallow. A shallow file that is not a small
// regular file of object ids is an error: what the remote holds would be
// unknown.
func readShallow(dirs [][2]string) (*shallowRepo, error) {
	for _, d := range dirs {
		if !isGitDir(d) {
			continue
		}
		file := filepath.Join(d[1], "shallow")
		b, err := readSmall(file, 64<<20)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("shallow boundary: %w", err)
		}
		sr := &shallowRepo{gitDir: d[0], boundary: map[string]bool{}}
		for i, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			if line == "" && len(b) == 0 {
				break
			}
			if !hostio.IsHexOID(line) {
				return nil, fmt.Errorf("shallow boundary %s: line %d is not an object id", file, i+1)
			}
			sr.boundary[line] = true
		}
		return sr, nil
	}
	return nil, nil
}

// isGitDir reports whether the git dir d[0] (common dir d[1]) looks like a
// repository to git: HEAD in the git dir, objects and refs in the common
// dir.
func isGitDir(d [2]string) bool {
	for _, p := range []string{filepath.Join(d[0], "HEAD"), filepath.Join(d[1], "objects"), filepath.Join(d[1], "refs")} {
		if _, _, absent, err := statID(p); err != nil || absent {
			return false
		}
	}
	return true
}

// proveShallow looks for an ancestry proof of head on the shallow remotes
// of v, whose tips prove only the history they hold. A shallow remote
// proves head when:
//   - one of the refs it advertised contains head in its own history,
//     which ends at its boundary (`git for-each-ref --contains` run in it:
//     a head it does not hold, or holds only past its boundary, is in
//     none);
//   - and every boundary commit of that history has each of its real
//     parents (read from the commit itself, in this repository) proved by
//     a remote that holds whole history: what lies past the boundary is
//     elsewhere too.
//
// A remote that cannot answer these proves nothing; only a failure in this
// repository, or ctx ending, is an error.
func proveShallow(ctx context.Context, g *hostio.Git, repo hostio.Repo, head string, v *RemoteView) (*machine.Proof, error) {
	for _, st := range v.shallow {
		out, err := g.Observe(ctx, st.repo.gitDir, "--git-dir="+st.repo.gitDir, "for-each-ref", "--contains="+head, "--format=%(objectname) %(refname)")
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			continue // head is not there
		}
		containing := map[string]bool{}
		for _, line := range strings.Split(string(out), "\n") {
			containing[line] = true
		}
		var tip *Tip
		for i, t := range st.tips {
			if containing[t.Commit+" "+t.Ref] {
				tip = &st.tips[i]
				break
			}
		}
		if tip == nil {
			continue
		}
		held, err := g.Observe(ctx, st.repo.gitDir, "--git-dir="+st.repo.gitDir, "rev-list", head)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			continue
		}
		var edge []string
		for _, c := range strings.Split(string(held), "\n") {
			if st.repo.boundary[c] {
				edge = append(edge, c)
			}
		}
		whole, err := parentsProved(ctx, g, repo, edge, v)
		if err != nil {
			return nil, err
		}
		if whole {
			return ancestryProof(*tip, head), nil
		}
	}
	return nil, nil
}

// parentsProved reports whether every parent of every commit in edge (as
// the commit object itself records them, whatever this repository's own
// grafts or shallow boundary say) is proved by ancestry against the tips
// of remotes that hold whole history. A commit this repository does not
// hold is not proved.
func parentsProved(ctx context.Context, g *hostio.Git, repo hostio.Repo, edge []string, v *RemoteView) (bool, error) {
	if len(edge) == 0 {
		return true, nil
	}
	parents, err := commitParents(ctx, g, repo, edge)
	if err != nil {
		return false, err
	}
	whole := &RemoteView{Tips: v.Tips} // no shallow remote: it proves only whole history
	for _, c := range edge {
		ps, ok := parents[c]
		if !ok {
			return false, nil
		}
		for _, p := range ps {
			proof, err := Ancestry(ctx, g, repo, p, whole)
			if err != nil {
				if ctx.Err() != nil {
					return false, ctx.Err()
				}
				return false, nil
			}
			if proof == nil {
				return false, nil
			}
		}
	}
	return true, nil
}

// commitParents reads the parent lines of each commit's object with one
// `git cat-file --batch`; a commit that is missing, or not a commit, is
// absent from the result.
func commitParents(ctx context.Context, g *hostio.Git, repo hostio.Repo, commits []string) (map[string][]string, error) {
	var in bytes.Buffer
	for _, c := range commits {
		in.WriteString(c + "\n")
	}
	out, err := g.ObserveInput(ctx, repo.MainCheckout, in.Bytes(), "cat-file", "--batch")
	if err != nil {
		return nil, fmt.Errorf("read the parents of %d boundary commits: %w", len(commits), err)
	}
	res := map[string][]string{}
	for range commits {
		header, rest, ok := bytes.Cut(out, []byte{'\n'})
		if !ok {
			return nil, hostio.MalformedAt("git cat-file --batch", "truncated header")
		}
		out = rest
		f := strings.Fields(string(header))
		if len(f) == 2 && f[1] == "missing" {
			continue
		}
		if len(f) != 3 {
			return nil, hostio.MalformedAt("git cat-file --batch", "header %q", header)
		}
		size, err := strconv.Atoi(f[2])
		if err != nil || size < 0 || size+1 > len(out) || out[size] != '\n' {
			return nil, hostio.MalformedAt("git cat-file --batch", "size in %q", header)
		}
		body := out[:size]
		out = out[size+1:]
		if f[1] != "commit" {
			continue
		}
		var ps []string
		for _, line := range strings.Split(string(body), "\n") {
			if line == "" {
				break
			}
			if p, ok := strings.CutPrefix(line, "parent "); ok {
				ps = append(ps, p)
			}
		}
		res[f[0]] = ps
	}
	return res, nil
}
