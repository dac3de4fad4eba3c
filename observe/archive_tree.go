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
)

// TreeFile is one file or symbolic link of a tree as it is on disk, read
// without filters: Mode is git's (100644, 100755 or 120000) and OID the
// blob id of its raw bytes (a link's target).
type TreeFile struct {
	Path string
	Mode string
	OID  string
	Size int64
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
func ScanTree(root string, format ObjectFormat) (TreeScan, error) {
	return ScanTreeLeaving(root, format, nil)
}

// ScanTreeLeaving is ScanTree leaving out the directories leave names
// (slash-separated, relative to root: build output an archive does not
// hold). A left-out directory is not entered, listed or hashed; the
// directory holding it still counts as holding something.
func ScanTreeLeaving(root string, format ObjectFormat, leave []string) (TreeScan, error) {
	s := TreeScan{Root: root}
	left := make(map[string]bool, len(leave))
	for _, p := range leave {
		left[p] = true
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
				s.Files = append(s.Files, TreeFile{Path: p, Mode: "120000", OID: BlobID(format, []byte(target)), Size: int64(len(target)), abs: abs})
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
				s.Files = append(s.Files, TreeFile{Path: p, Mode: mode, OID: oid, Size: fi.Size(), abs: abs})
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

// WriteBlobs writes every file of s as a loose object into objects (an
// object directory), raw bytes, no filters. An object already there is
// kept. Each file is re-hashed as it is written: one that changed since
// the scan is an error.
func (s TreeScan) WriteBlobs(objects string, format ObjectFormat) error {
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
		if got := BlobID(format, data); got != f.OID {
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
				hdr.Typeflag, hdr.Name = tar.TypeDir, p+"/"
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

// ExtractImage extracts a tar image made by ImageNested into dir, which
// it creates. Every name must stay below dir (machine.TreePathSafe in
// spirit: no absolute name, no "..").
func ExtractImage(r io.Reader, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read image: %w", err)
		}
		name := strings.TrimSuffix(hdr.Name, "/")
		if name == "" || path.IsAbs(name) || path.Clean(name) != name || name == ".." || strings.HasPrefix(name, "../") {
			return fmt.Errorf("image entry %q leaves %s", hdr.Name, dir)
		}
		dst := filepath.Join(dir, filepath.FromSlash(name))
		if p := symlinkAbove(dir, dst); p != "" {
			return fmt.Errorf("image entry %q lies below the symlink %s; a written file would leave %s", hdr.Name, p, dir)
		}
		mode := fs.FileMode(hdr.Mode).Perm()
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.Mkdir(dst, 0o700); err != nil && !os.IsExist(err) {
				return err
			}
			if fi, err := os.Lstat(dst); err != nil || !fi.IsDir() {
				return fmt.Errorf("image entry %q is a directory, but %s is not one", hdr.Name, dst)
			}
			defer os.Chmod(dst, mode) // after its contents are written
		case tar.TypeSymlink:
			if err := os.Symlink(hdr.Linkname, dst); err != nil {
				return err
			}
		case tar.TypeReg:
			f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
			if err := os.Chmod(dst, mode); err != nil {
				return err
			}
		default:
			return fmt.Errorf("image entry %q has type %c, which no image holds", hdr.Name, hdr.Typeflag)
		}
	}
}

// symlinkAbove is the first directory between dir (exclusive) and dst
// (exclusive) that is a symlink, or "": an image that made one and then
// names an entry below it would write through it.
func symlinkAbove(dir, dst string) string {
	rel, err := filepath.Rel(dir, filepath.Dir(dst))
	if err != nil || rel == "." {
		return ""
	}
	p := dir
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		p = filepath.Join(p, part)
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return p
		}
	}
	return ""
}
