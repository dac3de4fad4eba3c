package hostio

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// ParentPID returns the parent of pid, from the kernel's process table.
func ParentPID(pid int) (int, error) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return 0, fmt.Errorf("process %d: %w", pid, err)
	}
	if kp.Proc.P_pid != int32(pid) {
		return 0, fmt.Errorf("process %d: not in the process table", pid)
	}
	return int(kp.Eproc.Ppid), nil
}

// ProcessStart returns an opaque token of when pid started (its start time
// in microseconds since the epoch, from the kernel's process table), or 0
// where that cannot be read. Two readings are equal exactly when they name
// the same process, not a later one that reuses the pid.
func ProcessStart(pid int) uint64 {
	if pid <= 0 {
		return 0
	}
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || kp.Proc.P_pid != int32(pid) {
		return 0
	}
	t := kp.Proc.P_starttime
	return uint64(t.Sec)*1_000_000 + uint64(t.Usec)
}
