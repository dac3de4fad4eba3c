package hostio

import (
	"os"
	"strconv"
)

// ParentPID returns the parent of pid, from /proc/<pid>/stat.
func ParentPID(pid int) (int, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	st, err := ParseProcStat(b)
	if err != nil {
		return 0, err
	}
	return st.PPID, nil
}

// ProcessStart returns an opaque token of when pid started (its start time
// in clock ticks since boot, from /proc/<pid>/stat), or 0 where that
// cannot be read. Two readings are equal exactly when they name the same
// process, not a later one that reuses the pid.
func ProcessStart(pid int) uint64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	st, err := ParseProcStat(b)
	if err != nil {
		return 0
	}
	return st.Start
}
