//go:build unix

package clitest

import (
	"os"
	"syscall"
)

// ownCacheDir reports whether dir is a directory this user owns that no
// one else may write to.
func ownCacheDir(dir string) bool {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid() && fi.Mode().Perm()&0o022 == 0
}
