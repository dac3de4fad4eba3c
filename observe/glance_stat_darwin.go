//go:build darwin

package observe

import (
	"io/fs"
	"syscall"

	"github.com/custody-sh/custody/observe/gitfiles"
)

// statMatches reports whether info, a file's lstat, gives exactly the stat
// data sd the index records for it (each field as git keeps it, the low 32
// bits), and the mode the entry has.
func statMatches(sd gitfiles.StatData, info fs.FileInfo) bool {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	return sd.CtimeSec == uint32(st.Ctimespec.Sec) && sd.CtimeNsec == uint32(st.Ctimespec.Nsec) &&
		sd.MtimeSec == uint32(st.Mtimespec.Sec) && sd.MtimeNsec == uint32(st.Mtimespec.Nsec) &&
		sd.Dev == uint32(st.Dev) && sd.Ino == uint32(st.Ino) &&
		sd.UID == st.Uid && sd.GID == st.Gid && sd.Size == uint32(st.Size) &&
		modeMatches(sd.Mode, info.Mode())
}

// statFromIndexReadable is true where custody compares stat data itself.
const statFromIndexReadable = true
