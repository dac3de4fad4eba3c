package sweep

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
)

// treeWalk is the one walk sweep makes of a tree to decide it: when it
// last changed, what its index does not track (for finding its build
// output without git status), and the identity of every entry that is not
// tracked, in walk order, each directory before what it holds: the
// snapshot every deletion goes by.
type treeWalk struct {
	newest     time.Time
	newestPath string
	// err is why the walk could not read the whole tree.
	err       string
	untracked observe.Untracked
	ents      []snapEntry
}

// walkTree walks the tree at dir without following symlinks, as
// filepath.WalkDir would (each directory's entries in lexical order, each
// directory before what it holds), but statting each entry by its name in
// its opened directory rather than by its whole path: a walk of build
// output makes one short lookup per entry, as find does. With tracked
// (the tree's index) it records the entries no index entry is at or below
// and the untracked files; without (nil: the index could not be read) it
// records every entry. The first entry that cannot be read ends the walk,
// and err says which.
func walkTree(dir string, tracked *machine.TrackedSet) treeWalk {
	w := treeWalk{}
	if err := w.walkFrom(dir, tracked); err != nil {
		w.err = err.Error()
	}
	return w
}

// walkFrom is walkTree's walk: the tree's own directory, then what it
// holds.
func (w *treeWalk) walkFrom(dir string, tracked *machine.TrackedSet) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	w.visit(".", fi, func() (string, error) { return os.Readlink(dir) }, tracked)
	if !fi.IsDir() {
		return nil
	}
	root, err := openWalked(nil, dir, fi)
	if err != nil {
		return err
	}
	defer root.Close()
	return w.walkDir(root, dir, "", tracked)
}

// walkDir walks what the directory r (at full, the tree's rel; "" for the
// tree itself) holds.
func (w *treeWalk) walkDir(r *os.Root, full, rel string, tracked *machine.TrackedSet) error {
	d, err := openDirFD(r)
	if err != nil {
		return pathError("open", full, err)
	}
	defer d.close()
	// Names only: a directory opened in a Root would lstat each entry
	// for ReadDir, and each is statted below, by name in d.
	names, err := d.names()
	if err != nil {
		return pathError("readdirent", full, err)
	}
	slices.Sort(names)
	for _, name := range names {
		p := filepath.Join(full, name)
		id, err := d.lstat(name)
		if err != nil {
			return pathError("lstat", p, err)
		}
		erel := name
		if rel != "" {
			erel = rel + "/" + name
		}
		w.visitID(erel, id, func() (string, error) {
			t, err := r.Readlink(name)
			if err != nil {
				err = pathError("readlink", p, err)
			}
			return t, err
		}, tracked)
		if !id.mode.IsDir() {
			continue
		}
		// A directory is opened only while it is the one statted.
		fi, err := r.Lstat(name)
		if err != nil {
			return pathError("lstat", p, err)
		}
		if identityOf(fi).ino != id.ino || !fi.IsDir() {
			return &fs.PathError{Op: "open", Path: p, Err: errChangedInWalk}
		}
		sub, err := openWalked(r, p, fi)
		if err != nil {
			return err
		}
		err = w.walkDir(sub, p, erel, tracked)
		sub.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// openWalked opens the directory p (a name in parent, or a path when
// parent is nil) that lstat found as fi, and only that directory: one put
// in its place since, or a symlink, is an error.
func openWalked(parent *os.Root, p string, fi fs.FileInfo) (*os.Root, error) {
	var r *os.Root
	var err error
	if parent == nil {
		r, err = os.OpenRoot(p)
	} else {
		r, err = parent.OpenRoot(filepath.Base(p))
	}
	if err != nil {
		return nil, pathError("open", p, err)
	}
	if opened, err := r.Stat("."); err != nil || !os.SameFile(fi, opened) {
		r.Close()
		return nil, &fs.PathError{Op: "open", Path: p, Err: errChangedInWalk}
	}
	return r, nil
}

// pathError is err (of an os.Root call naming the entry relative to its
// directory) as an error naming the entry's whole path p, as the path's
// own call would have.
func pathError(op, p string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &fs.PathError{Op: op, Path: p, Err: err}
}

// errChangedInWalk is the error of a directory that was replaced while the
// walk read it.
var errChangedInWalk = errors.New("changed while it was walked")

// visit records the entry rel (fi, as lstat gave it) of the walk: its
// times, and, when the walk keeps it, its identity and, for a link,
// what readlink gives.
func (w *treeWalk) visit(rel string, fi fs.FileInfo, readlink func() (string, error), tracked *machine.TrackedSet) {
	w.visitID(rel, identityOf(fi), readlink, tracked)
}

// visitID is visit of the entry whose identity is id.
func (w *treeWalk) visitID(rel string, id identity, readlink func() (string, error), tracked *machine.TrackedSet) {
	t := id.mtime
	if id.ctime.After(t) {
		t = id.ctime
	}
	if t.After(w.newest) {
		w.newest, w.newestPath = t, rel
	}
	if tracked == nil && rel != "." || tracked != nil && w.untracked.Add(rel, id.mode, *tracked) {
		e := snapEntry{rel: rel, id: id}
		if id.mode&fs.ModeSymlink != 0 {
			target, err := readlink()
			e.link = &walkedLink{target: target, err: err}
		}
		w.ents = append(w.ents, e)
	}
}

// snapshot is the part of w below (and at) the build output rel, of kind:
// what its deletion goes by. Build output is a directory, or a regular
// file an approved disposable pattern names; one that was neither when
// walked (a symlink in a directory's place, say), or that the walk did not
// record (tracked, or not there), has none.
func (w *treeWalk) snapshot(rel string, kind machine.BuildKind) (snapshot, error) {
	rel = path.Clean(rel)
	s := snapshot{rel: rel}
	for _, e := range w.ents {
		if e.rel != rel && !strings.HasPrefix(e.rel, rel+"/") {
			continue
		}
		if len(s.ents) == 0 && (e.rel != rel || !e.id.mode.IsDir() && !(kind == machine.BuildDisposable && e.id.mode.IsRegular())) {
			return s, &fs.PathError{Op: "snapshot", Path: rel, Err: errNotDir}
		}
		s.ents = append(s.ents, e)
		if e.id.mode.IsRegular() {
			s.bytes += e.id.size
		}
	}
	if len(s.ents) == 0 {
		return s, &fs.PathError{Op: "snapshot", Path: rel, Err: fs.ErrNotExist}
	}
	return s, nil
}

// keepOnly drops from w everything but the entries at and below the build
// directories dirs (what the deletion needs), and the untracked files: a
// chunk's walks hold no more than its build output.
func (w *treeWalk) keepOnly(dirs []machine.DiscardedDir) {
	kept := w.ents[:0]
	for _, e := range w.ents {
		for _, d := range dirs {
			rel := path.Clean(d.Path)
			if e.rel == rel || strings.HasPrefix(e.rel, rel+"/") {
				kept = append(kept, e)
				break
			}
		}
	}
	clear(w.ents[len(kept):])
	w.ents = slices.Clip(kept)
	w.untracked = observe.Untracked{}
}
