//go:build unix

package hostio

import (
	"fmt"
	"io/fs"
	"syscall"
)

// IdentityOf stats path, following symlinks, and returns its identity.
func IdentityOf(path string) (Identity, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return Identity{}, fmt.Errorf("stat %s: %w", path, err)
	}
	return Identity{Dev: uint64(st.Dev), Ino: st.Ino}, nil
}

// DevIno is the device and inode of what fi describes.
func DevIno(fi fs.FileInfo) (dev, ino uint64, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return uint64(st.Dev), st.Ino, true
}
