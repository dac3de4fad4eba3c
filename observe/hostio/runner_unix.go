//go:build unix

package hostio

import (
	"os/exec"
	"syscall"
	"time"
)

// runnableHere is nil: commands run in their own sessions here.
func runnableHere() error { return nil }

// newSessionAttr starts a command in a new session: its own process group
// (killed as a whole) and no controlling terminal.
func newSessionAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// killGroup sends sig to cmd's whole process group.
func killGroup(cmd *exec.Cmd, sig syscall.Signal) error {
	if cmd.Process == nil {
		return nil
	}
	return syscall.Kill(-cmd.Process.Pid, sig)
}

// reapGroup gives what remains in the process group pgid a bounded grace
// to exit, then kills it. A group whose members have all exited, zombies
// left for their parent or init to collect, is done; it is sent SIGKILL
// all the same, which zombies ignore, so that a member forked while the
// process table was read cannot outlive the command.
func reapGroup(pgid int, grace time.Duration) {
	if syscall.Kill(-pgid, 0) != nil {
		return // the group is gone, zombies and all: its id may be anyone's now
	}
	deadline := time.Now().Add(grace)
	for groupRunning(pgid) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}
