//go:build unix

package hostio_test

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/custody-sh/custody/observe/hostio"
)

// TestProcessExists asks the kernel, not /proc: this process exists, a
// child that was reaped does not.
func TestProcessExists(t *testing.T) {
	t.Parallel()
	if ok, err := hostio.ProcessExists(os.Getpid()); err != nil || !ok {
		t.Fatalf("ProcessExists(self) = %v, %v", ok, err)
	}
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	if ok, err := hostio.ProcessExists(c.Process.Pid); err != nil || ok {
		t.Fatalf("ProcessExists(reaped child %d) = %v, %v; want false", c.Process.Pid, ok, err)
	}
	if ok, err := hostio.ProcessExists(0); err != nil || ok {
		t.Fatalf("ProcessExists(0) = %v, %v; want false", ok, err)
	}
}

// TestProcessStart tells a process from a later one: the start token of a
// running process is non-zero and stable; a reaped one's is 0.
func TestProcessStart(t *testing.T) {
	t.Parallel()
	self := hostio.ProcessStart(os.Getpid())
	if self == 0 || hostio.ProcessStart(os.Getpid()) != self {
		t.Fatalf("ProcessStart(self) = %d, then %d", self, hostio.ProcessStart(os.Getpid()))
	}
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	if got := hostio.ProcessStart(c.Process.Pid); got != 0 {
		t.Fatalf("ProcessStart(reaped child) = %d; want 0", got)
	}
}

// TestSignalGroup signals a whole group, and refuses the groups that are
// not a command's (0, 1: every process, init's).
func TestSignalGroup(t *testing.T) {
	t.Parallel()
	c := exec.Command("sleep", "30")
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	if err := hostio.SignalGroup(c.Process.Pid, 0); err != nil {
		t.Fatalf("SignalGroup(%d, 0): %v", c.Process.Pid, err)
	}
	if err := hostio.SignalGroup(c.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(); err == nil {
		t.Fatal("sleep outlived SIGKILL to its group")
	}
	for _, g := range []int{0, 1, -5} {
		if err := hostio.SignalGroup(g, 0); !errors.Is(err, syscall.EINVAL) {
			t.Fatalf("SignalGroup(%d, 0) = %v; want EINVAL", g, err)
		}
	}
}

// TestUnsupportedError matches errors.ErrUnsupported and names the system.
func TestUnsupportedError(t *testing.T) {
	err := error(&hostio.UnsupportedError{What: "process groups", OS: "plan9"})
	if !errors.Is(err, errors.ErrUnsupported) {
		t.Fatal("UnsupportedError does not match errors.ErrUnsupported")
	}
	if want := "process groups are not supported on plan9; custody runs on linux and darwin"; err.Error() != want {
		t.Fatalf("Error() = %q, want %q", err, want)
	}
}

// TestParentPID reads this process's parent as the kernel knows it, and
// refuses a pid that names nothing.
func TestParentPID(t *testing.T) {
	t.Parallel()
	if got, err := hostio.ParentPID(os.Getpid()); err != nil || got != os.Getppid() {
		t.Fatalf("ParentPID(self) = %d, %v; want %d", got, err, os.Getppid())
	}
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	if got, err := hostio.ParentPID(c.Process.Pid); err == nil {
		t.Fatalf("ParentPID(reaped child) = %d, nil; want an error", got)
	}
}
