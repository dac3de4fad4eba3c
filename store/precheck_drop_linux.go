package store

import "syscall"

// dropPages returns what drops the touched pages of the shared file
// mapping data from the process's memory (they are read again from the
// page cache when touched).
func dropPages(data []byte) func() {
	return func() { _ = syscall.Madvise(data, syscall.MADV_DONTNEED) }
}
