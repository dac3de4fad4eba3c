//go:build unix

package observe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/custody-sh/custody/observe/hostio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func sh(script string) hostio.Cmd { return hostio.Cmd{Args: []string{"sh", "-c", script}} }

func TestRunOutput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		name         string
		runner       hostio.Runner
		cmd          hostio.Cmd
		stdout, errs string
	}{
		{name: "streams", cmd: sh("printf out; printf err >&2"), stdout: "out", errs: "err"},
		{name: "no output", cmd: hostio.Cmd{Args: []string{"true"}}},
		{name: "arguments are not split", cmd: hostio.Cmd{Args: []string{"printf", "%s|", "a b", "$HOME", "*"}}, stdout: "a b|$HOME|*|"},
		{name: "stdin", cmd: hostio.Cmd{Args: []string{"cat"}, Stdin: []byte("in\x00put")}, stdout: "in\x00put"},
		{name: "dir", cmd: hostio.Cmd{Args: []string{"pwd", "-P"}, Dir: dir}, stdout: evalSymlinks(t, dir) + "\n"},
		{name: "cmd env", cmd: hostio.Cmd{Args: []string{"sh", "-c", `printf %s "$CUSTODY_T"`}, Env: []string{"CUSTODY_T=1"}}, stdout: "1"},
		{
			name:   "runner env replaces the process's",
			runner: hostio.Runner{Env: []string{"CUSTODY_A=a"}},
			cmd:    hostio.Cmd{Args: []string{"sh", "-c", `printf %s "$CUSTODY_A$CUSTODY_B$HOME"`}, Env: []string{"CUSTODY_B=b"}},
			stdout: "ab",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := tt.runner.Run(context.Background(), tt.cmd)
			if err != nil {
				t.Fatalf("Run(%s): %v", tt.cmd, err)
			}
			if string(res.Stdout) != tt.stdout || string(res.Stderr) != tt.errs || res.ExitCode != 0 {
				t.Errorf("Run(%s) = stdout %q stderr %q exit %d; want %q %q 0", tt.cmd, res.Stdout, res.Stderr, res.ExitCode, tt.stdout, tt.errs)
			}
		})
	}
}

func evalSymlinks(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRunExitError(t *testing.T) {
	t.Parallel()
	c := sh("echo partial; echo boom >&2; echo more >&2; exit 3")
	res, err := new(hostio.Runner).Run(context.Background(), c)
	var ee *hostio.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("Run = %v, want an *ExitError", err)
	}
	if ee.Code != 3 || ee.Stderr != "boom\nmore\n" || ee.Cmd.String() != c.String() {
		t.Errorf("ExitError = %+v, want code 3 and the stderr", ee)
	}
	if res.ExitCode != 3 || string(res.Stdout) != "partial\n" {
		t.Errorf("Result = exit %d stdout %q; want 3 and what it printed", res.ExitCode, res.Stdout)
	}
	// The message is one line: the command, the code and one line of
	// stderr.
	if msg := err.Error(); strings.Contains(msg, "\n") ||
		!(strings.HasSuffix(msg, ": exit 3: boom") || strings.HasSuffix(msg, ": exit 3: more")) {
		t.Errorf("ExitError message %q, want the exit code and a line of stderr", msg)
	}
	if _, err := new(hostio.Runner).Run(context.Background(), sh("exit 1")); err == nil || !strings.Contains(err.Error(), "no message") {
		t.Errorf("silent exit 1: %v", err)
	}
}

func TestRunFailsToStart(t *testing.T) {
	t.Parallel()
	for _, c := range []hostio.Cmd{{}, {Args: []string{filepath.Join(t.TempDir(), "no-such-program")}}, {Args: []string{"true"}, Dir: "/no/such/dir"}} {
		_, err := new(hostio.Runner).Run(context.Background(), c)
		var ee *hostio.ExitError
		if err == nil || errors.As(err, &ee) {
			t.Errorf("Run(%q) = %v, want an error that is not an *ExitError", c.Args, err)
		}
	}
}

// pidGone reports whether pid no longer runs: no /proc entry, or a zombie
// (killed, not yet reaped by whichever process adopted it).
func pidGone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// The state is the field after the command, which ends with the last ')'.
	rest := b[bytes.LastIndexByte(b, ')')+1:]
	fields := strings.Fields(string(rest))
	return len(fields) > 0 && (fields[0] == "Z" || fields[0] == "X")
}

// waitGone polls up to 2s for pid to be gone.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for !pidGone(pid) {
		if time.Now().After(deadline) {
			t.Errorf("pid %d outlived its command", pid)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// killAfter makes sure a test never leaves pid behind, whatever the runner
// did.
func killAfter(t *testing.T, pid int) {
	t.Cleanup(func() {
		if p, err := os.FindProcess(pid); err == nil && !pidGone(pid) {
			_ = p.Kill()
		}
	})
}

func readPid(t *testing.T, b []byte) int {
	t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		t.Fatalf("no pid in %q", b)
	}
	killAfter(t, pid)
	return pid
}

