package store

import (
	bolt "go.etcd.io/bbolt"
	"golang.org/x/sys/unix"
)

// dropMapped returns what drops the pages of tx's database that the
// process has touched from its memory (madvise MADV_DONTNEED on bbolt's
// shared, read-only mapping of the file): they are read again from the
// page cache when touched, and every slice tx handed out stays valid. A
// read of every entry of a journal of millions touches the whole file;
// dropped as it goes, what it holds mapped is bounded by what it read
// since the last drop.
func dropMapped(tx *bolt.Tx) func() {
	info := tx.DB().Info()
	size := uintptr(tx.Size())
	if info == nil || info.Data == 0 || size == 0 {
		return func() {}
	}
	return func() { _, _, _ = unix.Syscall(unix.SYS_MADVISE, info.Data, size, unix.MADV_DONTNEED) }
}
