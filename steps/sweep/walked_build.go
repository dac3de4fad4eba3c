package sweep

import (
	"io/fs"
	"path"
	"path/filepath"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
)

// walkedBuild is a tree as sweep's walk recorded it, as the
// machine.BuildSource the check decides its build output over. A
// candidate's shape (what it is, its direct entries, its CACHEDIR.TAG and
// pyvenv.cfg) is read from disk as observe.DiskBuild reads it; what is
// below it comes from the walk, which lstat'd every untracked entry
// already, so the check does not walk a candidate a second time. Walk
// gives exactly the facts observe.WalkBuild gives for the same entries
// (TestWalkedBuildAgreesWithDisk): the same order (both walk each
// directory's entries by name), the same stops. A candidate that holds a
// tracked path, whose entries the walk did not record, is walked on disk.
type walkedBuild struct {
	dir     string
	w       *treeWalk
	tracked machine.TrackedSet
	// at is where each directory's entries start in w.ents, made on the
	// first Walk: a directory's entries follow it, together.
	at map[string]int
}

// Shape is observe.BuildShape of rel.
func (b *walkedBuild) Shape(rel string) machine.BuildFacts { return observe.BuildShape(b.dir, rel) }

// Walk fills f's walked facts from the walk's record of everything at and
// below f.Path, as observe.WalkBuild would from the disk.
func (b *walkedBuild) Walk(f *machine.BuildFacts) {
	root := path.Clean(f.Path)
	start, ok := b.start(root)
	if !ok || b.tracked.AtOrBelow(root) {
		observe.WalkBuild(b.dir, f)
		return
	}
	f.Walked = true
	if path.Base(f.Path) == ".git" {
		f.GitEntry = f.Path
		return
	}
	for _, e := range b.w.ents[start:] {
		rel := "."
		if e.rel != root {
			var below bool
			if rel, below = strings.CutPrefix(e.rel, root+"/"); !below {
				return // past the candidate's entries
			}
		}
		if path.Base(e.rel) == ".git" && e.rel != root {
			f.GitEntry = path.Join(f.Path, rel)
			return
		}
		switch m := e.id.mode; {
		case m.IsDir():
		case m&fs.ModeSymlink != 0:
			f.Bytes += e.id.size
			if e.link == nil || e.link.err != nil {
				f.Unreadable = path.Join(f.Path, rel) + ": " + linkErr(e.link)
				return
			}
			if machine.LinkEscapes(rel, e.link.target) {
				f.Escaping = append(f.Escaping, machine.BuildLink{Path: rel, Target: e.link.target})
			}
		case m.IsRegular():
			f.Bytes += e.id.size
			if path.Base(e.rel) == "HEAD" && b.gitDir(path.Dir(e.rel)) {
				f.GitEntry = path.Join(f.Path, path.Dir(rel))
				return
			}
		default:
			f.Special = path.Join(f.Path, rel)
			return
		}
	}
}

// start is the index of rel in the walk's entries, false when the walk
// did not record it.
func (b *walkedBuild) start(rel string) (int, bool) {
	if b.at == nil {
		b.at = map[string]int{}
		for i, e := range b.w.ents {
			if e.id.mode.IsDir() || e.id.mode.IsRegular() {
				b.at[e.rel] = i
			}
		}
	}
	i, ok := b.at[rel]
	return i, ok
}

// gitDir is observe.IsGitDir of dir (slash-separated, relative to the
// tree), asked of the disk as WalkBuild asks it: objects/ and refs/ may
// hold tracked paths, which the walk did not record. A HEAD file is rare
// in build output; two lstats when one is met.
func (b *walkedBuild) gitDir(dir string) bool {
	return observe.IsGitDir(filepath.Join(b.dir, filepath.FromSlash(dir)))
}

// linkErr is why a link's target could not be read.
func linkErr(l *walkedLink) string {
	if l == nil || l.err == nil {
		return "target not read"
	}
	return l.err.Error()
}
