//go:build unix

package resource

import (
	"os"
	"syscall"
)

// tryLock takes f's exclusive advisory lock without waiting; an error
// when another process holds it.
func tryLock(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) }
