package safefile

import (
	"io/fs"
	"os"
	"syscall"
)

// Open opens path with flag (os.O_RDONLY, or flags that write) and perm,
// never through a symlink at the final component (the open fails with
// syscall.ELOOP; O_NOFOLLOW) and never blocking on a FIFO or device
// (O_NONBLOCK). What was opened may still be other than a regular file:
// the caller judges it (f.Stat). Where the system has no O_NOFOLLOW
// (windows), only the caller's lstat before the open and that judgement
// refuse a symlink.
func Open(path string, flag int, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(path, flag|oNoFollow|syscall.O_NONBLOCK, perm)
}
