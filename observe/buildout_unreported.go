package observe

import (
	"bytes"
	"path"
	"path/filepath"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
)

// Untracked is what one walk of a tree found that its index does not
// track, for BuildOutputUnreported: every regular file and symlink no
// index entry names (slash-separated, relative to the tree), and whether
// the walk met a .git entry anywhere below the tree's root.
type Untracked struct {
	Files     []string
	NestedGit bool
}

// BuildOutputUnreported finds the build output of the tree at dir that
// BuildOutput would find over git status's report, without asking git,
// or reports false when it cannot be sure of that, and git status must be
// asked. It runs the same decision (machine.FindBuildOutput, over the tree
// on disk) with the untracked files the walk found as the reported paths.
//
// Status lists every untracked file (--untracked-files=all) and every
// ignored one, except below a directory it reports whole: an ignored
// directory that matches a pattern (--ignored=matching), and a nested
// repository. So the candidates that walk gives are status's candidates
// plus, possibly, paths below a directory that holds no tracked path.
// Candidates are decided outermost first, so the two agree unless what
// is found lies below such a directory (status may not have named it), or
// a .git entry makes a nested repository of a part of the tree: both are
// left to git. A directory that holds only empty directories and that
// status reports whole (an ignored one) is a candidate of status's only:
// then this finds less than plan, never more.
func BuildOutputUnreported(dir string, u Untracked, tracked machine.TrackedSet, disposable machine.Patterns) ([]machine.DiscardedDir, bool) {
	if u.NestedGit {
		return nil, false
	}
	if len(u.Files) == 0 {
		return nil, true
	}
	out := machine.FindBuildOutput(diskBuild(dir), u.Files, tracked, disposable, nil)
	for _, d := range out {
		if p := path.Dir(d.Path); p != "." && !tracked.AtOrBelow(p) {
			return nil, false
		}
	}
	return out, true
}

// UntrackedByWalk reports whether what a walk finds untracked in the tree
// at dir, whose admin entry is adminDir, is what git finds untracked or
// ignored there, as BuildOutputUnreported needs: git's configuration,
// listing as hostio.ConfigList read it (listErr the error reading it),
// makes no name match another (core.ignorecase, core.precomposeunicode),
// no part of it is conditional on the tree (includeIf), the tree has no
// configuration of its own (config.worktree), and the tree, its .git
// file, its admin entry and the common directory belong to the effective
// user (git refuses to look at a tree of another owner). Anything else,
// and a question that cannot be answered, is no.
func UntrackedByWalk(repo hostio.Repo, dir, adminDir string, listing []byte, listErr error) bool {
	if listErr != nil {
		return false
	}
	for _, kv := range bytes.Split(listing, []byte{0}) {
		key, val, _ := bytes.Cut(kv, []byte{'\n'})
		key = bytes.ToLower(key)
		switch {
		case bytes.HasPrefix(key, []byte("includeif.")):
			return false
		case string(key) == "core.ignorecase" || string(key) == "core.precomposeunicode":
			if !configFalse(val) {
				return false
			}
		}
	}
	if hostio.Lstat(filepath.Join(adminDir, "config.worktree")).State != machine.PathAbsent {
		return false
	}
	return ownedBySelf(dir, filepath.Join(dir, ".git"), adminDir, repo.CommonDir)
}

// configFalse reports whether a configuration value is one git reads as
// false; anything else (an unusual spelling included) counts as true.
func configFalse(v []byte) bool {
	switch string(bytes.ToLower(v)) {
	case "false", "no", "off", "0":
		return true
	}
	return false
}
