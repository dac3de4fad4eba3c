package quarantine

import (
	"context"
	"path/filepath"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/gitfiles"
)

// HeadTree is what a removal knows of its tree's HEAD before the
// quarantine manifest lists it: the admin key of the tree, whose index
// file may list HEAD's entries, and the tree id of each commit apply asked
// about once for all its items (gitfiles.CommitTrees). The zero value knows
// nothing: git lists HEAD's tree.
type HeadTree struct {
	AdminKey string
	Trees    map[string]string
}

// listing returns HEAD's entries, commit's tree, read from the tree's index
// file, only when those entries hash to exactly the tree id git gave for
// commit (gitfiles.IndexTreeID): then they are its every path, mode and id.
// False when the tree id is unknown, the index is one custody does not
// read itself, or it lists anything else (a staged change, an unmerged
// path): git is asked instead.
func (h HeadTree) listing(e *Env, commit string) ([]gitfiles.TreeEntry, bool) {
	tree := h.Trees[commit]
	key := h.AdminKey
	if tree == "" || key == "" || key != filepath.Base(key) || key == "." || key == ".." {
		return nil, false
	}
	ents, err := gitfiles.ReadIndexFile(filepath.Join(e.Repo.AdminDir(key), "index"))
	if err != nil {
		return nil, false
	}
	if id, err := gitfiles.IndexTreeID(gitfiles.FormatOf(tree), ents); err != nil || id != tree {
		return nil, false
	}
	out := make([]gitfiles.TreeEntry, len(ents))
	for i, en := range ents {
		out[i] = gitfiles.TreeEntry{Mode: en.Mode, OID: en.OID, Path: en.Path}
	}
	return out, true
}

// CommitTrees asks git once for the tree of every full commit id in heads;
// nil when git cannot say (each removal then lists its HEAD with git).
func CommitTrees(ctx context.Context, e *Env, heads []string) map[string]string {
	var commits []string
	for _, h := range dedupe(heads) {
		if machine.IsFullCommit(h) {
			commits = append(commits, h)
		}
	}
	trees, err := gitfiles.CommitTrees(ctx, e.Git, e.Repo, commits)
	if err != nil {
		return nil
	}
	return trees
}
