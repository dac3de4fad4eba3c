package observe

import (
	"archive/tar"
	"bytes"
	"compress/zlib"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/gitfiles"
)

// TreeFile is one file or symbolic link of a tree as it is on disk, read
// without filters: Mode is git's (100644, 100755 or 120000) and OID the
// blob id of its raw bytes (a link's target).
type TreeFile struct {
	Path string
	Mode string
	OID  string
	Size int64
	// Perm is the file's permission bits as lstat gave them.
	Perm uint32
	// abs is the file's path on disk.
	abs string
}

// TreeScan is one walk of a tree on the filesystem, following no link:
// every file and link outside the nested repositories, the nested
// repositories' roots, the empty directories, and every entry no archive
// can restore (a fifo, socket or device, or one that could not be read).
type TreeScan struct {
	Root        string
	Files       []TreeFile
	Nested      []string
	EmptyDirs   []string
	Unsupported []UnsupportedEntry
	// RootMode is the root directory's mode bits (permissions, setgid,
	// sticky), and Dirs every directory walked below it (nested roots
	// included, left-out ones not) with its mode bits.
	RootMode uint32
	Dirs     []machine.ModeOf
}

// UnsupportedEntry is an entry no archive can restore: its path relative
// to the root (a directory's ends in "/") and why.
type UnsupportedEntry struct {
	Path, Why string
}

// String is "PATH (WHY)".
func (u UnsupportedEntry) String() string { return u.Path + " (" + u.Why + ")" }

// UnsupportedText lists every unsupported entry, comma-separated.
func (s TreeScan) UnsupportedText() string {
	parts := make([]string, len(s.Unsupported))
	for i, u := range s.Unsupported {
		parts[i] = u.String()
	}
	return strings.Join(parts, ", ")
}

// ScanTree walks root (a worktree) without following links and hashes
// each file's raw bytes as a blob of format. The root's own .git is not
// part of the tree; a directory below it that holds a .git entry (file,
// directory or link) is a nested repository, listed and not entered. Paths
// are slash-separated, relative to root, in byte order.
func ScanTree(root string, format gitfiles.ObjectFormat) (TreeScan, error) {
	return ScanTreeLeaving(root, format, nil)
}

// ScanTreeLeaving is ScanTree leaving out the directories leave names
// (slash-separated, relative to root: build output an archive does not
// hold). A left-out directory is not entered, listed or hashed; the
// directory holding it still counts as holding something.
func ScanTreeLeaving(root string, format gitfiles.ObjectFormat, leave []string) (TreeScan, error) {
	s := TreeScan{Root: root}
	left := make(map[string]bool, len(leave))
	for _, p := range leave {
		left[p] = true
	}
	if fi, err := os.Lstat(root); err == nil {
		s.RootMode = modeBits(fi.Mode())
	}
	var walk func(rel string) (bool, error)
	// walk reports whether the directory rel holds anything.
	walk = func(rel string) (bool, error) {
		dir := filepath.Join(root, filepath.FromSlash(rel))
		ents, err := os.ReadDir(dir)
		if err != nil {
			if rel == "" {
				return false, fmt.Errorf("read %s: %w", root, err)
			}
			s.Unsupported = append(s.Unsupported, UnsupportedEntry{rel + "/", err.Error()})
			return true, nil
		}
		slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
		if rel != "" && slices.ContainsFunc(ents, func(e fs.DirEntry) bool { return e.Name() == ".git" }) {
			s.Nested = append(s.Nested, rel)
			return true, nil
		}
		held := false
		for _, e := range ents {
			if rel == "" && e.Name() == ".git" {
				continue
			}
			p := path.Join(rel, e.Name())
			if left[p] {
				held = true
				continue
			}
			abs := filepath.Join(root, filepath.FromSlash(p))
			fi, err := os.Lstat(abs)
			if err != nil {
				s.Unsupported = append(s.Unsupported, UnsupportedEntry{p, err.Error()})
				held = true
				continue
			}
			held = true
			switch {
			case fi.IsDir():
				s.Dirs = append(s.Dirs, machine.ModeOf{Path: p, Mode: modeBits(fi.Mode())})
				sub, err := walk(p)
				if err != nil {
					return false, err
				}
				if !sub {
					s.EmptyDirs = append(s.EmptyDirs, p)
				}
			case fi.Mode()&fs.ModeSymlink != 0:
				target, err := os.Readlink(abs)
				if err != nil {
					s.Unsupported = append(s.Unsupported, UnsupportedEntry{p, err.Error()})
					continue
				}
				s.Files = append(s.Files, TreeFile{Path: p, Mode: "120000", OID: gitfiles.BlobID(format, []byte(target)), Size: int64(len(target)), abs: abs})
			case fi.Mode().IsRegular():
				oid, err := HashFile(format, abs, fi)
				if err != nil {
					s.Unsupported = append(s.Unsupported, UnsupportedEntry{p, err.Error()})
					continue
				}
				mode := "100644"
				if fi.Mode()&0o100 != 0 {
					mode = "100755"
				}
				s.Files = append(s.Files, TreeFile{Path: p, Mode: mode, OID: oid, Size: fi.Size(), Perm: modeBits(fi.Mode()), abs: abs})
			default:
				s.Unsupported = append(s.Unsupported, UnsupportedEntry{p, "a " + fi.Mode().Type().String()})
			}
		}
		return held, nil
	}
	if _, err := walk(""); err != nil {
		return s, err
	}
	slices.SortFunc(s.Files, func(a, b TreeFile) int { return strings.Compare(a.Path, b.Path) })
	return s, nil
}

