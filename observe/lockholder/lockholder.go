// Package lockholder finds the processes that hold a lock on a file, so a
// lock that times out names its real holder rather than a guess. It reads
// the kernel's own table of locks (/proc/locks on linux); elsewhere it says
// it cannot tell (ErrUnsupported). It is a leaf: it imports nothing of
// custody's, and says nothing of what the file is.
package lockholder

import (
	"bufio"
	"bytes"
	"errors"
	"strconv"
	"strings"
)

// ErrUnsupported is returned where the kernel's table of locks cannot be
// read (every system but linux, or a /proc that is not mounted).
var ErrUnsupported = errors.New("the kernel's table of file locks cannot be read here")

// Process is one process holding a lock on the file.
type Process struct {
	PID int
	// Write is true for an exclusive lock, false for a shared one.
	Write bool
	// Args is the process's command line, nil when it cannot be read (it
	// ended meanwhile, or another user's).
	Args []string
	// Exe is the executable it runs ("" when it cannot be read).
	Exe string
}

// Lock is one granted lock of the kernel's table: who holds it, how, and
// on which file (device major and minor, inode).
type Lock struct {
	PID          int
	Write        bool
	Major, Minor uint32
	Inode        uint64
}

// ParseLocks reads /proc/locks's text: one granted lock per line
// ("1: FLOCK  ADVISORY  WRITE 1234 08:02:1311 0 EOF"), a blocked waiter
// ("1: -> FLOCK ...") left out, as is a line it cannot read. The device is
// printed in hex, the inode in decimal.
func ParseLocks(b []byte) []Lock {
	var out []Lock
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 6 || !strings.HasSuffix(f[0], ":") || f[1] == "->" {
			continue
		}
		mode, pid, file := f[3], f[4], f[5]
		p, err := strconv.Atoi(pid)
		if err != nil || p <= 0 {
			continue // an open file description lock names no process (-1)
		}
		parts := strings.Split(file, ":")
		if len(parts) != 3 {
			continue
		}
		maj, err1 := strconv.ParseUint(parts[0], 16, 32)
		minor, err2 := strconv.ParseUint(parts[1], 16, 32)
		ino, err3 := strconv.ParseUint(parts[2], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			continue
		}
		out = append(out, Lock{PID: p, Write: mode == "WRITE", Major: uint32(maj), Minor: uint32(minor), Inode: ino})
	}
	return out
}
