package sweep

import (
	"io/fs"
	"syscall"
	"time"
)

// identityOf is fi's identity: its mode, size, modification time, inode
// and change time (what a write, a rename or a chmod moves).
func identityOf(fi fs.FileInfo) identity {
	id := identity{mode: fi.Mode(), size: fi.Size(), mtime: fi.ModTime()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id.ino = st.Ino
		id.ctime = time.Unix(st.Ctim.Sec, st.Ctim.Nsec)
	}
	return id
}