// modeBits is m's permission bits with its setuid, setgid and sticky bits
// in their unix places.
func modeBits(m fs.FileMode) uint32 {
	u := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		u |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		u |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		u |= 0o1000
	}
	return u
}

// Modes lists the mode of every regular file and every directory a
// restore of the tree makes (those above its files and links, its empty
// directories and its nested repositories' roots; not one that held only
// build output left out, nor a nested repository's contents, which its
// image holds), for machine.CaptureModes.
func (s TreeScan) Modes() []machine.ModeOf {
	restored := map[string]bool{}
	mark := func(p string, self bool) {
		d := p
		if !self {
			d = path.Dir(p)
		}
		for ; d != "." && !restored[d]; d = path.Dir(d) {
			restored[d] = true
		}
	}
	out := make([]machine.ModeOf, 0, len(s.Files)+len(s.Dirs))
	for _, f := range s.Files {
		mark(f.Path, false)
		if f.Mode != "120000" {
			out = append(out, machine.ModeOf{Path: f.Path, Git: f.Mode, Mode: f.Perm})
		}
	}
	for _, d := range s.EmptyDirs {
		mark(d, true)
	}
	for _, n := range s.Nested {
		mark(n, true)
	}
	for _, d := range s.Dirs {
		if restored[d.Path] {
			out = append(out, d)
		}
	}
	return out
}

// WriteBlobs writes every file of s as a loose object into objects (an
// object directory), raw bytes, no filters. An object already there is
// kept. Each file is re-hashed as it is written: one that changed since
// the scan is an error.
func (s TreeScan) WriteBlobs(objects string, format gitfiles.ObjectFormat) error {
	var buf bytes.Buffer
	zw, err := zlib.NewWriterLevel(&buf, zlib.BestSpeed) // git's core.looseCompression
	if err != nil {
		return err
	}
	for _, f := range s.Files {
		var data []byte
		var err error
		if f.Mode == "120000" {
			var t string
			t, err = os.Readlink(f.abs)
			data = []byte(t)
		} else {
			data, err = os.ReadFile(f.abs)
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", f.abs, err)
		}
		if got := gitfiles.BlobID(format, data); got != f.OID {
			return fmt.Errorf("%s changed while it was archived (blob %s, then %s)", f.abs, f.OID, got)
		}
		if err := writeLoose(objects, f.OID, "blob", data, zw, &buf); err != nil {
			return err
		}
	}
	return nil
}

// writeLoose stores one object in objects as git does: zlib of
// "<type> <size>\x00<data>", under <2 hex>/<rest>. objects is a scratch
// object directory of custody's own, discarded whole when a capture does
// not finish, so the object is written in place, not renamed into it.
func writeLoose(objects, oid, typ string, data []byte, zw *zlib.Writer, buf *bytes.Buffer) error {
	dir := filepath.Join(objects, oid[:2])
	final := filepath.Join(dir, oid[2:])
	if _, err := os.Lstat(final); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	buf.Reset()
	zw.Reset(buf)
	_, err := fmt.Fprintf(zw, "%s %d\x00", typ, len(data))
	if err == nil {
		_, err = zw.Write(data)
	}
	if cerr := zw.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.WriteFile(final, buf.Bytes(), 0o444)
	}
	if err != nil {
		return fmt.Errorf("write object %s: %w", oid, err)
	}
	return nil
}

