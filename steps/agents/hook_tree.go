package agents

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/steps"
)

// HookTree is the linked worktree a hook's directory lies in, found by
// reading git's own files (no git process: agents call hooks often).
type HookTree struct {
	// Path is the tree's canonical top directory.
	Path string
	// Key is git's admin key of the tree (<common>/worktrees/<key>).
	Key string
	// Repo is the repository; MainCheckout is the common dir's parent.
	Repo hostio.Repo
}

// StatePath is the state file of the tree's repository.
func (t HookTree) StatePath() string { return steps.StatePath(t.Repo) }

// LocateHookTree finds the linked worktree containing dir: the nearest
// ancestor (dir itself included) holding a .git, which must be a gitfile
// naming <common>/worktrees/<key> whose gitdir names it back
// (gitfiles.AdminKeyOf). dir in a main checkout, in no repository, or in a
// tree git does not link back is a not-in-worktree refusal: a hook there
// has no tree to act on.
func LocateHookTree(dir string) (HookTree, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return HookTree{}, err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	notTree := func(why string) error {
		return &machine.Refusal{Code: machine.CodeNotInWorktree, Path: abs, Retry: "custody list",
			Message: fmt.Sprintf("%s is not inside a linked worktree (%s): a hook there has no tree to act on", abs, why)}
	}
	top := abs
	var fi fs.FileInfo
	for {
		fi, err = os.Lstat(filepath.Join(top, ".git"))
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return HookTree{}, notTree(fmt.Sprintf("%s cannot be read: %v", filepath.Join(top, ".git"), err))
		}
		parent := filepath.Dir(top)
		if parent == top {
			return HookTree{}, notTree("no git repository contains it")
		}
		top = parent
	}
	if fi.IsDir() {
		return HookTree{}, notTree(top + " is a main checkout")
	}
	admin, err := gitfiles.ReadGitFile(filepath.Join(top, ".git"))
	if err != nil {
		return HookTree{}, notTree(fmt.Sprintf("its .git is not a gitfile git reads: %v", err))
	}
	common, err := gitfiles.ReadCommonDir(admin)
	if err != nil {
		return HookTree{}, notTree(fmt.Sprintf("%s is not a linked worktree's admin entry: %v", admin, err))
	}
	if common, err = filepath.EvalSymlinks(filepath.Clean(common)); err != nil {
		return HookTree{}, notTree(fmt.Sprintf("its common dir cannot be resolved: %v", err))
	}
	repo := hostio.Repo{CommonDir: common, MainCheckout: filepath.Dir(common), Toplevel: top}
	key := gitfiles.AdminKeyOf(repo, top)
	if key == "" {
		return HookTree{}, notTree(fmt.Sprintf("git's admin entry %s does not name %s back", admin, top))
	}
	return HookTree{Path: top, Key: key, Repo: repo}, nil
}
