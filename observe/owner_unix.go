//go:build unix

package observe

import (
	"os"
	"syscall"
)

// ownedBySelf reports whether every path is owned by the effective user:
// git looks at a tree only then (or with safe.directory), so plan's
// status-free path (knownClean) needs it to agree with git status.
func ownedBySelf(paths ...string) bool {
	uid := uint32(os.Geteuid())
	for _, p := range paths {
		fi, err := os.Lstat(p)
		if err != nil {
			return false
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok || st.Uid != uid {
			return false
		}
	}
	return true
}
