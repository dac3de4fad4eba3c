//go:build failpoint

package store

import (
	"os"
	"path/filepath"
	"syscall"
	"time"
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

// pause holds the process at point when CUSTODY_PAUSE names it, as
// steps/failpoint.Pause does (the store sits below steps): it creates
// $CUSTODY_PAUSE_DIR/paused, then waits (up to a minute) until
// $CUSTODY_PAUSE_DIR/go exists. It exists only in builds with the
// failpoint tag; PausePoints lists the points.
func pause(point string) {
	dir := os.Getenv("CUSTODY_PAUSE_DIR")
	if os.Getenv("CUSTODY_PAUSE") != point || dir == "" {
		return
	}
	_ = os.WriteFile(filepath.Join(dir, "paused"), []byte(point+"\n"), 0o644)
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "go")); err == nil {
			return
		}
	}
}
