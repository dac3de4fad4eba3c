package observe

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/gitfiles"
)

// nestedScan finds what nestedGit reports — every .git entry (file,
// directory or link) below root except root's own and those at the roots
// of registered submodules, and every directory that cannot be read — in
// the order of a filepath.WalkDir over root. The content walk feeds it
// what it lists (found, unreadable) and hands it the directories it does
// not enter (walk), so one walk of the tree serves both. A nil scan
// collects nothing.
type nestedScan struct {
	root string
	subs map[string]bool
	hs   []machine.Hidden
}

// newNestedScan is a scan of the tree at root whose registered submodules
// are gitlinks (slash-separated, relative).
func newNestedScan(root string, gitlinks []string) *nestedScan {
	subs := make(map[string]bool, len(gitlinks))
	for _, s := range gitlinks {
		subs[filepath.Join(root, s)] = true
	}
	return &nestedScan{root: root, subs: subs}
}

// unreadable records that the directory at p could not be read.
func (s *nestedScan) unreadable(p string, err error) {
	if s == nil {
		return
	}
	s.hs = append(s.hs, machine.Hidden{Code: machine.CodeObservationFailed, Path: p, Detail: "cannot be read: " + err.Error()})
}

// found records the entry d, named .git, listed in the directory dir; it
// reports whether d is a directory, which nestedGit does not enter.
func (s *nestedScan) found(dir string, d fs.DirEntry) bool {
	if s == nil {
		return false
	}
	p := filepath.Join(dir, d.Name())
	if p == filepath.Join(s.root, ".git") {
		return false
	}
	if !s.subs[filepath.Dir(p)] {
		s.hs = append(s.hs, machine.Hidden{Code: machine.CodeNestedGit, Path: p, Detail: "a nested repository may hold commits no remote has"})
	}
	return d.IsDir()
}

// walk scans the directory at dir, and everything below it, as
// filepath.WalkDir does below its root: the listing sorted by name, each
// directory read (os.ReadDir) as it is reached, one that cannot be read
// reported and not entered, symlinks never followed.
func (s *nestedScan) walk(dir string) {
	if s == nil {
		return
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		s.unreadable(dir, err)
		return
	}
	for _, d := range ents {
		if d.Name() == ".git" && s.found(dir, d) {
			continue
		}
		if d.IsDir() {
			s.walk(filepath.Join(dir, d.Name()))
		}
	}
}

// scan is nestedGit's whole walk from the root: the root itself, then
// below it.
func (s *nestedScan) scan() []machine.Hidden {
	fi, err := os.Lstat(s.root)
	if err != nil {
		s.unreadable(s.root, err)
		return s.hs
	}
	if fi.Name() == ".git" && s.found(filepath.Dir(s.root), fs.FileInfoToDirEntry(fi)) || !fi.IsDir() {
		return s.hs
	}
	s.walk(s.root)
	return s.hs
}

// contentAndNested is ContentCached with the hidden-state check on, whose
// walk also finds the nested .git entries: it returns them as the nested
// function hiddenStateWith takes, giving exactly what nestedGit would
// give. When the index could not be read no walk is made, and nestedGit
// walks the tree itself.
func contentAndNested(dir string, cache *HashCache, key string, st machine.Status, envOwn bool, ents []gitfiles.IndexEntry, lsErr error, disposable machine.Patterns) ([]machine.Unaccounted, []machine.DiscardedDir, func(string, []string) []machine.Hidden) {
	if lsErr != nil {
		un, discarded := ContentCached(dir, cache, key, st, envOwn, true, ents, lsErr, disposable)
		return un, discarded, nestedGit
	}
	scan := newNestedScan(dir, stageZeroGitlinks(ents))
	un, discarded := contentCached(dir, cache, key, st, envOwn, true, ents, lsErr, disposable, scan)
	return un, discarded, func(root string, gitlinks []string) []machine.Hidden {
		if root != dir || !slices.Equal(gitlinks, stageZeroGitlinks(ents)) {
			return nestedGit(root, gitlinks) // not the walk made: walk again
		}
		return scan.hs
	}
}

// stageZeroGitlinks are the registered submodules of ents, as
// hiddenStateWith lists them.
func stageZeroGitlinks(ents []gitfiles.IndexEntry) []string {
	var out []string
	for _, e := range ents {
		if e.Gitlink() && e.Stage == 0 {
			out = append(out, e.Path)
		}
	}
	return out
}
