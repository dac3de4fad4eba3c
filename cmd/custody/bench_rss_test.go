//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

// peakRSS runs custody with args once under GNU time and returns its peak
// resident set size in bytes, 0 when /usr/bin/time is not there. The
// rusage of a child Go starts cannot say it: the child shares the test
// binary's memory until it execs, and Linux carries that high-water mark
// into the child's maxrss; time forks its own small copy first.
func peakRSS(b *testing.B, dir string, env []string, args ...string) int64 {
	b.Helper()
	if _, err := os.Stat("/usr/bin/time"); err != nil {
		return 0
	}
	out := filepath.Join(b.TempDir(), "rss")
	cmd := exec.Command("/usr/bin/time", append([]string{"-f", "%M", "-o", out, clitest.Bin()}, args...)...)
	cmd.Dir, cmd.Env = dir, env
	_ = cmd.Run() // the caller checks the exit code on its timed runs
	v, err := os.ReadFile(out)
	if err != nil {
		b.Fatalf("/usr/bin/time: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(v)), "\n")
	kib, err := strconv.ParseInt(lines[len(lines)-1], 10, 64)
	if err != nil {
		b.Fatalf("/usr/bin/time wrote %q", v)
	}
	return kib << 10
}
