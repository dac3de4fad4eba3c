//go:build linux && (amd64 || arm64)

package quarantine

import (
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/custody-sh/custody/observe"
)

// qdir is a directory of a quarantine held open: a descriptor opened with
// O_NOFOLLOW|O_DIRECTORY, relative to its parent's, and found by fstat to
// be the directory the check listed. Every entry is observed, read and
// deleted relative to it, so a directory swapped for a link or another
// directory is never followed: what is deleted is always an entry of the
// directory the check read.
type qdir struct {
	fd   int
	path string
	// id is the directory's device and inode, as fstat gave them.
	id [2]uint64
}

// openQuarantineRoot opens the quarantine at path (no symlink followed)
// and returns what fstat says of it.
func openQuarantineRoot(path string) (qdir, fs.FileInfo, error) {
	fd, err := openatRetry(unix.AT_FDCWD, path)
	if err != nil {
		return qdir{}, nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	d := qdir{fd: fd, path: path}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		d.close()
		return qdir{}, nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	d.id = [2]uint64{st.Dev, st.Ino}
	return d, observe.StatOf(filepath.Base(path), &st), nil
}

// openatRetry opens name relative to dirfd as a directory, never
// following a symlink, retrying an interrupted open.
func openatRetry(dirfd int, name string) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// sub opens the directory name of d, which the check saw as fi, and
// requires it to be that directory still (device and inode).
func (d qdir) sub(name string, fi fs.FileInfo) (qdir, error) {
	p := filepath.Join(d.path, name)
	fd, err := openatRetry(d.fd, name)
	if err != nil {
		return qdir{}, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	c := qdir{fd: fd, path: p}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		c.close()
		return qdir{}, &fs.PathError{Op: "stat", Path: p, Err: err}
	}
	if want, ok := devIno(fi); !ok || want != [2]uint64{st.Dev, st.Ino} {
		c.close()
		return qdir{}, &fs.PathError{Op: "open", Path: p, Err: errNotTheDir}
	}
	c.id = [2]uint64{st.Dev, st.Ino}
	return c, nil
}

// stat is lstat of d's entry name, relative to d.
func (d qdir) stat(name string) (fs.FileInfo, error) {
	var st unix.Stat_t
	for {
		err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "lstat", Path: filepath.Join(d.path, name), Err: err}
		}
		return observe.StatOf(name, &st), nil
	}
}

// unlink deletes d's entry name (never a directory).
func (d qdir) unlink(name string) error {
	if err := unix.Unlinkat(d.fd, name, 0); err != nil {
		return &fs.PathError{Op: "remove", Path: filepath.Join(d.path, name), Err: err}
	}
	return nil
}

// rename renames d's entry from to to, never over an entry there
// (errRenameUnsupported where the filesystem cannot promise that).
func (d qdir) rename(from, to string) error {
	err := unix.Renameat2(d.fd, from, d.fd, to, unix.RENAME_NOREPLACE)
	switch {
	case err == unix.EINVAL || err == unix.ENOSYS:
		return errRenameUnsupported
	case err != nil:
		return &fs.PathError{Op: "rename", Path: filepath.Join(d.path, from), Err: err}
	}
	return nil
}

// rmdir deletes d's entry name when it is an empty directory.
func (d qdir) rmdir(name string) error {
	if err := unix.Unlinkat(d.fd, name, unix.AT_REMOVEDIR); err != nil {
		return &fs.PathError{Op: "remove", Path: filepath.Join(d.path, name), Err: err}
	}
	return nil
}

// close releases d's descriptor.
func (d qdir) close() {
	if d.path != "" {
		_ = unix.Close(d.fd)
	}
}

// list reads d's entries ("." and ".." left out) from the start, each
// with the inode number the directory gives it, sorted by name.
func (d qdir) list() ([]qent, error) {
	if _, err := unix.Seek(d.fd, 0, 0); err != nil {
		return nil, &fs.PathError{Op: "readdirent", Path: d.path, Err: err}
	}
	buf := make([]byte, 32<<10)
	var out []qent
	for {
		n, err := unix.Getdents(d.fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "readdirent", Path: d.path, Err: err}
		}
		if n <= 0 {
			break
		}
		err = observe.EachDirent(buf[:n], func(ino uint64, _ byte, name []byte) {
			out = append(out, qent{name: string(name), ino: ino})
		})
		if err != nil {
			return nil, &fs.PathError{Op: "readdirent", Path: d.path, Err: err}
		}
	}
	slices.SortFunc(out, func(a, b qent) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

// qdirBudget is how many directories of one quarantine are held open at
// once: a quarter of the descriptors the process may open. A tree with
// more directories opens the others again from their parents (each
// checked again) whenever it needs them.
func qdirBudget() int {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil || lim.Cur < 256 {
		return 64
	}
	return int(min(lim.Cur/4, 1<<20))
}

// sameAside reports whether now, an lstat of a file just renamed, is the
// file before described: the same device, inode, size, modification time
// and mode (a rename changes only its ctime).
func sameAside(before, now fs.FileInfo) bool {
	a, ok := before.Sys().(*syscall.Stat_t)
	b, ok2 := now.Sys().(*syscall.Stat_t)
	return ok && ok2 && a.Dev == b.Dev && a.Ino == b.Ino && a.Size == b.Size && a.Mtim == b.Mtim && a.Mode == b.Mode
}

// devIno is the device and inode of what fi describes.
func devIno(fi fs.FileInfo) ([2]uint64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return [2]uint64{}, false
	}
	return [2]uint64{st.Dev, st.Ino}, true
}
