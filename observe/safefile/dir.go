package safefile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrNotDirectory is returned when a directory custody writes into, below
// the repository's git directory, is a symlink or anything else that is
// not a directory: custody never writes through a link to somewhere else.
var ErrNotDirectory = errors.New("not a directory custody writes into")

// DirBelow makes sure that every directory from root (not included: it is
// the canonical git directory, taken as it is) down to dir is a directory
// and none is a symlink, making the missing ones (with perm) when create
// is true. A symlink, a file or anything else on the way is
// ErrNotDirectory naming it, and nothing is made below it. dir must be
// root or below it.
//
// Every file custody writes under a repository's git directory (the state
// directory and its store, locks, notes, manifests and caches, info/exclude,
// a worktree admin entry's ready marker) is written into a directory
// DirBelow accepted, and opened itself without following a symlink (Write,
// and the store's and the lock's O_NOFOLLOW opens).
func DirBelow(root, dir string, create bool, perm fs.FileMode) error {
	rel, err := filepath.Rel(root, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return fmt.Errorf("%s is not below %s: %w", dir, root, ErrNotDirectory)
	}
	if rel == "." {
		return nil
	}
	at := root
	for _, name := range strings.Split(rel, string(filepath.Separator)) {
		at = filepath.Join(at, name)
		fi, err := os.Lstat(at)
		if errors.Is(err, fs.ErrNotExist) && create {
			if err = os.Mkdir(at, perm); errors.Is(err, fs.ErrExist) {
				err = nil // made meanwhile: looked at below
			}
			if err == nil {
				fi, err = os.Lstat(at)
			}
		}
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			what := Kind(fi)
			if fi.Mode()&fs.ModeSymlink != 0 {
				if to, err := os.Readlink(at); err == nil {
					what += " to " + to
				}
			}
			return &DirError{Path: at, What: what}
		}
	}
	return nil
}

// DirError is the ErrNotDirectory of one path: what lstat says is there.
type DirError struct {
	// Path is the entry that is not a directory.
	Path string
	// What it is ("a symlink to /elsewhere", "a regular file").
	What string
}

// Error names the path and what it is.
func (e *DirError) Error() string {
	return fmt.Sprintf("%s is %s, not a directory; custody writes nothing through it", e.Path, e.What)
}

// Unwrap makes a DirError ErrNotDirectory.
func (e *DirError) Unwrap() error { return ErrNotDirectory }
