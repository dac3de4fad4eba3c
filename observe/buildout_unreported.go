package observe

import (
	"bytes"
	"io/fs"
	"path"
	"path/filepath"
	"strings"

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
	// Bare are the outermost untracked directories (each in a directory
	// the index holds something in, or the root) that hold no file or
	// symlink at any depth: status reports one whole when it is ignored,
	// and not at all when it is not.
	Bare []string
	// top is the outermost untracked directory the walk is in, and
	// topFiles whether a file was met below it.
	top      string
	topFiles bool
}

// Add notes one entry a walk of the tree met: rel, slash-separated and
// relative to the tree's root, of mode m; tracked is what the tree's index
// holds. It reports whether the entry is one the index has nothing at or
// below: the root itself and its .git (and what that holds) are neither.
func (u *Untracked) Add(rel string, m fs.FileMode, tracked machine.TrackedSet) bool {
	if rel == "." || rel == ".git" || strings.HasPrefix(rel, ".git/") {
		return false
	}
	if path.Base(rel) == ".git" || m.IsDir() && tracked.Gitlink(rel) {
		// A repository of its own, or a submodule's directory (git looks
		// at nothing below a gitlink, initialised or not): git decides.
		u.NestedGit = true
	}
	if tracked.AtOrBelow(rel) {
		return false
	}
	in := u.top != "" && strings.HasPrefix(rel, u.top+"/")
	if !in {
		u.closeTop()
	}
	switch {
	case m.IsRegular() || m&fs.ModeSymlink != 0:
		u.Files = append(u.Files, rel)
		u.topFiles = true
	case m.IsDir() && !in:
		u.top = rel
	}
	return true
}

// closeTop ends the outermost untracked directory the walk was in: Bare
// when nothing below it was a file or symlink.
func (u *Untracked) closeTop() {
	if u.top != "" && !u.topFiles {
		u.Bare = append(u.Bare, u.top)
	}
	u.top, u.topFiles = "", false
}

// BuildOutputUnreported finds the build output of the tree src answers for
// (DiskBuild, or a source that answers exactly as it would) that
// BuildOutput would find over git status's report, without asking git,
// or reports false when it cannot be sure of that, and git status must be
// asked. It runs the same decision (machine.FindBuildOutput, over the
// tree) with the untracked files the walk found as the reported paths.
//
// Status lists every untracked file (--untracked-files=all) and every
// ignored one, except below a directory it reports whole: an ignored
// directory that matches a pattern (--ignored=matching), and a nested
// repository. So the candidates that walk gives are status's candidates
// plus, possibly, paths below a directory that holds no tracked path.
// Candidates are decided outermost first, so the two agree unless what
// is found lies below such a directory (status may not have named it), or
// a .git entry makes a nested repository of a part of the tree: both are
// left to git. An untracked directory that holds no file or symlink at
// any depth is a candidate of status's only when it is ignored (status
// reports it whole, and nothing when it is not): when its shape is
// recognised, that too is left to git.
func BuildOutputUnreported(src machine.BuildSource, u Untracked, tracked machine.TrackedSet, disposable machine.Patterns) ([]machine.DiscardedDir, bool) {
	u.closeTop()
	if u.NestedGit {
		return nil, false
	}
	for _, b := range u.Bare {
		if machine.StructureKind(src.Shape(b), tracked, disposable) != machine.BuildNone {
			return nil, false
		}
	}
	if len(u.Files) == 0 {
		return nil, true
	}
	out := machine.FindBuildOutput(src, u.Files, tracked, disposable, nil)
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
