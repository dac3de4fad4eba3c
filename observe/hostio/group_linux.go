package hostio

import (
	"errors"
	"io/fs"
	"os"
	"strconv"
	"syscall"
)

// groupRunning reports whether a process of group pgid is still running.
// A zombie is not: it has exited and waits only to be collected, by its
// parent or, orphaned, by init, which on some machines (a container's own
// init, a supervisor that reaps on a timer) takes its time; no grace
// hurries it, and no signal reaches it. kill(-pgid, 0) counts zombies, so
// when it finds the group the process table is read for one member that
// is not a zombie. A member that cannot be read or parsed counts as
// running.
func groupRunning(pgid int) bool {
	if syscall.Kill(-pgid, 0) != nil {
		return false
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
			continue // it exited while the table was read
		}
		if err != nil {
			return true
		}
		st, err := ParseProcStat(b)
		if err != nil {
			return true
		}
		if st.Group == pgid && st.State != 'Z' {
			return true
		}
	}
	return false
}
