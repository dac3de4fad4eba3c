//go:build unix

package writable

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// access asks whether this process may write path (access(2), W_OK): on a
// read-only mount the answer is EROFS, even for root.
func access(path string) error {
	for {
		err := unix.Access(path, unix.W_OK)
		if err != syscall.EINTR {
			return err
		}
	}
}
