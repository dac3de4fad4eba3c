package observe

import (
	"context"
	"io/fs"
	"path"
	"path/filepath"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/hostio"
)

// strictWalk is what a content walk checks as it goes when it tries to
// show, without git status, that a tree is exactly its HEAD (knownClean):
// every directory it enters is a prefix of a tracked path, every file and
// symlink is tracked and hashes to the tracked blob id. At the first entry
// that is not, the walk ends (git status will be asked after all), so an
// untracked directory, however large, is never read. A nil strictWalk
// checks nothing.
type strictWalk struct {
	files   map[string]gitfiles.IndexEntry // tracked path → its index entry
	dirs    map[string]bool
	matched int
	stopped bool
	// want is the index entry of the file admits let through last.
	want gitfiles.IndexEntry
}

// newStrictWalk is a strict walk against ents (no gitlink among them).
func newStrictWalk(ents []gitfiles.IndexEntry) *strictWalk {
	s := &strictWalk{files: make(map[string]gitfiles.IndexEntry, len(ents)), dirs: map[string]bool{}}
	for _, e := range ents {
		s.files[e.Path] = e
		for d := path.Dir(e.Path); d != "." && d != "/" && !s.dirs[d]; d = path.Dir(d) {
			s.dirs[d] = true
		}
	}
	return s
}

func (s *strictWalk) fail() {
	if s != nil {
		s.stopped = true
	}
}

func (s *strictWalk) failed() bool { return s != nil && s.stopped }

// admits reports whether the walk goes on to the entry d at rel: false
// once the walk has stopped, and it stops at a directory that is no prefix
// of a tracked path and at anything else that is not a tracked path.
func (s *strictWalk) admits(rel string, d fs.DirEntry) bool {
	if s == nil {
		return true
	}
	if s.stopped {
		return false
	}
	if d.IsDir() {
		s.stopped = !s.dirs[rel]
	} else if en, ok := s.files[rel]; ok {
		s.want = en
	} else {
		s.stopped = true
	}
	return !s.stopped
}

// mayAdmit reports whether admits could let the entry d at rel through:
// a directory that is a prefix of a tracked path, anything else that is a
// tracked path. It changes nothing.
func (s *strictWalk) mayAdmit(rel string, d fs.DirEntry) bool {
	if d.IsDir() {
		return s.dirs[rel]
	}
	_, ok := s.files[rel]
	return ok
}

// hashed checks the file or symlink the walk just admitted and hashed
// (lstat found it size bytes long) against its index entry: the blob id,
// and the size the index records, when it records one. Git takes a file
// whose size differs from the index's as modified without reading it, so
// status would report HEAD's own bytes at another recorded size as a
// change (the index's stat data, written at an earlier checkout with
// other line endings, say): such a tree takes the status path.
func (s *strictWalk) hashed(e machine.DiskEntry, size int64) {
	if s == nil || s.stopped {
		return
	}
	if e.Err != "" || e.OID != s.want.OID || s.want.Size != 0 && s.want.Size != uint32(size) {
		s.stopped = true
		return
	}
	s.matched++
}

// knownClean is plan's way of observing, without git status, a tree whose
// status is already known to be empty; it reports false, and observes
// nothing into o, whenever it cannot show that, and the caller runs git
// status as before. It needs, all from files custody reads itself and one
// batched question to git per plan:
//
//   - HEAD's tree id (trees, by commit: observe.CommitTrees);
//   - an index custody reads exactly (ReadIndexFile) whose entries are all
//     plain (stage 0, no assume-unchanged, skip-worktree or intent-to-add
//     bit, no gitlink, no .gitattributes) and hash to exactly that tree
//     (IndexTreeID): so the index equals HEAD and status has no staged
//     change, no unmerged path and no submodule to report;
//   - a cache tree (the TREE extension) that tells no lie, and every tree
//     object git reads comparing the index with HEAD there to read
//     (headTreesReadable): with a valid node naming the tree and entry
//     count the entries make for every directory, git skips them all and
//     reads only the root, which plan's question showed is there; a
//     directory it does not skip must be an intact loose tree. A HEAD
//     subtree missing from the repository, or a node that lies, would
//     make status fail or see other entries; such a tree takes status;
//   - no info/attributes in the repository and no config.worktree of the
//     tree's own: no attribute there can make git see a file's bytes as
//     other bytes (plan leaves HeadTrees nil when one from outside the
//     repository could: AttributesFromOutside);
//   - the tree, its .git file, its admin entry and the common dir owned by
//     the effective user: git refuses to look at a tree of another owner
//     ("dubious ownership"), and its status would then fail;
//   - a content walk (the one content accounting makes anyway, with the
//     hash cache) that finds every tracked path on disk with exactly its
//     blob id and mode, nothing else at all, no nested .git and no
//     directory it cannot read: so status has no change, no deleted path,
//     no untracked and no ignored path to report.
//
// What it observes then is what the status path observes of the same
// tree: the empty status, the same content accounting over the same walk,
// no build output, and the same hidden state. Idx is the index as custody
// read it (the zero indexFile when it did not), so the caller need not read
// it again, and the status path holds git's view to it (staleIndexView).
func knownClean(ctx context.Context, g *hostio.Git, repo hostio.Repo, dir, key, head string, scope Scope, o *machine.WorktreeObservation) (idx gitfiles.IndexFile, ok bool) {
	tree := scope.HeadTrees[head]
	if !scope.Status || key == "" {
		return gitfiles.IndexFile{}, false
	}
	idx, err := gitfiles.ReadIndexFileWhole(filepath.Join(repo.AdminDir(key), "index"))
	if err != nil {
		return idx, false
	}
	ents := idx.Ents
	if idx.Ita || tree == "" {
		return idx, false
	}
	for _, e := range ents {
		if e.Tag != 'H' || e.Stage != 0 || e.Gitlink() || path.Base(e.Path) == ".gitattributes" {
			return idx, false
		}
	}
	if hostio.Lstat(filepath.Join(repo.CommonDir, "info", "attributes")).State != machine.PathAbsent ||
		hostio.Lstat(filepath.Join(repo.AdminDir(key), "config.worktree")).State != machine.PathAbsent ||
		!ownedBySelf(dir, filepath.Join(dir, ".git"), repo.AdminDir(key), repo.CommonDir) {
		return idx, false
	}
	if id, dirs, err := gitfiles.IndexTrees(gitfiles.FormatOf(tree), ents); err != nil || id != tree ||
		!gitfiles.HeadTreesReadable(filepath.Join(repo.CommonDir, "objects"), gitfiles.FormatOf(tree), idx.Cache, dirs) {
		return idx, false
	}
	strict := newStrictWalk(ents)
	var scan *nestedScan
	if scope.Hidden {
		scan = newNestedScan(dir, nil)
	}
	content, discarded, walked := contentWalked(dir, scope.Hashes, key, machine.Status{}, false, scope.Hidden, ents, nil, scope.Disposable, scan, strict)
	if !walked || strict.matched != len(ents) || len(content) > 0 || len(discarded) > 0 {
		return idx, false
	}
	o.Content, o.Discarded = content, discarded
	if scope.Hidden {
		o.Hidden = append(o.Hidden, hiddenStateWith(ctx, g, repo, dir, key, machine.Status{}, ents, nil, func(root string, gitlinks []string) []machine.Hidden {
			if root != dir || len(gitlinks) > 0 {
				return nestedGit(root, gitlinks)
			}
			return scan.hs
		})...)
	}
	return idx, true
}
