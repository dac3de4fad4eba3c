//go:build unix && !linux

package hostio

import "syscall"

// groupRunning reports whether group pgid still has a process, zombies
// included: this system's process table is not read for their state.
func groupRunning(pgid int) bool { return syscall.Kill(-pgid, 0) == nil }
