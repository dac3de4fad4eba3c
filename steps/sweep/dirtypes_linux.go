package sweep

import (
	"encoding/binary"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// dirTypes lists the directory rel of root: each name with its type, as
// the directory's entries give it (getdents' d_type), without a stat of
// any entry. ok is false when the directory cannot be read, or a type is
// not given (a file system that leaves d_type unknown): then the caller
// must look on disk.
func dirTypes(root *os.Root, rel string) (map[string]fs.FileMode, bool) {
	// A directory only, and without waiting: a FIFO put in a
	// directory's place would otherwise hold the open until a writer
	// came.
	f, err := root.OpenFile(rel, os.O_RDONLY|unix.O_DIRECTORY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	conn, err := f.SyscallConn()
	if err != nil {
		return nil, false
	}
	out := map[string]fs.FileMode{}
	ok := true
	buf := make([]byte, 16<<10)
	cerr := conn.Read(func(fd uintptr) bool {
		for ok {
			n, err := unix.Getdents(int(fd), buf)
			if err == unix.EINTR {
				continue
			}
			if err != nil || n < 0 {
				ok = false
				return true
			}
			if n == 0 {
				return true
			}
			ok = parseDirents(buf[:n], out)
		}
		return true
	})
	return out, ok && cerr == nil
}

// parseDirents adds the entries of getdents' records in b (struct
// linux_dirent64: inode, offset, record length, type, name) to out, "."
// and ".." left out. It reports false for a record it cannot read and for
// a type it is not given.
func parseDirents(b []byte, out map[string]fs.FileMode) bool {
	for len(b) > 0 {
		if len(b) < 19 {
			return false
		}
		reclen := int(binary.NativeEndian.Uint16(b[16:18]))
		if reclen < 19 || reclen > len(b) {
			return false
		}
		typ, name := b[18], b[19:reclen]
		for i, c := range name {
			if c == 0 {
				name = name[:i]
				break
			}
		}
		b = b[reclen:]
		if s := string(name); s != "." && s != ".." {
			mode, known := direntMode(typ)
			if !known {
				return false
			}
			out[s] = mode
		}
	}
	return true
}

// direntMode is the file type of a d_type, false for DT_UNKNOWN.
func direntMode(t byte) (fs.FileMode, bool) {
	switch t {
	case unix.DT_REG:
		return 0, true
	case unix.DT_DIR:
		return fs.ModeDir, true
	case unix.DT_LNK:
		return fs.ModeSymlink, true
	case unix.DT_FIFO:
		return fs.ModeNamedPipe, true
	case unix.DT_SOCK:
		return fs.ModeSocket, true
	case unix.DT_CHR:
		return fs.ModeDevice | fs.ModeCharDevice, true
	case unix.DT_BLK:
		return fs.ModeDevice, true
	}
	return 0, false
}
