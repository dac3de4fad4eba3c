//go:build linux || darwin

package sweep

import (
	"errors"
	"io/fs"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/custody-sh/custody/observe/hostio"
)

// dirFD is a directory the deletion opened, by its descriptor: each file
// in it is statted and unlinked by name there, one system call each, as
// rm unlinks.
type dirFD struct {
	f  *os.File
	fd int
}

// openDirFD opens the directory r holds.
func openDirFD(r *os.Root) (dirFD, error) {
	f, err := r.Open(".")
	if err != nil {
		return dirFD{}, err
	}
	conn, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return dirFD{}, err
	}
	fd := -1
	if err := conn.Control(func(u uintptr) { fd = int(u) }); err != nil {
		f.Close()
		return dirFD{}, err
	}
	return dirFD{f: f, fd: fd}, nil
}

// lstat is the identity of the entry name, not following a symlink.
func (d dirFD) lstat(name string) (identity, error) {
	var st unix.Stat_t
	for {
		err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return identity{}, &fs.PathError{Op: "lstat", Path: name, Err: err}
		}
		return identityOfStat(&st), nil
	}
}

// unlink removes the entry name, which must not be a directory.
func (d dirFD) unlink(name string) error {
	for {
		err := unix.Unlinkat(d.fd, name, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return &fs.PathError{Op: "unlink", Path: name, Err: err}
		}
		return nil
	}
}

// names lists the directory's names, without a stat of any.
func (d dirFD) names() ([]string, error) { return d.f.Readdirnames(-1) }

// close closes the directory.
func (d dirFD) close() { d.f.Close() }

// identityOfStat is the identity of the entry st describes, as identityOf
// gives it for os.Lstat's answer.
func identityOfStat(st *unix.Stat_t) identity {
	return identity{
		mode:  hostio.StatMode(uint32(st.Mode)),
		size:  st.Size,
		mtime: time.Unix(int64(st.Mtim.Sec), int64(st.Mtim.Nsec)),
		ctime: time.Unix(int64(st.Ctim.Sec), int64(st.Ctim.Nsec)),
		ino:   st.Ino,
	}
}
