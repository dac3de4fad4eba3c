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
// directory holding one. Each directory is opened once, from its parent
// and not through a symlink (openDirIn), and its entries are examined and
// removed by name there; a directory that holds, when it is opened,
// something new that the classifier would refuse (a .git, a link, a
// special file) keeps everything it holds.
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
	// fds is each directory of dirs open by its descriptor, for its files.
	fds := map[string]dirFD{}
	unopened := map[string]bool{}
	defer func() {
		for rel, r := range dirs {
			if rel != "." {
				r.Close()
			}
		}
		for _, f := range fds {
			f.close()
		}
	}()
	names := snapshotDirs(s)
	// in is the directory rel lies in, opened inside root (nil when it
	// cannot be: gone, no longer a directory, or holding something new
	// that the classifier would refuse). Each directory is opened from its parent, one
	// name at a time, and only while that name is a directory before and
	// after the open and the open reached it (openDirIn): a symlink put in
	// a directory's place since the re-check is not followed, even to the
	// directory itself moved elsewhere.
	var in func(rel string) *os.Root
	in = func(rel string) *os.Root {
		dir := path.Dir(rel)
		if r, ok := dirs[dir]; ok {
			return r
		}
		if unopened[dir] {
			return nil
		}
		var r *os.Root
		if parent := in(dir); parent != nil {
			r = openDirIn(parent, path.Base(dir))
		}
		if r != nil && !addedNothingThatClassifies(r, names[dir]) {
			// A repository, a link or a special file was put in it
			// after the re-check: none of what it holds goes.
			r.Close()
			r = nil
		}
		if r == nil {
			unopened[dir] = true
			return nil
		}
		dirs[dir] = r
		return r
	}
	// fileDir is the directory a file rel lies in, opened as in opens it,
	// by its descriptor (false when it cannot be).
	fileDir := func(rel string) (dirFD, bool) {
		dir := path.Dir(rel)
		if f, ok := fds[dir]; ok {
			return f, true
		}
		r := in(rel)
		if r == nil {
			return dirFD{}, false
		}
		f, err := openDirFD(r)
		if err != nil {
			return dirFD{}, false
		}
		fds[dir] = f
		return f, true
	}
	for _, e := range slices.Backward(s.ents) {
		if e.id.mode.IsDir() {
			// Everything below it came after it in the walk, and is done.
			if r, ok := dirs[e.rel]; ok {
				r.Close()
				delete(dirs, e.rel)
			}
			if f, ok := fds[e.rel]; ok {
				f.close()
				delete(fds, e.rel)
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
		dir, ok := fileDir(e.rel)
		if !ok {
			if _, err := root.Lstat(e.rel); !errors.Is(err, fs.ErrNotExist) {
				keep(e.rel)
			}
			continue
		}
		name := path.Base(e.rel)
		id, err := dir.lstat(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil || !id.same(e.id) {
			// Changed since the check, or no longer reachable inside
			// the tree (a directory above it became a symlink that
			// leads out): what is there now is not what was checked.
			keep(e.rel)
			continue
		}
		if err := dir.unlink(name); err != nil {
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

// snapshotDirs is each directory of s (its own included, empty ones too),
// with the names the walk found in it and the type each had.
func snapshotDirs(s snapshot) map[string]map[string]fs.FileMode {
	out := map[string]map[string]fs.FileMode{}
	for _, e := range s.ents {
		if e.id.mode.IsDir() && out[e.rel] == nil {
			out[e.rel] = map[string]fs.FileMode{}
		}
		if e.rel == s.rel {
			continue
		}
		dir := path.Dir(e.rel)
		if out[dir] == nil {
			out[dir] = map[string]fs.FileMode{}
		}
		out[dir][path.Base(e.rel)] = e.id.mode.Type()
	}
	return out
}

// openDirIn opens the directory name of parent, and only a directory that
// name held before and after the open and that the open reached: a
// symlink put in its place at any moment of it is not followed (os.Root
// follows one that stays inside parent). nil when it cannot be.
func openDirIn(parent *os.Root, name string) *os.Root {
	before, err := parent.Lstat(name)
	if err != nil || !before.IsDir() {
		return nil
	}
	r, err := parent.OpenRoot(name)
	if err != nil {
		return nil
	}
	opened, err := r.Stat(".")
	after, aerr := parent.Lstat(name)
	if err != nil || aerr != nil || !after.IsDir() || !os.SameFile(before, opened) || !os.SameFile(before, after) {
		r.Close()
		return nil
	}
	return r
}

// addedNothingThatClassifies reports whether what the directory r holds
// beyond want (the snapshot's names for it) changes nothing the
// classifier reads: no .git, no name of a git directory (HEAD, objects,
// refs), no link and no special file. A file or directory added after the
// check is left by the deletion (nothing of it is in the snapshot), and
// the unchanged files beside it go, as the re-check decided; a repository,
// a special file or a link made in the directory since would make the
// classifier refuse it, so nothing it holds goes. Names are read without a
// stat; only the added ones are statted.
func addedNothingThatClassifies(r *os.Root, want map[string]fs.FileMode) bool {
	f, err := r.Open(".")
	if err != nil {
		return false
	}
	defer f.Close()
	got, err := f.Readdirnames(-1)
	if err != nil {
		return false
	}
	for _, n := range got {
		if _, ok := want[n]; ok {
			continue
		}
		switch n {
		case ".git", "HEAD", "objects", "refs":
			return false
		}
		if fi, err := r.Lstat(n); err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
			return false
		}
	}
	return true
}
