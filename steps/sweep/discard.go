package sweep

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"time"

	"github.com/custody-sh/custody/steps/failpoint"
)

// identity is what says an entry is still the one a snapshot saw.
type identity struct {
	mode  fs.FileMode
	size  int64
	mtime time.Time
	ctime time.Time
	ino   uint64
}

// same reports whether a and b are one entry, unchanged.
func (a identity) same(b identity) bool {
	return a.mode == b.mode && a.size == b.size && a.mtime.Equal(b.mtime) && a.ctime.Equal(b.ctime) && a.ino == b.ino
}

// snapEntry is one entry of a snapshot: its path relative to the tree
// (slash-separated) and its identity.
type snapEntry struct {
	rel string
	id  identity
	// fresh says the entry changed after the check that found the tree
	// idle: the snapshot sees it, but it is not what was checked, so it is
	// left, and so is every directory holding it.
	fresh bool
}

// snapshot is one build directory's entries as one walk found them,
// each directory before what it holds.
type snapshot struct {
	rel   string
	ents  []snapEntry
	bytes int64
}

// errNotDir is the error of a build directory that is no longer a real
// directory (a symlink, a file) when its snapshot is taken.
var errNotDir = errors.New("is no longer a directory")

// takeSnapshot walks the build directory rel below root without following
// a symlink, recording every entry's identity. checked is the latest
// change the check that found the tree idle saw anywhere in it: an entry
// modified or changed after it was written after the check (the check and
// the snapshot are apart by a plan, and by a whole chunk when one is taken
// again) and is marked fresh, to be left, and its bytes are not counted.
func takeSnapshot(root *os.Root, rel string, checked time.Time) (snapshot, error) {
	s := snapshot{rel: rel}
	fi, err := root.Lstat(rel)
	if err != nil {
		return s, err
	}
	if !fi.IsDir() {
		return s, fmt.Errorf("%s %w", rel, errNotDir)
	}
	err = fs.WalkDir(root.FS(), rel, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := root.Lstat(p)
		if err != nil {
			return err
		}
		if p == rel && !info.IsDir() {
			return fmt.Errorf("%s %w", rel, errNotDir)
		}
		id := identityOf(info)
		fresh := id.mtime.After(checked) || id.ctime.After(checked)
		s.ents = append(s.ents, snapEntry{rel: p, id: id, fresh: fresh})
		if info.Mode().IsRegular() && !fresh {
			s.bytes += info.Size()
		}
		return nil
	})
	return s, err
}

// discarded is what deleting one snapshot did: the bytes of the files it
// deleted, and the entries it left because they changed or were added
// since the snapshot (a directory that still holds such an entry is left
// with it).
type discarded struct {
	freed int64
	files int
	kept  []string
}

// discardSnapshot deletes the entries of s below root, deepest first, each
// only when lstat still shows the identity the snapshot recorded (inode,
// size, modification and change time, mode): a file written, replaced or
// added since the snapshot is left where it is, and so is every directory
// holding one. Paths are resolved inside root (os.Root), so no symlink
// swapped into the tree since leads a deletion outside it, and an entry
// reached through one is another inode and left.
func discardSnapshot(root *os.Root, s snapshot) discarded {
	var d discarded
	keptDirs := map[string]bool{}
	keep := func(rel string) {
		d.kept = append(d.kept, rel)
		for p := path.Dir(rel); ; p = path.Dir(p) {
			keptDirs[p] = true
			if p == s.rel || p == "." || p == "/" {
				break
			}
		}
	}
	for _, e := range slices.Backward(s.ents) {
		if e.fresh {
			if e.id.mode.IsDir() {
				keep(e.rel + "/")
			} else {
				keep(e.rel)
			}
			continue
		}
		if e.id.mode.IsDir() {
			if keptDirs[e.rel] {
				continue
			}
			if err := root.Remove(e.rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
				keep(e.rel + "/") // it holds something, or cannot be removed
			}
			continue
		}
		fi, err := root.Lstat(e.rel)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil || !identityOf(fi).same(e.id) {
			// Changed since the snapshot, or no longer reachable inside
			// the tree (a directory above it became a symlink that
			// leads out): what is there now is not what was checked.
			keep(e.rel)
			continue
		}
		if err := root.Remove(e.rel); err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				keep(e.rel)
			}
			continue
		}
		d.files++
		failpoint.At("sweep/during-discard")
		if e.id.mode.IsRegular() {
			d.freed += e.id.size
		}
	}
	slices.Sort(d.kept)
	return d
}
