//go:build unix

package store

import (
	"os"
	"syscall"
)

// oNoFollow makes an open fail on a symlink at the final component.
const oNoFollow = syscall.O_NOFOLLOW

// lockNow takes f's exclusive advisory lock without waiting; an error when
// another process holds it.
func lockNow(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) }
