//go:build darwin || freebsd

package writable

import (
	"golang.org/x/sys/unix"
)

// readOnlyMount reports whether the file system holding path is mounted
// read-only (statfs's MNT_RDONLY).
func readOnlyMount(path string) bool {
	if path == "" {
		return false
	}
	var s unix.Statfs_t
	if err := unix.Statfs(path, &s); err != nil {
		return false
	}
	return s.Flags&unix.MNT_RDONLY != 0
}

// mountOf is the mount point of the file system holding path, as statfs
// names it; "" when it cannot be asked.
func mountOf(path string) string {
	if path == "" {
		return ""
	}
	var s unix.Statfs_t
	if err := unix.Statfs(path, &s); err != nil {
		return ""
	}
	return unix.ByteSliceToString(s.Mntonname[:])
}
