package archive

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/steps/beneath"
)

// treeEntry is one line of ls-tree -r -l -z.
type treeEntry struct {
	mode, typ, oid, path string
	size                 int64
}

// listTree lists every entry of tree with its size, paths as git holds
// them (bytes, unquoted).
func listTree(git func([]byte, []string, ...string) ([]byte, error), tree string) ([]treeEntry, error) {
	out, err := git(nil, nil, "ls-tree", "-r", "-l", "-z", "--full-tree", tree)
	if err != nil {
		return nil, fmt.Errorf("restore: list %s: %w", tree, err)
	}
	var ents []treeEntry
	for _, rec := range bytes.Split(bytes.TrimSuffix(out, []byte{0}), []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		meta, p, ok := strings.Cut(string(rec), "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 4 {
			return nil, fmt.Errorf("restore: malformed ls-tree line %q", rec)
		}
		size, _ := strconv.ParseInt(f[3], 10, 64) // "-" for a gitlink
		ents = append(ents, treeEntry{mode: f[0], typ: f[1], oid: f[2], path: p, size: size})
	}
	return ents, nil
}

// treeWriter writes a restore's tree below its target, every write
// through root, and remembers each directory it made with the bits it
// gets once everything below it is written.
type treeWriter struct {
	root *beneath.Root
	// modes is nil for an archive that records none.
	modes              *machine.ArchiveModes
	file, exec, dirDef uint32
	byPath             map[string]uint32
	// dirs are the directories to chmod at the end, with their bits.
	dirs map[string]uint32
	// made is the mode a directory is made with: 0700 while the restore
	// runs when modes are recorded (each gets its own at the end), else
	// 0755 under the umask, as restores before modes were recorded did.
	made fs.FileMode
}

// newTreeWriter returns a writer into root giving back ms (nil: none
// recorded). The manifest was parsed, so ms's modes parse.
func newTreeWriter(root *beneath.Root, ms *machine.ArchiveModes) *treeWriter {
	w := &treeWriter{root: root, modes: ms, file: 0o644, exec: 0o755, dirs: map[string]uint32{}, byPath: map[string]uint32{}, made: 0o755}
	if ms != nil {
		w.made = 0o700
		w.file, _ = machine.ParseMode(ms.File)
		w.exec, _ = machine.ParseMode(ms.Executable)
		w.dirDef, _ = machine.ParseMode(ms.Directory)
		for _, e := range ms.Entries {
			w.byPath[e.Path], _ = machine.ParseMode(e.Mode)
		}
	}
	root.Parents = w.made
	return w
}

// noteDirs records every directory above p (and p itself when self) that
// has no bits yet, with the bits the manifest records for it. Without
// recorded modes, it records none.
func (w *treeWriter) noteDirs(p string, self bool) {
	if w.modes == nil {
		return
	}
	d := p
	if !self {
		d = path.Dir(p)
	}
	for ; d != "."; d = path.Dir(d) {
		if _, ok := w.dirs[d]; ok {
			return
		}
		m, ok := w.byPath[d]
		if !ok {
			m = w.dirDef
		}
		w.dirs[d] = m
	}
}

// mkdir makes the directory p of the tree (an empty one, a submodule's,
// a nested repository's root).
func (w *treeWriter) mkdir(p string) error {
	if err := w.root.MkdirAll(p, w.made); err != nil {
		return err
	}
	w.noteDirs(p, true)
	return nil
}

// fileMode is the mode the file p of git mode gitMode gets.
func (w *treeWriter) fileMode(p, gitMode string) uint32 {
	if m, ok := w.byPath[p]; ok && w.modes != nil {
		return m
	}
	if gitMode == "100755" {
		return w.exec
	}
	return w.file
}

