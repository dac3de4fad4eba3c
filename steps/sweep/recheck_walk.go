package sweep

import (
	"os"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
)

// classifyAgain classifies the build output d of the tree at dir (opened
// as root) again, as plan classifies it (observe.ClassifyBuild): its
// shape read now, against tracked (the index now), and, when the shape is
// recognised, the facts of everything below it. Those facts come from
// the check's walk (w) when nothing below d changed in what they are made
// of since: every directory of the snapshot s holds exactly the names the
// walk found, each of the same type, and every link leads where the walk
// read it to. Names, types and link targets are all that the walked
// facts a classification reads depend on (a .git or git directory, a
// special file, a link leading out); sizes change only the bytes. When
// anything of that changed, or cannot be read, d is walked on disk again.
// A tree whose path no longer leads to root is recognised as nothing.
func classifyAgain(root *os.Root, dir string, d machine.DiscardedDir, s snapshot, w *treeWalk, tracked machine.TrackedSet, disposable machine.Patterns) machine.BuildKind {
	// The shape (and a walk on disk) is read by path, the deletion goes
	// through root: both must be the one tree. A tree moved aside, with
	// another standing at its path, is classified as nothing.
	here, err := os.Lstat(dir)
	held, herr := root.Stat(".")
	if err != nil || herr != nil || !os.SameFile(here, held) {
		return machine.BuildNone
	}
	f := observe.BuildShape(dir, d.Path)
	if machine.StructureKind(f, tracked, disposable) == machine.BuildNone {
		return machine.BuildNone
	}
	if w != nil && unchangedBelow(root, s) {
		(&walkedBuild{dir: dir, w: w, tracked: tracked}).Walk(&f)
	} else {
		observe.WalkBuild(dir, &f)
	}
	return machine.ClassifyBuildOutput(f, tracked, disposable)
}

// unchangedBelow reports whether every directory of the snapshot s holds
// the names it held when walked, each of the type it had then, and every
// link of s still has the target the walk read. It reads each directory
// once (its entries' types come with the names) and each link once, and
// stats nothing else. A snapshot of a file, and anything that cannot be
// read, is not unchanged; nor is anything on a system or file system
// whose directories do not give their entries' types (dirTypes).
func unchangedBelow(root *os.Root, s snapshot) bool {
	if len(s.ents) == 0 || !s.ents[0].id.mode.IsDir() {
		return false
	}
	// The snapshot's own directory is typed by an lstat, the others by
	// their parent's entries: none is a link now that was not one then.
	if fi, err := root.Lstat(s.rel); err != nil || !fi.IsDir() {
		return false
	}
	for dir, want := range snapshotDirs(s) {
		got, ok := dirTypes(root, dir)
		if !ok || len(got) != len(want) {
			return false
		}
		for name, typ := range got {
			if w, ok := want[name]; !ok || w != typ {
				return false
			}
		}
	}
	for _, e := range s.ents {
		if e.link == nil {
			continue
		}
		target, err := root.Readlink(e.rel)
		if err != nil || e.link.err != nil || target != e.link.target {
			return false
		}
	}
	return true
}
