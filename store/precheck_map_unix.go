//go:build unix

package store

import (
	"os"
	"syscall"
)

// filePages returns the first n bytes of f to walk, what releases them,
// and what drops the pages walked so far from the process's memory (nil
// when there is nothing to drop). On unix they are a read-only shared
// mapping of the whole file, whatever its size, so walking every page
// costs neither a copy nor a system call per page (a hook opens the file
// on every agent prompt, and a state file of 10,000 records is tens of
// megabytes); drop (MADV_DONTNEED, on Linux) keeps the walk's resident memory
// bounded, since a page dropped from a shared file mapping is read again
// from the page cache, the same bytes, when touched. Where mapping fails,
// the bytes are read at once (wholeFile), or nil (the walk then reads page
// by page). A mapped file truncated under the walk faults; precheck turns
// that into an error (walkMapped).
func filePages(f *os.File, n uint64) ([]byte, func(), func()) {
	if n == 0 || n > maxMapped {
		return nil, func() {}, nil
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(n), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return wholeFile(f, n), func() {}, nil
	}
	return data, func() { _ = syscall.Munmap(data) }, dropPages(data)
}

// maxMapped bounds the state file precheck maps: past it (more than the
// address space a 32-bit process has to give) the walk reads page by
// page.
const maxMapped = 1 << 30
