package observe

import (
	"io/fs"
	"path"
	"path/filepath"

	"github.com/custody-sh/custody/observe/gitfiles"
)

// indexStatClean reports whether the tree at dir is, by git's own files,
// exactly what its index records, as git status would find it without
// reading a file: every index entry a plain file or symlink at stage 0
// (no gitlink, no assume-unchanged, skip-worktree or intent-to-add bit),
// none racily clean against the index file's mtime (indexMtimeSec) and
// none whose recorded size git takes for a change; on disk, every entry
// below dir (but dir's own .git file) a directory that holds a tracked
// path or a tracked file or symlink whose lstat gives exactly the stat
// data the index records; and every tracked path found. So git status
// would read no file, and would report no change, no deleted and no
// untracked path (and there is no ignored one). Anything else is false
// and why: the caller asks git status. It reads no file's content and runs
// nothing.
func indexStatClean(dir string, idx gitfiles.IndexFile, indexMtimeSec uint32) (bool, string) {
	if !statFromIndexReadable {
		return false, "stat data is compared by git on this system"
	}
	if idx.Ita || len(idx.Stats) != len(idx.Ents) {
		return false, "the index holds an intent-to-add entry"
	}
	files := make(map[string]int, len(idx.Ents))
	dirs := map[string]bool{}
	for i, e := range idx.Ents {
		sd := idx.Stats[i]
		switch {
		case e.Tag != 'H' || e.Stage != 0:
			return false, e.Path + " is not a plain index entry"
		case e.Mode != "100644" && e.Mode != "100755" && e.Mode != "120000":
			return false, e.Path + " has mode " + e.Mode
		case sd.Racy(indexMtimeSec):
			return false, e.Path + " is racily clean: git would read it"
		case sd.Size == 0 && e.OID != gitfiles.EmptyBlobID(gitfiles.FormatOf(e.OID)):
			return false, e.Path + " has a smudged size: git would read it"
		}
		files[e.Path] = i
		for d := path.Dir(e.Path); d != "." && d != "/" && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	w := statWalk{root: dir, idx: idx, files: files, dirs: dirs}
	w.dir(dir, "")
	switch {
	case w.why != "":
		return false, w.why
	case w.matched != len(idx.Ents):
		return false, "a tracked file is missing"
	}
	return true, ""
}

// statWalk is indexStatClean's walk of the tree: it stops at the first
// entry that is not what the index records (why says which).
type statWalk struct {
	root    string
	idx     gitfiles.IndexFile
	files   map[string]int
	dirs    map[string]bool
	matched int
	why     string
	// buf is the directory listing buffer every directory reuses.
	buf []byte
}

func (w *statWalk) dir(abs, rel string) {
	if w.buf == nil {
		w.buf = make([]byte, 32<<10)
	}
	// Each entry is lstat'ed relative to its open directory (readDirStat):
	// one path component for the kernel to resolve, as git's own relative
	// lstat, instead of the whole path.
	ents, infos, errs, err := readDirStat(abs, w.buf)
	if err != nil {
		w.why = "cannot list " + abs + ": " + err.Error()
		return
	}
	for i, d := range ents {
		if w.why != "" {
			return
		}
		name := d.Name()
		r := name
		if rel != "" {
			r = rel + "/" + name
		}
		switch {
		case rel == "" && name == ".git":
			if !d.Type().IsRegular() {
				w.why = filepath.Join(abs, name) + " is not a linked tree's .git file"
			}
		case d.IsDir():
			if !w.dirs[r] {
				w.why = r + "/ holds no tracked path"
				return
			}
			w.dir(filepath.Join(abs, name), r)
		default:
			j, ok := w.files[r]
			if !ok {
				w.why = r + " is not tracked"
				return
			}
			if errs[i] != nil || !statMatches(w.idx.Stats[j], infos[i]) {
				w.why = r + " is not as the index records it"
				return
			}
			w.matched++
		}
	}
}

// modeMatches reports whether a file of mode m on disk is what an index
// entry of mode im (0100644, 0100755, 0120000) records: a symlink for a
// symlink, a regular file with the owner's execute bit exactly for 0100755.
func modeMatches(im uint32, m fs.FileMode) bool {
	switch im {
	case 0o120000:
		return m&fs.ModeSymlink != 0
	case 0o100755:
		return m.IsRegular() && m.Perm()&0o100 != 0
	case 0o100644:
		return m.IsRegular() && m.Perm()&0o100 == 0
	}
	return false
}
