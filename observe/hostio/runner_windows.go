package hostio

import (
	"os/exec"
	"syscall"
	"time"
)

// runnableHere refuses: windows has no process groups to run a command in
// and kill as a whole, so no descendant could be bounded.
func runnableHere() error { return Unsupported("process groups") }

// newSessionAttr has no session to ask for on windows.
func newSessionAttr() *syscall.SysProcAttr { return nil }

// killGroup kills only the command itself on windows (never reached:
// runnableHere refuses first).
func killGroup(cmd *exec.Cmd, _ syscall.Signal) error {
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Kill()
}

// reapGroup has no group to reap on windows.
func reapGroup(int, time.Duration) {}
