package store

import (
	"os"
	"syscall"
)

// statID returns the identity of the file fi describes, read from a
// Linux stat.
func statID(fi os.FileInfo) (fileID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{dev: uint64(st.Dev), ino: st.Ino, size: uint64(st.Size), mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}, true
}
