//go:build failpoint

package store

import (
	"os"
	"syscall"
)

// failpoint kills the process with SIGKILL when CUSTODY_FAILPOINT names
// point. It exists only in builds with the failpoint tag; Failpoints lists
// the points.
func failpoint(point string) {
	if os.Getenv("CUSTODY_FAILPOINT") == point {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
}
