//go:build unix

package store

import (
	"os"
	"syscall"
)

// filePages returns the first n bytes of f to walk, and what releases
// them: on unix a read-only shared mapping, so walking every page costs
// neither a copy nor fresh memory (a hook opens the file on every agent
// prompt), else the bytes read at once (wholeFile), or nil when neither
// works (the walk then reads page by page). A mapped file truncated under
// the walk faults; precheck turns that into an error (walkMapped).
func filePages(f *os.File, n uint64) ([]byte, func()) {
	if n == 0 || n > maxWholeRead {
		return nil, func() {}
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(n), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return wholeFile(f, n), func() {}
	}
	return data, func() { _ = syscall.Munmap(data) }
}
