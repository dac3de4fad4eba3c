//go:build linux && (amd64 || arm64)

package observe

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/hostio"
	"golang.org/x/sys/unix"
)

// readDirStat lists the directory at abs as os.ReadDir does (sorted by
// name) and lstats every entry as os.Lstat of abs/name would, but relative
// to the open directory: the kernel resolves one component per entry
// instead of the whole path, which on a tree of thousands of files is most
// of a walk's system time. buf is getdents' buffer, reused from one
// directory to the next. infos[i] is entry i's lstat, or errs[i] why it
// could not be taken (an error as os.Lstat words it). The directory is
// closed before it returns, so a walk holds one descriptor at a time.
func readDirStat(abs string, buf []byte) (ents []fs.DirEntry, infos []fs.FileInfo, errs []error, err error) {
	fd, err := openDir(abs)
	if err != nil {
		return nil, nil, nil, &fs.PathError{Op: "open", Path: abs, Err: err}
	}
	defer unix.Close(fd)
	ds, err := readDirents(fd, buf)
	if err != nil {
		return nil, nil, nil, &fs.PathError{Op: "readdirent", Path: abs, Err: err}
	}
	slices.SortFunc(ds, func(a, b dirent) int { return strings.Compare(a.name, b.name) })
	sep := "/"
	if strings.HasSuffix(abs, "/") {
		sep = ""
	}
	ents, infos, errs = make([]fs.DirEntry, len(ds)), make([]fs.FileInfo, len(ds)), make([]error, len(ds))
	sts := make([]statInfo, len(ds)) // one allocation for the directory
	var st unix.Stat_t
	for i := range ds {
		d := &ds[i]
		if err := fstatat(fd, d, &st); err != nil {
			errs[i] = &fs.PathError{Op: "lstat", Path: abs + sep + d.name, Err: err}
			d.err = errs[i]
		} else {
			si := &sts[i]
			si.fill(d.name, &st)
			infos[i], d.info = si, si
			if d.typ == unknownType {
				d.typ = si.Mode().Type()
			}
		}
		if d.typ == unknownType {
			d.typ = fs.ModeIrregular
		}
		ents[i] = d
	}
	return ents, infos, errs, nil
}