func TestRunTimeout(t *testing.T) {
	t.Parallel()
	pidfile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	// The shell waits on a background sleep: the deadline kills the whole
	// group, not just the shell.
	_, err := (&hostio.Runner{Grace: 200 * time.Millisecond}).Run(ctx, withArg(sh(`sleep 30 & echo $! > "$0"; wait`+"\n"+`echo survived`), pidfile))
	took := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Run past its deadline = %v, want an error wrapping context.DeadlineExceeded", err)
	}
	if took > 2*time.Second {
		t.Errorf("Run took %s with a 200ms deadline", took)
	}
	waitGone(t, readPid(t, mustRead(t, pidfile)))

	// A plain sleep, as the brief puts it.
	ctx2, cancel2 := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel2()
	start = time.Now()
	if _, err := new(hostio.Runner).Run(ctx2, hostio.Cmd{Args: []string{"sleep", "30"}}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("sleep 30 past its deadline = %v, want context.DeadlineExceeded", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("sleep 30 with a 100ms deadline took %s", took)
	}
}

func TestRunCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := new(hostio.Runner).Run(ctx, hostio.Cmd{Args: []string{"true"}}); !errors.Is(err, context.Canceled) {
		t.Errorf("Run with a cancelled context = %v, want context.Canceled", err)
	}
}

// withArg appends an argument; for sh -c it becomes $0.
func withArg(c hostio.Cmd, a string) hostio.Cmd {
	c.Args = append(append([]string(nil), c.Args...), a)
	return c
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRunKillsLeftovers: a descendant that detached from the output pipes
// is killed once the command exits and the grace is over.
func TestRunKillsLeftovers(t *testing.T) {
	t.Parallel()
	pidfile := filepath.Join(t.TempDir(), "pid")
	r := &hostio.Runner{Grace: 200 * time.Millisecond}
	start := time.Now()
	res, err := r.Run(context.Background(), withArg(sh(`sleep 30 </dev/null >/dev/null 2>&1 & echo $! > "$0"`), pidfile))
	took := time.Since(start)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	pid := readPid(t, mustRead(t, pidfile))
	if took > r.Grace+time.Second {
		t.Errorf("Run took %s with a grace of %s", took, r.Grace)
	}
	waitGone(t, pid)
}

// TestRunLeftoverHoldingStdout: a descendant that keeps the stdout pipe
// open must not hold Run past the grace, and is killed.
func TestRunLeftoverHoldingStdout(t *testing.T) {
	t.Parallel()
	r := &hostio.Runner{Grace: 200 * time.Millisecond}
	start := time.Now()
	res, err := r.Run(context.Background(), sh(`sleep 30 & echo $!`))
	took := time.Since(start)
	if err != nil {
		t.Errorf("Run = %v, want success: the command itself exited 0", err)
	}
	pid := readPid(t, res.Stdout)
	if took > r.Grace+time.Second {
		t.Errorf("Run took %s with a grace of %s", took, r.Grace)
	}
	waitGone(t, pid)
}

func TestRunOutputBound(t *testing.T) {
	t.Parallel()
	r := &hostio.Runner{MaxOutput: 1000}
	for _, tt := range []struct {
		name    string
		cmd     hostio.Cmd
		tooMuch bool
	}{
		{"stdout at the bound", sh("head -c 1000 /dev/zero"), false},
		{"stdout over", sh("head -c 5000 /dev/zero"), true},
		{"stdout one over", sh("head -c 1001 /dev/zero"), true},
		{"stderr over", sh("head -c 5000 /dev/zero >&2"), true},
		{"stdout over in small writes", sh("i=0; while [ $i -lt 300 ]; do printf 0123456789; i=$((i+1)); done"), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := r.Run(context.Background(), tt.cmd)
			if got := errors.Is(err, hostio.ErrOutputTooLarge); got != tt.tooMuch {
				t.Fatalf("Run = %v; ErrOutputTooLarge %t, want %t", err, got, tt.tooMuch)
			}
			if len(res.Stdout) > r.MaxOutput || len(res.Stderr) > r.MaxOutput {
				t.Errorf("captured %d and %d bytes past a bound of %d", len(res.Stdout), len(res.Stderr), r.MaxOutput)
			}
			if tt.tooMuch && len(res.Stdout)+len(res.Stderr) != r.MaxOutput {
				t.Errorf("kept %d+%d bytes, want the first %d", len(res.Stdout), len(res.Stderr), r.MaxOutput)
			}
		})
	}
}