// IndexInfo renders s's files as `git update-index --index-info` input.
func (s TreeScan) IndexInfo() []byte {
	var b bytes.Buffer
	for _, f := range s.Files {
		fmt.Fprintf(&b, "%s %s\t%s\x00", f.Mode, f.OID, f.Path)
	}
	return b.Bytes()
}

// ImageNested writes the nested repository at root/rel as a tar image to
// w: every entry in byte order, links not followed, with modes and link
// targets and no times, owners or device numbers, so that the same tree
// always images to the same bytes. It returns the image's SHA-256, the
// nested root's fingerprint. An entry a tar cannot restore (a fifo,
// socket or device) is an error.
func ImageNested(root, rel string, w io.Writer) (string, error) {
	h := sha256.New()
	tw := tar.NewWriter(io.MultiWriter(w, h))
	base := filepath.Join(root, filepath.FromSlash(rel))
	var walk func(sub string) error
	walk = func(sub string) error {
		ents, err := os.ReadDir(filepath.Join(base, filepath.FromSlash(sub)))
		if err != nil {
			return err
		}
		slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
		for _, e := range ents {
			p := path.Join(sub, e.Name())
			abs := filepath.Join(base, filepath.FromSlash(p))
			fi, err := os.Lstat(abs)
			if err != nil {
				return err
			}
			hdr := &tar.Header{Name: p, Mode: int64(fi.Mode().Perm()), Format: tar.FormatPAX}
			switch {
			case fi.IsDir():
				// A directory keeps its setgid and sticky bits (a
				// repository shared with a group has them).
				hdr.Typeflag, hdr.Name, hdr.Mode = tar.TypeDir, p+"/", int64(modeBits(fi.Mode())&0o3777)
				if err := tw.WriteHeader(hdr); err != nil {
					return err
				}
				if err := walk(p); err != nil {
					return err
				}
			case fi.Mode()&fs.ModeSymlink != 0:
				t, err := os.Readlink(abs)
				if err != nil {
					return err
				}
				hdr.Typeflag, hdr.Linkname = tar.TypeSymlink, t
				if err := tw.WriteHeader(hdr); err != nil {
					return err
				}
			case fi.Mode().IsRegular():
				f, err := os.Open(abs)
				if err != nil {
					return err
				}
				hdr.Typeflag, hdr.Size = tar.TypeReg, fi.Size()
				err = tw.WriteHeader(hdr)
				if err == nil {
					_, err = io.Copy(tw, f)
				}
				f.Close()
				if err != nil {
					return fmt.Errorf("image %s: %w", abs, err)
				}
			default:
				return fmt.Errorf("%s is a %s, which no image can restore", abs, fi.Mode().Type())
			}
		}
		return nil
	}
	if err := walk(""); err != nil {
		return "", fmt.Errorf("image nested repository %s: %w", base, err)
	}
	if err := tw.Close(); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// NestedDigest returns the SHA-256 of the image of root/rel without
// writing it anywhere: the nested root's fingerprint as it is now.
func NestedDigest(root, rel string) (string, error) { return ImageNested(root, rel, io.Discard) }

// ReadImage reads a tar image made by ImageNested, calling each for
// every entry in order with its name (relative to the nested root, no
// trailing slash), its kind ("dir", "file", "symlink", or what else it
// is), its mode bits, its link target, and a reader of a file's content.
// It writes nothing and checks nothing: machine.CheckRestoreLayout judges
// the entries, and a restore extracts them below its own target.
func ReadImage(r io.Reader, each func(e machine.ImageEntry, linkname string, content io.Reader) error) error {
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read image: %w", err)
		}
		e := machine.ImageEntry{Name: strings.TrimSuffix(hdr.Name, "/"), Kind: imageKind(hdr.Typeflag), Mode: uint32(hdr.Mode) & 0o7777}
		if hdr.Mode < 0 || hdr.Mode > 0o7777 {
			e.Mode = 0o7777 // not a mode ImageNested writes: refused as such
		}
		if err := each(e, hdr.Linkname, tr); err != nil {
			return err
		}
	}
}

// imageKind names what a tar entry is.
func imageKind(t byte) string {
	switch t {
	case tar.TypeDir:
		return "dir"
	case tar.TypeReg:
		return "file"
	case tar.TypeSymlink:
		return "symlink"
	case tar.TypeLink:
		return "a hard link"
	case tar.TypeChar:
		return "a character device"
	case tar.TypeBlock:
		return "a block device"
	case tar.TypeFifo:
		return "a FIFO"
	}
	return fmt.Sprintf("an entry of tar type %q", t)
}
