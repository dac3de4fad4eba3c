//go:build unix

package store

import (
	"errors"
	"os"
	"syscall"
)

// oNoFollow makes an open fail on a symlink at the final component.
const oNoFollow = syscall.O_NOFOLLOW

// lockNow takes f's exclusive advisory lock without waiting; an error when
// another process holds it.
func lockNow(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) }

// sharedLockNow tries to take f's shared advisory lock without waiting:
// held false while another process holds the exclusive one.
func sharedLockNow(f *os.File) (held bool, err error) {
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}