func TestRunTrace(t *testing.T) {
	t.Parallel()
	var trace bytes.Buffer
	r := &hostio.Runner{Trace: &trace}
	if _, err := r.Run(context.Background(), hostio.Cmd{Args: []string{"echo", "hello", "--x"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(context.Background(), hostio.Cmd{Args: []string{"false"}}); err == nil {
		t.Fatal("false succeeded")
	}
	if got, want := trace.String(), "+ echo hello --x\n+ false\n"; got != want {
		t.Errorf("trace = %q, want %q", got, want)
	}
}

// TestRunDefaultDeadline: a command whose context has no deadline still
// ends at the runner's deadline, its whole group killed.
func TestRunDefaultDeadline(t *testing.T) {
	t.Parallel()
	r := hostio.Runner{Deadline: 200 * time.Millisecond, Grace: 50 * time.Millisecond}
	start := time.Now()
	_, err := r.Run(context.Background(), sh("sleep 30"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Run(sleep 30) = %v, want a deadline error", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Run took %s past a 200ms deadline", d)
	}
}

// TestRunOnStart: OnStart sees the child's pid, which leads its own
// process group, before the child is waited for; an OnStart error kills
// the group and is returned.
func TestRunOnStart(t *testing.T) {
	t.Parallel()
	var r hostio.Runner
	dir := t.TempDir()
	var seen int
	c := sh(`echo $$ > "$D/pid"; sleep 0.2; echo done > "$D/done"`)
	c.Env = []string{"D=" + dir}
	c.OnStart = func(pid int) error {
		seen = pid
		if pgid, err := syscall.Getpgid(pid); err != nil || pgid != pid {
			return fmt.Errorf("pgid of %d = %d, %v; want its own group", pid, pgid, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "done")); err == nil {
			return errors.New("OnStart called after the command finished")
		}
		return nil
	}
	if _, err := r.Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "pid"))
	if strings.TrimSpace(string(b)) != strconv.Itoa(seen) {
		t.Errorf("OnStart saw pid %d, the child was %s", seen, b)
	}

	stop := errors.New("no intent")
	c = sh(`sleep 0.3; echo ran > "$D/late"`)
	c.Env = []string{"D=" + dir}
	c.OnStart = func(int) error { return stop }
	if _, err := r.Run(context.Background(), c); !errors.Is(err, stop) {
		t.Fatalf("Run with a failing OnStart = %v, want its error", err)
	}
	time.Sleep(500 * time.Millisecond)
	if _, err := os.Stat(filepath.Join(dir, "late")); err == nil {
		t.Errorf("the command ran on after OnStart failed")
	}
}

// TestRunOnStartGate: a command with OnStart does nothing before OnStart
// returns (it waits at the gate), runs once OnStart succeeds with no extra
// descriptor, and never runs when OnStart fails; the same holds when the
// starter dies without opening the gate (end of file).
func TestRunOnStartGate(t *testing.T) {
	t.Parallel()
	var r hostio.Runner
	dir := t.TempDir()
	c := sh(`echo ran >> "$D/ran"; if [ -e /proc/$$/fd/3 ]; then echo open > "$D/fd3"; fi`)
	c.Env = []string{"D=" + dir}
	c.OnStart = func(int) error {
		time.Sleep(300 * time.Millisecond)
		if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
			return errors.New("the command ran before OnStart returned")
		}
		return nil
	}
	if _, err := r.Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "ran")); err != nil || string(b) != "ran\n" {
		t.Errorf("the command did not run once after the gate opened: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "fd3")); err == nil {
		t.Errorf("the command kept the gate's descriptor 3")
	}

	failed := filepath.Join(t.TempDir(), "ran")
	c = sh(`echo ran > "$F"`)
	c.Env = []string{"F=" + failed}
	c.OnStart = func(int) error { return errors.New("not recorded") }
	if _, err := r.Run(context.Background(), c); err == nil {
		t.Fatal("Run with a failing OnStart succeeded")
	}
	time.Sleep(200 * time.Millisecond)
	if _, err := os.Stat(failed); err == nil {
		t.Errorf("the command ran although OnStart failed")
	}

	// The gate itself: end of file on descriptor 3 runs nothing.
	eof := filepath.Join(t.TempDir(), "ran")
	gate := exec.Command("/bin/sh", "-c", hostio.StartGate, "custody-gate", "/bin/sh", "-c", `echo ran > "$F"`)
	gate.Env = []string{"F=" + eof}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	gate.ExtraFiles = []*os.File{pr}
	if err := gate.Start(); err != nil {
		t.Fatal(err)
	}
	pr.Close()
	pw.Close()
	if err := gate.Wait(); err == nil {
		t.Errorf("the gate exited 0 on end of file")
	}
	if _, err := os.Stat(eof); err == nil {
		t.Errorf("the gate ran its command on end of file")
	}
}