// openDir opens the directory at abs for listing, retrying an interrupted
// open as os does.
func openDir(abs string) (int, error) {
	for {
		fd, err := unix.Open(abs, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// fstatat lstats the entry d of the directory fd, retrying an
// interrupted call. d's name is NUL-terminated where it lies
// (readDirents), so it is passed to the kernel without a copy.
func fstatat(fd int, d *dirent, st *unix.Stat_t) error {
	for {
		_, _, errno := unix.Syscall6(unix.SYS_NEWFSTATAT, uintptr(fd), uintptr(d.z), uintptr(unsafe.Pointer(st)), unix.AT_SYMLINK_NOFOLLOW, 0, 0)
		switch errno {
		case 0:
			return nil
		case unix.EINTR:
			continue
		}
		return errno
	}
}

// unknownType marks a dirent whose d_type the filesystem did not fill.
const unknownType = fs.FileMode(1<<32 - 1)

// readDirents reads every entry of the directory fd ("." and ".." left
// out) with getdents64, in batches as large as buf.
func readDirents(fd int, buf []byte) ([]dirent, error) {
	type at struct {
		off, n int
		typ    fs.FileMode
	}
	ats := make([]at, 0, 64)
	// Every name, each followed by its NUL, in one block the names are
	// slices of: one allocation for the directory, and each name can be
	// handed to fstatat as it is.
	arena := make([]byte, 0, 2048)
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			break
		}
		err = EachDirent(buf[:n], func(_ uint64, typ byte, name []byte) {
			ats = append(ats, at{off: len(arena), n: len(name), typ: direntType(typ)})
			arena = append(append(arena, name...), 0)
		})
		if err != nil {
			return nil, err
		}
	}
	if len(ats) == 0 {
		return nil, nil
	}
	names := unsafe.String(unsafe.SliceData(arena), len(arena)) // arena is not written again
	out := make([]dirent, len(ats))
	for i, a := range ats {
		out[i] = dirent{name: names[a.off : a.off+a.n], typ: a.typ, z: unsafe.Add(unsafe.Pointer(unsafe.StringData(names)), a.off)}
	}
	return out, nil
}

// EachDirent calls f with the inode number, d_type and name of every
// entry but "." and ".." in b, what one getdents64 read; a record that
// does not fit is unix.EIO.
func EachDirent(b []byte, f func(ino uint64, typ byte, name []byte)) error {
	for len(b) >= 19 {
		// struct linux_dirent64: ino u64, off s64, reclen u16, type u8, name.
		reclen := int(binary.NativeEndian.Uint16(b[16:18]))
		if reclen < 19 || reclen > len(b) {
			return unix.EIO
		}
		ino, typ, name := binary.NativeEndian.Uint64(b[0:8]), b[18], b[19:reclen]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		b = b[reclen:]
		if string(name) != "." && string(name) != ".." {
			f(ino, typ, name)
		}
	}
	return nil
}

// direntType is the type bits os gives a d_type (os/dirent_linux.go).
func direntType(t byte) fs.FileMode {
	switch t {
	case unix.DT_BLK:
		return fs.ModeDevice
	case unix.DT_CHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.DT_DIR:
		return fs.ModeDir
	case unix.DT_FIFO:
		return fs.ModeNamedPipe
	case unix.DT_LNK:
		return fs.ModeSymlink
	case unix.DT_REG:
		return 0
	case unix.DT_SOCK:
		return fs.ModeSocket
	}
	return unknownType
}

// dirent is one entry readDirents listed, as a fs.DirEntry whose Info is
// the lstat readDirStat took.
type dirent struct {
	name string
	// z is where name lies, followed by a NUL (readDirents' block).
	z    unsafe.Pointer
	typ  fs.FileMode
	info fs.FileInfo
	err  error
}

func (d *dirent) Name() string               { return d.name }
func (d *dirent) IsDir() bool                { return d.typ.IsDir() }
func (d *dirent) Type() fs.FileMode          { return d.typ }
func (d *dirent) Info() (fs.FileInfo, error) { return d.info, d.err }

// statInfo is an lstat taken by readDirStat, read as os reads its own
// (os.Lstat's FileInfo): the same mode bits, and the system's Stat_t.
type statInfo struct {
	name string
	sys  syscall.Stat_t
}

// StatOf is st, an lstat of the entry name, as the fs.FileInfo os.Lstat
// would give of it (its Sys a *syscall.Stat_t), for a stat taken relative
// to a directory.
func StatOf(name string, st *unix.Stat_t) fs.FileInfo {
	var si statInfo
	si.fill(name, st)
	return &si
}

func (s *statInfo) fill(name string, st *unix.Stat_t) {
	*s = statInfo{name: name, sys: syscall.Stat_t{
		Dev: st.Dev, Ino: st.Ino, Nlink: st.Nlink, Mode: st.Mode, Uid: st.Uid, Gid: st.Gid, Rdev: st.Rdev,
		Size: st.Size, Blksize: st.Blksize, Blocks: st.Blocks,
		Atim: syscall.Timespec{Sec: st.Atim.Sec, Nsec: st.Atim.Nsec},
		Mtim: syscall.Timespec{Sec: st.Mtim.Sec, Nsec: st.Mtim.Nsec},
		Ctim: syscall.Timespec{Sec: st.Ctim.Sec, Nsec: st.Ctim.Nsec},
	}}
}

func (s *statInfo) Name() string       { return s.name }
func (s *statInfo) Size() int64        { return s.sys.Size }
func (s *statInfo) ModTime() time.Time { return time.Unix(s.sys.Mtim.Unix()) }
func (s *statInfo) IsDir() bool        { return s.Mode().IsDir() }
func (s *statInfo) Sys() any           { return &s.sys }

// Mode is the mode os gives the same lstat (os/stat_linux.go).
func (s *statInfo) Mode() fs.FileMode { return hostio.StatMode(s.sys.Mode) }

// hashFileDirect is hashFile with plain system calls: open (no symlink
// followed, never blocking on a FIFO), fstat, read, fstat, close. An
// os.File would also register the descriptor with the runtime's poller
// and set its flags, three more calls for every file a cold walk reads.
// Its errors are worded as os words them. It always reports true (it
// read the file, or failed to).
func hashFileDirect(format gitfiles.ObjectFormat, p string, info fs.FileInfo, after bool) (string, fs.FileInfo, bool, error) {
	fd, err := openRegular(p)
	if err != nil {
		return "", nil, true, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	defer unix.Close(fd)
	now, err := fstatInfo(fd, p)
	if err != nil {
		return "", nil, true, err
	}
	if !now.Mode().IsRegular() || !sameFile(info, now) {
		return "", nil, true, errors.New("changed while it was read")
	}
	h := gitfiles.NewHash(format)
	h.Write([]byte("blob " + strconv.FormatInt(now.Size(), 10) + "\x00"))
	// A buffer the file's size (at most 32 KiB), read until the end.
	buf := make([]byte, min(now.Size()+1, 32<<10))
	var n int64
	for {
		k, err := unix.Read(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return "", nil, true, &fs.PathError{Op: "read", Path: p, Err: err}
		}
		if k <= 0 {
			break
		}
		h.Write(buf[:k])
		n += int64(k)
	}
	if n != now.Size() {
		return "", nil, true, errors.New("changed size while it was read")
	}
	var then fs.FileInfo
	if after {
		if then, err = fstatInfo(fd, p); err != nil {
			return "", nil, true, err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), then, true, nil
}

// openRegular opens p for reading as hashFileOS does, retrying an
// interrupted open.
func openRegular(p string) (int, error) {
	for {
		fd, err := unix.Open(p, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// fstatInfo is what fstat says of fd (the file at p), read as os reads it.
func fstatInfo(fd int, p string) (fs.FileInfo, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, &fs.PathError{Op: "stat", Path: p, Err: err}
	}
	si := &statInfo{}
	si.fill(filepath.Base(p), &st)
	return si, nil
}
