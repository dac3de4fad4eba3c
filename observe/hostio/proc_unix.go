//go:build unix

package hostio

import (
	"errors"
	"syscall"
)

// ProcessExists reports whether pid names a process (running, stopped or
// a zombie), asking the kernel with signal 0: it needs no /proc. An error
// means unknown, and callers guarding an intent treat it as alive.
func ProcessExists(pid int) (bool, error) {
	if pid <= 0 {
		return false, nil
	}
	switch err := syscall.Kill(pid, 0); {
	case err == nil, errors.Is(err, syscall.EPERM):
		return true, nil
	case errors.Is(err, syscall.ESRCH):
		return false, nil
	default:
		return false, err
	}
}

// ProcessAlive reports whether pid names a running process.
func ProcessAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// SignalGroup sends sig to every process of the process group pgid (sig 0
// only asks whether the group has members).
func SignalGroup(pgid int, sig syscall.Signal) error {
	if pgid <= 1 {
		return syscall.EINVAL
	}
	return syscall.Kill(-pgid, sig)
}
