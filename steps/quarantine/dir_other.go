//go:build !(linux && (amd64 || arm64))

package quarantine

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
)

// qdir is a directory of a quarantine by its path: where a descriptor
// cannot be held for every directory (dir_linux.go), each use
// lstats the path first and requires the directory the check listed
// (device and inode, where the system gives them). What is deleted is
// then named by path, after the deletion checked each file's directory
// by path too.
type qdir struct {
	path string
	id   [2]uint64
}

// openQuarantineRoot observes the quarantine at path (no symlink
// followed) and returns what lstat says of it.
func openQuarantineRoot(path string) (qdir, fs.FileInfo, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return qdir{}, nil, err
	}
	if !fi.IsDir() {
		return qdir{}, nil, &fs.PathError{Op: "open", Path: path, Err: errNotTheDir}
	}
	pi := hostio.Lstat(path)
	return qdir{path: path, id: [2]uint64{pi.Dev, pi.Ino}}, fi, nil
}

// sub is d's directory name, which the check saw as fi, when it is still
// a directory and (where the system gives identities) still that one.
func (d qdir) sub(name string, fi fs.FileInfo) (qdir, error) {
	p := filepath.Join(d.path, name)
	pi := hostio.Lstat(p)
	if pi.State != machine.PathPresent || !pi.IsDir || pi.IsSymlink || !fi.IsDir() {
		return qdir{}, &fs.PathError{Op: "open", Path: p, Err: errNotTheDir}
	}
	return qdir{path: p, id: [2]uint64{pi.Dev, pi.Ino}}, nil
}

// stat is lstat of d's entry name (the deletion checks d's path first).
func (d qdir) stat(name string) (fs.FileInfo, error) {
	return os.Lstat(filepath.Join(d.path, name))
}

// still requires d's path to be the directory it was when opened.
func (d qdir) still() error {
	pi := hostio.Lstat(d.path)
	if pi.State != machine.PathPresent || !pi.IsDir || pi.IsSymlink || [2]uint64{pi.Dev, pi.Ino} != d.id {
		return &fs.PathError{Op: "open", Path: d.path, Err: errNotTheDir}
	}
	return nil
}

// unlink deletes d's entry name (a file: os.Remove of a non-empty
// directory fails).
func (d qdir) unlink(name string) error {
	return os.Remove(filepath.Join(d.path, name))
}

// rename renames d's entry from to to. Here a rename may replace what is
// at to, so it is refused (errRenameUnsupported) and the deletion names
// the file itself.
func (d qdir) rename(string, string) error { return errRenameUnsupported }

// rmdir deletes d's entry name when it is an empty directory (never a
// file put in its place).
func (d qdir) rmdir(name string) error {
	p := filepath.Join(d.path, name)
	if err := syscall.Rmdir(p); err != nil {
		return &fs.PathError{Op: "remove", Path: p, Err: err}
	}
	return nil
}

// close does nothing: no descriptor is held.
func (d qdir) close() {}

// list reads d's entries, sorted by name, each with its inode number where
// the system gives one (0 elsewhere).
func (d qdir) list() ([]qent, error) {
	if err := d.still(); err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(d.path)
	if err != nil {
		return nil, err
	}
	out := make([]qent, len(ents))
	for i, e := range ents {
		out[i] = qent{name: e.Name(), ino: hostio.Lstat(filepath.Join(d.path, e.Name())).Ino}
	}
	return out, nil
}

// qdirBudget: paths hold nothing open.
func qdirBudget() int { return 1 << 30 }

// sameAside reports whether now is the file before described (never
// asked here: nothing is renamed aside).
func sameAside(before, now fs.FileInfo) bool {
	return os.SameFile(before, now) && before.Size() == now.Size() && before.ModTime().Equal(now.ModTime())
}

// devIno is the device and inode of what fi describes, where the system
// gives them.
func devIno(fi fs.FileInfo) ([2]uint64, bool) {
	return [2]uint64{}, false
}
