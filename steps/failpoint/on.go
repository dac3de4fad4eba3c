//go:build failpoint

package failpoint

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// At kills the process with SIGKILL when CUSTODY_FAILPOINT names
// point. It exists only in builds with the failpoint tag.
func At(point string) {
	if os.Getenv("CUSTODY_FAILPOINT") == point {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
}

// Pause holds the process at point when CUSTODY_PAUSE names it: it creates
// $CUSTODY_PAUSE_DIR/paused, then waits (up to a minute) until
// $CUSTODY_PAUSE_DIR/go exists. With CUSTODY_PAUSE_SKIP=N it passes the
// point its first N times (counted in $CUSTODY_PAUSE_DIR/passed) and holds
// at the next, so a test can stop a run midway through its items.
// Concurrency tests use it to stop one invocation at an exact step while
// another runs. It exists only in builds with the failpoint tag.
func Pause(point string) {
	dir := os.Getenv("CUSTODY_PAUSE_DIR")
	if os.Getenv("CUSTODY_PAUSE") != point || dir == "" {
		return
	}
	if skip, err := strconv.Atoi(os.Getenv("CUSTODY_PAUSE_SKIP")); err == nil && skip > 0 {
		count := filepath.Join(dir, "passed")
		b, _ := os.ReadFile(count)
		passed, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		if passed < skip {
			_ = os.WriteFile(count, []byte(strconv.Itoa(passed+1)+"\n"), 0o644)
			return
		}
	}
	_ = os.WriteFile(filepath.Join(dir, "paused"), []byte(point+"\n"), 0o644)
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "go")); err == nil {
			return
		}
	}
}

// Interrupted says that an interrupt took effect in this process (its
// command's context is cancelled): when CUSTODY_PAUSE_DIR is set, it
// creates $CUSTODY_PAUSE_DIR/interrupted. A test that signals a process
// held at a pause point waits for it before it lets the process go on, so
// the process goes on interrupted, never before. It exists only in builds
// with the failpoint tag.
func Interrupted() {
	if dir := os.Getenv("CUSTODY_PAUSE_DIR"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, "interrupted"), nil, 0o644)
	}
}
