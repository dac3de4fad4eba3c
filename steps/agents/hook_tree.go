package agents

import (
	"errors"
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
	top := abs
	var fi fs.FileInfo
	for {
		fi, err = os.Lstat(filepath.Join(top, ".git"))
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return HookTree{}, machine.HookGitUnreadableRefusal(abs, filepath.Join(top, ".git"), err)
		}
		parent := filepath.Dir(top)
		if parent == top {
			return HookTree{}, machine.HookNoRepositoryRefusal(abs)
		}
		top = parent
	}
	if fi.IsDir() {
		return HookTree{}, machine.HookMainCheckoutRefusal(abs, top)
	}
	admin, err := gitfiles.ReadGitFile(filepath.Join(top, ".git"))
	if err != nil {
		return HookTree{}, machine.HookNotGitfileRefusal(abs, err)
	}
	common, err := gitfiles.ReadCommonDir(admin)
	if err != nil {
		return HookTree{}, machine.HookNotAdminEntryRefusal(abs, admin, err)
	}
	if common, err = filepath.EvalSymlinks(filepath.Clean(common)); err != nil {
		return HookTree{}, machine.HookCommonDirUnresolvedRefusal(abs, err)
	}
	repo := hostio.Repo{CommonDir: common, MainCheckout: filepath.Dir(common), Toplevel: top}
	key := gitfiles.AdminKeyOf(repo, top)
	if key == "" {
		return HookTree{}, machine.HookAdminNotBackRefusal(abs, admin, top)
	}
	return HookTree{Path: top, Key: key, Repo: repo}, nil
}
