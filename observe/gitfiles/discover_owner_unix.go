//go:build unix

package gitfiles

import (
	"io/fs"
	"syscall"
)

// owner returns fi's device and owner, ok false where the platform gives
// neither.
func owner(fi fs.FileInfo) (dev uint64, uid int, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return uint64(st.Dev), int(st.Uid), true
}
