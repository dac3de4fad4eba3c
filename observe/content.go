package observe

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/custody-sh/custody/machine"
)

// ObjectFormat is a repository's object hash: "sha1" or "sha256".
type ObjectFormat string

// The object formats git supports.
const (
	FormatSHA1   ObjectFormat = "sha1"
	FormatSHA256 ObjectFormat = "sha256"
)

// FormatOf returns the object format whose hex ids are as long as oid, or
// "" for any other length.
func FormatOf(oid string) ObjectFormat {
	switch len(oid) {
	case 40:
		return FormatSHA1
	case 64:
		return FormatSHA256
	}
	return ""
}

// BlobID returns the git blob id of data: the hash of "blob <len>\0" and
// the bytes, in the given object format.
func BlobID(format ObjectFormat, data []byte) string {
	h := newHash(format)
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

func newHash(format ObjectFormat) hash.Hash {
	if format == FormatSHA256 {
		return sha256.New()
	}
	return sha1.New()
}

// HashFile returns the blob id of the regular file at p, which lstat saw
// as info: it is opened without following a symlink and without blocking
// on a FIFO, and must still be the same regular file of the same size
// when read, or it is an error.
func HashFile(format ObjectFormat, p string, info fs.FileInfo) (string, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|oNoFollow|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	now, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !now.Mode().IsRegular() || !os.SameFile(info, now) {
		return "", errors.New("changed while it was read")
	}
	h := newHash(format)
	h.Write([]byte("blob " + strconv.FormatInt(now.Size(), 10) + "\x00"))
	// A buffer the file's size (at most 32 KiB) instead of io.Copy's 32 KiB
	// for every small file: hashing a tree is mostly small files.
	n, err := io.CopyBuffer(h, struct{ io.Reader }{f}, make([]byte, min(now.Size()+1, 32<<10)))
	if err != nil {
		return "", err
	}
	if n != now.Size() {
		return "", errors.New("changed size while it was read")
	}
	return hex.EncodeToString(h.Sum(nil)), nil
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
func WalkContent(root string, format ObjectFormat, prune, reported map[string]bool) []machine.DiskEntry {
	var out []machine.DiskEntry
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if p == root {
			if err != nil {
				out = append(out, machine.DiskEntry{Path: ".", Kind: machine.EntryDir, Err: err.Error()})
			}
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rel == ".git" {
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		e := machine.DiskEntry{Path: rel}
		if err != nil {
			e.Kind, e.Err = machine.EntryOther, err.Error()
			out = append(out, e)
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			e.Kind, e.Err = machine.EntryOther, err.Error()
			out = append(out, e)
			return nil
		}
		switch m := info.Mode(); {
		case m.IsDir():
			e.Kind = machine.EntryDir
			out = append(out, e)
			if prune[rel] {
				return fs.SkipDir
			}
			return nil
		case m&fs.ModeSymlink != 0:
			e.Kind = machine.EntrySymlink
			if target, err := os.Readlink(p); err != nil {
				e.Err = err.Error()
			} else {
				e.OID = BlobID(format, []byte(target))
			}
		case m.IsRegular():
			e.Kind, e.Exec = machine.EntryFile, m&0o100 != 0
			if reported[rel] {
				break
			}
			if e.OID, err = HashFile(format, p, info); err != nil {
				e.Err = err.Error()
			}
		default:
			e.Kind = machine.EntryOther
		}
		out = append(out, e)
		return nil
	})
	return out
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
func Content(dir string, st machine.Status, envOwn, hidden bool, ents []IndexEntry, lsErr error, disposable machine.Patterns) ([]machine.Unaccounted, []machine.DiscardedDir) {
	if lsErr != nil {
		return []machine.Unaccounted{{Code: machine.CodeContentUnreadable, Path: ".", Detail: "the index could not be read: " + lsErr.Error()}}, nil
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
	format := FormatSHA1
	for _, e := range ents {
		if f := FormatOf(e.OID); f != "" {
			format = f
		}
		if e.Gitlink() && Lstat(filepath.Join(dir, e.Path, ".git")).State != machine.PathAbsent {
			prune[e.Path] = true
		}
		if hidden && (e.AssumeUnchanged() || e.SkipWorktree()) {
			skip = append(skip, e.Path)
		}
		tracked = append(tracked, machine.TrackedEntry{Path: e.Path, Mode: e.Mode, OID: e.OID})
	}
	discarded := BuildOutput(dir, st, machine.NewTrackedSet(tracked), disposable)
	return machine.AccountContent(WalkContent(dir, format, prune, reported), tracked, skip), discarded
}
