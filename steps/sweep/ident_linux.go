package sweep

import (
	"io/fs"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/custody-sh/custody/observe/hostio"
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

// identityOfStat is the identity of the entry st describes, as identityOf
// gives it for os.Lstat's answer.
func identityOfStat(st *unix.Stat_t) identity {
	return identity{
		mode:  hostio.StatMode(uint32(st.Mode)),
		size:  st.Size,
		mtime: time.Unix(int64(st.Mtim.Sec), int64(st.Mtim.Nsec)),
		ctime: time.Unix(int64(st.Ctim.Sec), int64(st.Ctim.Nsec)),
		ino:   st.Ino,
	}
}
