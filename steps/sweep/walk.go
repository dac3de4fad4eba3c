package sweep

import (
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

// walkTree walks the tree at dir without following symlinks. With tracked
// (the tree's index) it records the entries no index entry is at or below
// and the untracked files; without (nil: the index could not be read) it
// records every entry.
func walkTree(dir string, tracked *machine.TrackedSet) treeWalk {
	var w treeWalk
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		id := identityOf(fi)
		t := id.mtime
		if id.ctime.After(t) {
			t = id.ctime
		}
		if t.After(w.newest) {
			w.newest, w.newestPath = t, rel
		}
		if tracked == nil && rel != "." || tracked != nil && w.untracked.Add(rel, fi.Mode(), *tracked) {
			e := snapEntry{rel: rel, id: id}
			if fi.Mode()&fs.ModeSymlink != 0 {
				target, err := os.Readlink(p)
				e.link = &walkedLink{target: target, err: err}
			}
			w.ents = append(w.ents, e)
		}
		return nil
	})
	if err != nil {
		w.err = err.Error()
	}
	return w
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
