//go:build unix

package gitfiles

import (
	"os"
	"syscall"
)

// tryLock takes f's advisory lock, shared or exclusive, without waiting:
// an error satisfying errors.Is(err, syscall.EWOULDBLOCK) when another
// holds it.
func tryLock(f *os.File, exclusive bool) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	return syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
}

// unlockFile releases f's advisory lock.
func unlockFile(f *os.File) { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
