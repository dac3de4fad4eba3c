package observe

import (
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/safefile"
)

// HashFile returns the blob id of the regular file at p, which lstat saw
// as info: it is opened without following a symlink and without blocking
// on a FIFO, and must still be the same regular file of the same size
// when read, or it is an error.
func HashFile(format gitfiles.ObjectFormat, p string, info fs.FileInfo) (string, error) {
	oid, _, err := hashFile(format, p, info, false)
	return oid, err
}

// hashFile is HashFile that, with after set, also returns what fstat says
// of the file once it was read (the content hash cache keys an entry only
// when that is still what lstat saw). Where the system allows it reads
// the file with plain system calls (hashFileDirect), else through os.
func hashFile(format gitfiles.ObjectFormat, p string, info fs.FileInfo, after bool) (string, fs.FileInfo, error) {
	if oid, then, ok, err := hashFileDirect(format, p, info, after); ok {
		return oid, then, err
	}
	return hashFileOS(format, p, info, after)
}

// hashFileOS is hashFile through an os.File.
func hashFileOS(format gitfiles.ObjectFormat, p string, info fs.FileInfo, after bool) (string, fs.FileInfo, error) {
	f, err := safefile.Open(p, os.O_RDONLY, 0)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	now, err := f.Stat()
	if err != nil {
		return "", nil, err
	}
	if !now.Mode().IsRegular() || !sameFile(info, now) {
		return "", nil, errors.New("changed while it was read")
	}
	h := gitfiles.NewHash(format)
	h.Write([]byte("blob " + strconv.FormatInt(now.Size(), 10) + "\x00"))
	// A buffer the file's size (at most 32 KiB) instead of io.Copy's 32 KiB
	// for every small file: hashing a tree is mostly small files.
	n, err := io.CopyBuffer(h, struct{ io.Reader }{f}, make([]byte, min(now.Size()+1, 32<<10)))
	if err != nil {
		return "", nil, err
	}
	if n != now.Size() {
		return "", nil, errors.New("changed size while it was read")
	}
	var then fs.FileInfo
	if after {
		if then, err = f.Stat(); err != nil {
			return "", nil, err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), then, nil
}

// sameFile is os.SameFile that also compares an lstat the walk took
// itself (readDirStat) by device and inode.
func sameFile(a, b fs.FileInfo) bool {
	if os.SameFile(a, b) {
		return true
	}
	ka, ok := keyOf(a)
	kb, ok2 := keyOf(b)
	return ok && ok2 && ka.dev == kb.dev && ka.ino == kb.ino
}

// WalkContent walks the tree at root on the filesystem (lstat, symlinks
// never followed) and returns every entry below it, hashed as git blobs in
// format: regular files by their raw bytes, symlinks by their target. The
// tree's own .git file is skipped. Directories in prune (slash-separated,
// relative) are listed but not entered: they are a checked-out submodule,
// or already reported whole. Files in reported (already reported by git
// status, so the tree is kept anyway) are listed but not read. An entry
// that cannot be read is returned with Err set; a directory that cannot be
// read is not entered.
func WalkContent(root string, format gitfiles.ObjectFormat, prune, reported map[string]bool) []machine.DiskEntry {
	return walkContent(root, format, prune, reported, nil)
}

// walkContent is WalkContent taking regular files' blob ids from hashes
// (a tree's content hash cache) when set.
func walkContent(root string, format gitfiles.ObjectFormat, prune, reported map[string]bool, hashes *treeHashes) []machine.DiskEntry {
	return walkContentNested(root, format, prune, reported, hashes, nil)
}

// walkContentNested is walkContent also finding, when nested is set, every
// nested .git on the way (nestedScan), pruned directories included.
func walkContentNested(root string, format gitfiles.ObjectFormat, prune, reported map[string]bool, hashes *treeHashes, nested *nestedScan) []machine.DiskEntry {
	return walkContentWith(root, format, prune, reported, hashes, nested, nil)
}

// walkContentWith is walkContentNested that, with strict set, stops at the
// first entry strict says is not HEAD's (knownClean's walk).
func walkContentWith(root string, format gitfiles.ObjectFormat, prune, reported map[string]bool, hashes *treeHashes, nested *nestedScan, strict *strictWalk) []machine.DiskEntry {
	w := contentWalk{format: format, prune: prune, reported: reported, hashes: hashes, nested: nested, strict: strict}
	if strict != nil {
		w.out = make([]machine.DiskEntry, 0, len(strict.files)+len(strict.dirs))
	}
	fi, err := os.Lstat(root)
	if err != nil {
		nested.unreadable(root, err)
		return []machine.DiskEntry{{Path: ".", Kind: machine.EntryDir, Err: err.Error()}}
	}
	if !fi.IsDir() {
		return nil // as filepath.WalkDir: a root that is no directory holds nothing
	}
	w.dir(root, "")
	return w.out
}

// contentWalk is one walk of walkContent: what filepath.WalkDir would
// visit, in its order (each directory's entries sorted by name, a
// directory's entries right after it), with paths joined without
// cleaning (every name is one component), which a walk over thousands of
// files otherwise spends much of its time on.
type contentWalk struct {
	format          gitfiles.ObjectFormat
	prune, reported map[string]bool
	hashes          *treeHashes
	// nested, when set, collects the nested .git entries (nestedScan).
	nested *nestedScan
	// strict, when set, ends the walk at the first entry that is not
	// exactly one of HEAD's (strictWalk).
	strict *strictWalk
	out    []machine.DiskEntry
	// buf is the directory listing buffer every directory reuses.
	buf []byte
}

// dir lists the directory at abs (rel below the root, "" for the root).
// One that cannot be read is an entry with Err and is not entered.
func (w *contentWalk) dir(abs, rel string) {
	if w.buf == nil {
		w.buf = make([]byte, 32<<10)
	}
	ents, infos, errs, err := readDirStat(abs, w.buf)
	if err != nil {
		w.strict.fail()
		w.nested.unreadable(abs, err)
		if rel == "" {
			w.out = append(w.out, machine.DiskEntry{Path: ".", Kind: machine.EntryDir, Err: err.Error()})
		} else {
			w.out = append(w.out, machine.DiskEntry{Path: rel, Kind: machine.EntryOther, Err: err.Error()})
		}
		return
	}
	sep := string(os.PathSeparator)
	if strings.HasSuffix(abs, sep) {
		sep = ""
	}
	var rels []string
	if w.strict != nil {
		// A strict walk looks at every name of the directory before it
		// enters any: an entry no tracked path accounts for ends it here,
		// not after the directories that sort before it were read.
		rels = make([]string, len(ents))
		for i, d := range ents {
			rels[i] = d.Name()
			if rel != "" {
				rels[i] = rel + "/" + rels[i]
			} else if rels[i] == ".git" {
				continue
			}
			if !w.strict.mayAdmit(rels[i], d) {
				w.strict.fail()
				return
			}
		}
	}
	for i, d := range ents {
		if w.strict.failed() {
			return
		}
		name := d.Name()
		p, r := entryPath{abs, sep, name}, name
		if rels != nil {
			r = rels[i]
		} else if rel != "" {
			r = rel + "/" + name
		}
		if rel == "" && name == ".git" {
			continue // the tree's own .git, file or directory
		}
		if name == ".git" && w.nested.found(abs, d) {
			// nestedGit does not look inside a .git directory.
			n := w.nested
			w.nested = nil
			w.entry(p, r, d, infos[i], errs[i])
			w.nested = n
			continue
		}
		w.entry(p, r, d, infos[i], errs[i])
	}
}

// entryPath is an entry's absolute path in parts, joined only when it is
// needed: a file whose id the hash cache holds never needs it.
type entryPath struct{ dir, sep, name string }

func (p entryPath) String() string { return p.dir + p.sep + p.name }

// entry records the entry d at p (rel below the root), which lstat saw
// as info when its directory was listed (or could not: err), entering it
// when it is a directory not pruned.
func (w *contentWalk) entry(p entryPath, rel string, d fs.DirEntry, info fs.FileInfo, err error) {
	e := machine.DiskEntry{Path: rel}
	if !w.strict.admits(rel, d) {
		return
	}
	if err != nil {
		w.strict.fail()
		if d.IsDir() {
			w.nested.walk(p.String())
		}
		e.Kind, e.Err = machine.EntryOther, err.Error()
		w.out = append(w.out, e)
		return
	}
	switch m := info.Mode(); {
	case m.IsDir():
		e.Kind = machine.EntryDir
		w.out = append(w.out, e)
		if !w.prune[rel] {
			w.dir(p.String(), rel)
		} else {
			w.nested.walk(p.String())
		}
		return
	case m&fs.ModeSymlink != 0:
		e.Kind = machine.EntrySymlink
		if target, err := os.Readlink(p.String()); err != nil {
			e.Err = err.Error()
		} else {
			e.OID = gitfiles.BlobID(w.format, []byte(target))
		}
		w.strict.hashed(e, info.Size())
	case m.IsRegular():
		e.Kind, e.Exec = machine.EntryFile, m&0o100 != 0
		if w.reported[rel] {
			break
		}
		if oid, ok := w.hashes.cached(info); ok {
			e.OID = oid
		} else if w.hashes != nil {
			e.OID, err = w.hashes.file(p.String(), info)
		} else {
			e.OID, err = HashFile(w.format, p.String(), info)
		}
		if err != nil {
			e.Err = err.Error()
		}
		w.strict.hashed(e, info.Size())
	default:
		e.Kind = machine.EntryOther
	}
	w.out = append(w.out, e)
}

// Content accounts for every entry on disk in the tree at dir against
// HEAD, independently of git's configuration (machine.AccountContent).
//
// HEAD's listing is taken from the index (ents, from `git ls-files -s`,
// which the hidden-state check reads anyway, so no git process is added):
// status compares the index with HEAD by object id alone, so every index
// entry status does not report as changed holds exactly HEAD's mode and
// blob, and one it reports keeps the tree already. What status reports
// (changed, untracked, ignored, unmerged paths, and custody's own .env
// when envOwn) is not reported again; ignored directories and checked-out
// submodules (which the hidden-state check inspects) are not entered.
// Whatever cannot be read keeps the tree as content-unreadable.
//
// With hidden set, the hidden-state check runs too and reports every
// assume-unchanged and skip-worktree entry present on disk, so their
// content is not reported again.
//
// It also returns the build output among what status reported untracked
// or ignored (BuildOutput, with the disposable patterns of an approved
// custody.toml): machine.Assess does not count what lies below it.
func Content(dir string, st machine.Status, envOwn, hidden bool, ents []gitfiles.IndexEntry, lsErr error, disposable machine.Patterns) ([]machine.Unaccounted, []machine.DiscardedDir) {
	return ContentCached(dir, nil, "", st, envOwn, hidden, ents, lsErr, disposable)
}

// ContentCached is Content taking each regular file's blob id from cache
// (the cache file of the tree with admin key key; nil: read every file)
// when the file's lstat identity matches an entry exactly, and writing
// the entries the walk may cache back (HashCache).
func ContentCached(dir string, cache *HashCache, key string, st machine.Status, envOwn, hidden bool, ents []gitfiles.IndexEntry, lsErr error, disposable machine.Patterns) ([]machine.Unaccounted, []machine.DiscardedDir) {
	return contentCached(dir, cache, key, st, envOwn, hidden, ents, lsErr, disposable, nil)
}

// contentCached is ContentCached collecting, when nested is set, the
// nested .git entries its walk passes (nestedScan).
func contentCached(dir string, cache *HashCache, key string, st machine.Status, envOwn, hidden bool, ents []gitfiles.IndexEntry, lsErr error, disposable machine.Patterns, nested *nestedScan) ([]machine.Unaccounted, []machine.DiscardedDir) {
	un, discarded, _ := contentWalked(dir, cache, key, st, envOwn, hidden, ents, lsErr, disposable, nested, nil)
	return un, discarded
}

// contentWalked is contentCached that, with strict set, ends the walk at
// the first entry that is not exactly one of HEAD's; it reports whether
// the walk went to its end.
func contentWalked(dir string, cache *HashCache, key string, st machine.Status, envOwn, hidden bool, ents []gitfiles.IndexEntry, lsErr error, disposable machine.Patterns, nested *nestedScan, strict *strictWalk) ([]machine.Unaccounted, []machine.DiscardedDir, bool) {
	if lsErr != nil {
		return []machine.Unaccounted{{Code: machine.CodeContentUnreadable, Path: ".", Detail: "the index could not be read: " + lsErr.Error()}}, nil, true
	}
	skip := make([]string, 0, len(st.Changed)+len(st.Untracked)+len(st.Ignored)+len(st.Unmerged)+1)
	skip = append(append(append(append(skip, st.Changed...), st.Untracked...), st.Ignored...), st.Unmerged...)
	if envOwn {
		skip = append(skip, ".env")
	}
	reported := make(map[string]bool, len(skip))
	for _, p := range skip {
		reported[p] = true
	}
	prune := map[string]bool{}
	for _, p := range st.Ignored {
		if n := len(p); n > 1 && p[n-1] == '/' {
			prune[p[:n-1]] = true
		}
	}
	tracked := make([]machine.TrackedEntry, 0, len(ents))
	format := gitfiles.FormatSHA1
	for _, e := range ents {
		if f := gitfiles.FormatOf(e.OID); f != "" {
			format = f
		}
		if e.Gitlink() && hostio.Lstat(filepath.Join(dir, e.Path, ".git")).State != machine.PathAbsent {
			prune[e.Path] = true
		}
		if hidden && (e.AssumeUnchanged() || e.SkipWorktree()) {
			skip = append(skip, e.Path)
		}
		tracked = append(tracked, machine.TrackedEntry{Path: e.Path, Mode: e.Mode, OID: e.OID})
	}
	var discarded []machine.DiscardedDir
	if len(st.Untracked)+len(st.Ignored) > 0 {
		// Build output is only ever among what status reported.
		discarded = BuildOutput(dir, st, machine.NewTrackedSet(tracked), disposable)
	}
	var hashes *treeHashes
	if cache != nil {
		hashes = cache.tree(key, dir, format)
	}
	disk := walkContentWith(dir, format, prune, reported, hashes, nested, strict)
	if strict.failed() {
		// A walk that stopped early saw only part of the tree: the
		// entries of the rest stay for the walk that follows.
		hashes.keepUnvisited()
	}
	hashes.save()
	if strict.failed() {
		return nil, nil, false
	}
	return machine.AccountContent(disk, tracked, skip), discarded, true
}