// materialize writes every entry of the tree from its blob, raw: no
// filter, no eol conversion, no attribute is consulted. It returns how
// many files and links it wrote.
func (w *treeWriter) materialize(git func([]byte, []string, ...string) ([]byte, error), ents []treeEntry) (int, error) {
	written := 0
	for start := 0; start < len(ents); {
		end, total := start, int64(0)
		var in bytes.Buffer
		for end < len(ents) && (end == start || total+ents[end].size < restoreChunk) {
			if ents[end].typ == "blob" {
				in.WriteString(ents[end].oid + "\n")
				total += ents[end].size
			}
			end++
		}
		var blobs []byte
		if in.Len() > 0 {
			var err error
			if blobs, err = git(in.Bytes(), nil, "cat-file", "--batch"); err != nil {
				return written, fmt.Errorf("restore: read blobs: %w", err)
			}
		}
		br := bufio.NewReader(bytes.NewReader(blobs))
		for _, en := range ents[start:end] {
			if en.typ != "blob" {
				// A gitlink: the submodule's directory, empty.
				if err := w.mkdir(en.path); err != nil {
					return written, err
				}
				continue
			}
			data, err := readBatchBlob(br, en.oid)
			if err != nil {
				return written, err
			}
			if en.mode == "120000" {
				err = w.root.Symlink(string(data), en.path)
			} else {
				err = w.root.WriteFile(en.path, data, beneath.FileMode(w.fileMode(en.path, en.mode)))
			}
			if err != nil {
				return written, fmt.Errorf("restore %s: %w", en.path, err)
			}
			w.noteDirs(en.path, false)
			written++
		}
		start = end
	}
	return written, nil
}

// extract writes the nested repository imaged in the file image at its
// root nested: every directory, file and link of the image, each
// directory given its image's bits at the end.
func (w *treeWriter) extract(image, nested string) error {
	if err := w.mkdir(nested); err != nil {
		return err
	}
	f, err := os.Open(image)
	if err != nil {
		return err
	}
	defer f.Close()
	return observe.ReadImage(f, func(e machine.ImageEntry, linkname string, content io.Reader) error {
		p := nested + "/" + e.Name
		switch e.Kind {
		case "dir":
			if err := w.root.MkdirAll(p, 0o700); err != nil {
				return err
			}
			w.dirs[p] = e.Mode
			return nil
		case "symlink":
			return w.root.Symlink(linkname, p)
		case "file":
			out, err := w.root.Create(p, beneath.FileMode(e.Mode&0o777))
			if err != nil {
				return err
			}
			_, err = io.Copy(out, content)
			if cerr := out.Close(); err == nil {
				err = cerr
			}
			return err
		}
		// CheckRestoreLayout refused the image before anything was
		// written; this is the same image read again.
		return fmt.Errorf("image entry %q is %s, which no restore writes", e.Name, e.Kind)
	})
}

// chmodDirs gives every directory it made its bits, the deepest first (so
// a directory closed to its owner is closed last), then the target its
// recorded root bits. It returns the directories whose bits the system
// narrowed.
func (w *treeWriter) chmodDirs() ([]string, error) {
	paths := make([]string, 0, len(w.dirs))
	for p := range w.dirs {
		paths = append(paths, p)
	}
	slices.SortFunc(paths, func(a, b string) int {
		if da, db := strings.Count(a, "/"), strings.Count(b, "/"); da != db {
			return db - da
		}
		return strings.Compare(a, b)
	})
	var narrowed []string
	set := func(p string, u uint32) error {
		want := beneath.FileMode(u)
		got, err := w.root.ChmodDir(p, want)
		if err != nil {
			return err
		}
		if got != want {
			narrowed = append(narrowed, fmt.Sprintf("%s (%s, recorded %s)", p, machine.FormatMode(uint32(got.Perm())|setgidSticky(got)), machine.FormatMode(u)))
		}
		return nil
	}
	for _, p := range paths {
		if err := set(p, w.dirs[p]); err != nil {
			return narrowed, err
		}
	}
	if w.modes != nil {
		u, _ := machine.ParseMode(w.modes.Root)
		if err := set(".", u); err != nil {
			return narrowed, err
		}
	}
	return narrowed, nil
}

// setgidSticky is m's setgid and sticky bits in their unix places.
func setgidSticky(m fs.FileMode) uint32 {
	var u uint32
	if m&fs.ModeSetgid != 0 {
		u |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		u |= 0o1000
	}
	return u
}

// readBatchBlob reads one "<oid> blob <size>\n<data>\n" of cat-file --batch.
func readBatchBlob(br *bufio.Reader, oid string) ([]byte, error) {
	hdr, err := br.ReadString('\n')
	if err != nil {
		return nil, fmt.Errorf("restore: blob %s: %w", oid, err)
	}
	f := strings.Fields(hdr)
	if len(f) != 3 || f[0] != oid || f[1] != "blob" {
		return nil, fmt.Errorf("restore: blob %s: unexpected %q", oid, strings.TrimSpace(hdr))
	}
	n, err := strconv.Atoi(f[2])
	if err != nil {
		return nil, err
	}
	data := make([]byte, n+1)
	if _, err := io.ReadFull(br, data); err != nil {
		return nil, fmt.Errorf("restore: blob %s: %w", oid, err)
	}
	return data[:n], nil
}
