package sweep

import (
	"errors"
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
// (slash-separated) and its identity when the check walked it.
type snapEntry struct {
	rel string
	id  identity
	// link is a symbolic link's target as the walk read it; nil for any
	// other entry.
	link *walkedLink
}

// walkedLink is what reading a symbolic link gave the walk: its target,
// or why it could not be read.
type walkedLink struct {
	target string
	err    error
}

// snapshot is one build directory's entries as the check's walk found
// them, each directory before what it holds.
type snapshot struct {
	rel   string
	ents  []snapEntry
	bytes int64
}

// errNotDir is the error of a build directory that was no real directory
// (a symlink, a file) when the check walked it.
var errNotDir = errors.New("is no longer a directory")

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
// only when lstat still shows the identity the check's walk recorded
// (inode, size, modification and change time, mode): a file written,
// replaced or added since the check is left where it is, and so is every
// directory holding one. Each directory is opened once, inside root
// (os.Root), and its entries are examined and removed by name there, so
// no symlink swapped into the tree since leads a deletion outside it, and
// an entry reached through one is another inode and left.
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
	var seen map[string]bool // the snapshot's paths, once a directory holds more
	dirs := map[string]*os.Root{".": root}
	unopened := map[string]bool{}
	defer func() {
		for rel, r := range dirs {
			if rel != "." {
				r.Close()
			}
		}
	}()
	// in is the directory rel lies in, opened inside root (nil when it
	// cannot be: gone, or leading out through a symlink).
	in := func(rel string) *os.Root {
		dir := path.Dir(rel)
		if r, ok := dirs[dir]; ok {
			return r
		}
		if unopened[dir] {
			return nil
		}
		r, err := root.OpenRoot(dir)
		if err != nil {
			unopened[dir] = true
			return nil
		}
		dirs[dir] = r
		return r
	}
	for _, e := range slices.Backward(s.ents) {
		if e.id.mode.IsDir() {
			// Everything below it came after it in the walk, and is done.
			if r, ok := dirs[e.rel]; ok {
				r.Close()
				delete(dirs, e.rel)
			}
			if keptDirs[e.rel] {
				continue
			}
			r := in(e.rel)
			if r == nil {
				if _, err := root.Lstat(e.rel); !errors.Is(err, fs.ErrNotExist) {
					keep(e.rel + "/")
				}
				continue
			}
			// Still the directory the check walked (its times move as
			// what it holds goes): not a symlink or another directory
			// put in its place since.
			if fi, err := r.Lstat(path.Base(e.rel)); errors.Is(err, fs.ErrNotExist) {
				continue
			} else if err != nil || !fi.IsDir() || identityOf(fi).ino != e.id.ino {
				keep(e.rel + "/")
				continue
			}
			if err := r.Remove(path.Base(e.rel)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				// It holds something the check did not see, or cannot be
				// removed: what is new in it is named, else the directory.
				if added := addedTo(root, e.rel, s, &seen); len(added) > 0 {
					for _, a := range added {
						keep(a)
					}
				} else {
					keep(e.rel + "/")
				}
			}
			continue
		}
		r := in(e.rel)
		if r == nil {
			if _, err := root.Lstat(e.rel); !errors.Is(err, fs.ErrNotExist) {
				keep(e.rel)
			}
			continue
		}
		name := path.Base(e.rel)
		fi, err := r.Lstat(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil || !identityOf(fi).same(e.id) {
			// Changed since the check, or no longer reachable inside
			// the tree (a directory above it became a symlink that
			// leads out): what is there now is not what was checked.
			keep(e.rel)
			continue
		}
		if err := r.Remove(name); err != nil {
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

// addedTo names what the directory rel below root holds that the snapshot
// s does not (a directory with a trailing "/"): what was written into it
// after the check. seen is the set of s's paths, made at the first call.
func addedTo(root *os.Root, rel string, s snapshot, seen *map[string]bool) []string {
	if *seen == nil {
		*seen = make(map[string]bool, len(s.ents))
		for _, e := range s.ents {
			(*seen)[e.rel] = true
		}
	}
	f, err := root.Open(rel)
	if err != nil {
		return nil
	}
	defer f.Close()
	ents, err := f.ReadDir(-1)
	if err != nil {
		return nil
	}
	var out []string
	for _, d := range ents {
		p := rel + "/" + d.Name()
		if (*seen)[p] {
			continue
		}
		if d.IsDir() {
			p += "/"
		}
		out = append(out, p)
	}
	return out
}
