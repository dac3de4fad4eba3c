package hostio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/custody-sh/custody/machine"
)

// Cmd is one external command. Args[0] is the program; arguments are passed
// as they are, never through a shell.
type Cmd struct {
	Dir   string
	Args  []string
	Env   []string // added to the runner's environment
	Stdin []byte
	// OnStart, when set, is called with the child's pid (which is also its
	// process group id) after it started and before Run waits for it, so
	// a caller can record the group durably before the command acts. An
	// error from OnStart kills the group, and Run returns that error.
	OnStart func(pid int) error
}

// String renders the command for traces and error messages.
func (c Cmd) String() string { return strings.Join(c.Args, " ") }

// Quoted renders the command as a shell would take it back, each argument
// quoted as needed (machine.QuoteArg): the form a refusal names.
func (c Cmd) Quoted() string {
	q := make([]string, len(c.Args))
	for i, a := range c.Args {
		q[i] = machine.QuoteArg(a)
	}
	return strings.Join(q, " ")
}

// Result is what a command printed and how it ended.
type Result struct {
	Stdout   []byte
	Stderr   []byte
	ExitCode int
}

// ExitError is returned when a command ran and exited non-zero.
type ExitError struct {
	Cmd    Cmd
	Code   int
	Stderr string
}

// Error says which command failed, its exit code and git's main line.
func (e *ExitError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = "no message"
	}
	return fmt.Sprintf("%s: exit %d: %s", e.Cmd, e.Code, MainLine(msg))
}

// MainLine picks the line of a command's stderr that says what went wrong:
// Git's "fatal:" or "error:" line when there is one, else the last line.
func MainLine(msg string) string {
	lines := strings.Split(msg, "\n")
	for _, l := range lines {
		if strings.HasPrefix(l, "fatal:") || strings.HasPrefix(l, "error:") {
			return l
		}
	}
	return lines[len(lines)-1]
}

// Runner runs external commands. Each runs in its own process group; after
// the direct child exits, whatever it left in the group gets Grace to exit
// and is then killed, so no descendant outlives the command. Output beyond
// MaxOutput bytes per stream is dropped. The zero Runner is usable.
type Runner struct {
	// Env is the base environment (nil: inherit the process's).
	Env []string
	// Grace is how long leftovers may run after the child exits (default 2s).
	Grace time.Duration
	// MaxOutput bounds each captured stream (default 64 MiB).
	MaxOutput int
	// Trace, when set, receives each command line before it runs.
	Trace io.Writer
	// Truncate keeps the first MaxOutput bytes of a longer output instead of
	// failing with ErrOutputTooLarge (for output that is only recorded).
	Truncate bool
	// Deadline bounds a command whose context carries no deadline of its
	// own (default DefaultDeadline), so no command runs unbounded.
	Deadline time.Duration
}

// DefaultDeadline is how long a command may run when neither its context
// nor its Runner says otherwise.
const DefaultDeadline = 10 * time.Minute

// Run runs c and waits for it. A non-zero exit returns the Result and an
// *ExitError. A command still running at its deadline (its context's, or
// else the Runner's) is killed with its whole group, and Run returns a
// *TimeoutError (errors.Is ErrTimedOut); an interrupt (ctx cancelled) kills
// the group too and returns ctx's error.
func (r *Runner) Run(ctx context.Context, c Cmd) (Result, error) {
	if len(c.Args) == 0 {
		return Result{}, errors.New("observe: empty command")
	}
	if err := runnableHere(); err != nil {
		return Result{}, fmt.Errorf("%s: %w", c, err)
	}
	if r.Trace != nil {
		fmt.Fprintf(r.Trace, "+ %s\n", c)
	}
	grace := r.Grace
	if grace <= 0 {
		grace = 2 * time.Second
	}
	limit := r.MaxOutput
	if limit <= 0 {
		limit = DefaultMaxOutput
	}
	start := time.Now()
	if _, ok := ctx.Deadline(); !ok {
		d := r.Deadline
		if d <= 0 {
			d = DefaultDeadline
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	deadline, _ := ctx.Deadline()
	args := c.Args
	var gateR, gateW *os.File
	if c.OnStart != nil {
		// The command waits at a gate until OnStart has recorded its
		// group: a custody killed in between leaves a gate that reads
		// end of file, and the command never runs unrecorded.
		var err error
		if gateR, gateW, err = os.Pipe(); err != nil {
			return Result{}, fmt.Errorf("%s: %w", c, err)
		}
		defer gateR.Close()
		defer gateW.Close()
		args = append([]string{"/bin/sh", "-c", StartGate, "custody-gate"}, args...)
	}
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	if gateR != nil {
		cmd.ExtraFiles = []*os.File{gateR}
	}
	cmd.Dir = c.Dir
	if r.Env != nil || len(c.Env) > 0 {
		base := r.Env
		if base == nil {
			base = cmd.Environ()
		}
		cmd.Env = append(append([]string(nil), base...), c.Env...)
	}
	if c.Stdin != nil {
		cmd.Stdin = bytes.NewReader(c.Stdin)
	}
	stdout := &boundedBuffer{limit: limit}
	stderr := &boundedBuffer{limit: limit}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// A new session: its own process group (killed as a whole) and no
	// controlling terminal, so no ssh or credential prompt can wait on one.
	cmd.SysProcAttr = newSessionAttr()
	cmd.Cancel = func() error { return killGroup(cmd, syscall.SIGKILL) }
	// A descendant that keeps the output pipes open must not hold Wait
	// forever: after the child exits, the pipes get Grace, then close.
	cmd.WaitDelay = grace
	err := cmd.Start()
	var hookErr error
	if err == nil {
		if c.OnStart != nil {
			gateR.Close()
			if hookErr = c.OnStart(cmd.Process.Pid); hookErr == nil {
				_, hookErr = gateW.Write([]byte("go\n"))
			}
			gateW.Close()
			if hookErr != nil {
				_ = killGroup(cmd, syscall.SIGKILL)
			}
		}
		err = cmd.Wait()
	}
	if cmd.Process != nil {
		reapGroup(cmd.Process.Pid, grace)
	}
	res := Result{Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}
	if cmd.ProcessState != nil {
		res.ExitCode = cmd.ProcessState.ExitCode()
	}
	if hookErr != nil {
		return res, fmt.Errorf("%s: not run to its end: %w", c, hookErr)
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return res, &TimeoutError{Cmd: c, After: deadline.Sub(start)}
	}
	if ctx.Err() != nil {
		return res, fmt.Errorf("%s: %w", c, ctx.Err())
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return res, &ExitError{Cmd: c, Code: res.ExitCode, Stderr: string(res.Stderr)}
	}
	if errors.Is(err, exec.ErrWaitDelay) {
		err = nil
	}
	if err == nil && !r.Truncate && (stdout.over || stderr.over) {
		return res, fmt.Errorf("%s: %w (more than %d bytes)", c, ErrOutputTooLarge, limit)
	}
	if err != nil {
		return res, fmt.Errorf("%s: %w", c, err)
	}
	return res, nil
}

// StartGate is the shell that holds a command until its starter opens the
// gate on descriptor 3 with the line "go"; end of file (the starter died or
// refused) exits without running it. The command then runs in the gate's
// place (same pid, same process group), without descriptor 3.
const StartGate = `IFS= read -r gate <&3 && [ "$gate" = go ] && exec "$@" 3<&-`

// boundedBuffer keeps the first limit bytes written to it.
type boundedBuffer struct {
	buf   bytes.Buffer
	limit int
	over  bool
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	if room := b.limit - b.buf.Len(); room > 0 {
		if len(p) > room {
			b.over = true
			b.buf.Write(p[:room])
		} else {
			b.buf.Write(p)
		}
	} else if len(p) > 0 {
		b.over = true
	}
	return len(p), nil
}

func (b *boundedBuffer) Bytes() []byte { return b.buf.Bytes() }

func FirstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// DefaultMaxOutput is the output bound of a Runner that names none.
const DefaultMaxOutput = 64 << 20

// Attached is a command that shares custody's terminal, started by
// StartAttached: a pager, the one such command.
type Attached struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

// StartAttached starts c on custody's own terminal: in custody's process
// group (the terminal's foreground group, so the keys a person presses
// reach it and it may read the terminal, as a pager must), with stdout and
// stderr as given and stdin a pipe the caller writes through the returned
// Attached. Unlike Run's commands it has no deadline and nothing of it is
// captured: a person reads it and ends it, and Wait waits for them. c.Env
// is added to the runner's environment; c.Stdin and c.OnStart are not
// used. It fails when the program cannot be started.
func (r *Runner) StartAttached(c Cmd, stdout, stderr io.Writer) (*Attached, error) {
	if len(c.Args) == 0 {
		return nil, errors.New("observe: empty command")
	}
	if r.Trace != nil {
		fmt.Fprintf(r.Trace, "+ %s\n", c)
	}
	cmd := exec.Command(c.Args[0], c.Args[1:]...)
	cmd.Dir = c.Dir
	if r.Env != nil || len(c.Env) > 0 {
		base := r.Env
		if base == nil {
			base = cmd.Environ()
		}
		cmd.Env = append(append([]string(nil), base...), c.Env...)
	}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c, err)
	}
	if err := cmd.Start(); err != nil {
		in.Close()
		return nil, fmt.Errorf("%s: %w", c, err)
	}
	return &Attached{cmd: cmd, stdin: in}, nil
}

// Write writes p to the command's stdin. Once the command has ended (a
// person quit the pager) it fails with the broken pipe's error
// (syscall.EPIPE), which is no failure of custody's: what was shown was
// read as far as the person wanted.
func (a *Attached) Write(p []byte) (int, error) { return a.stdin.Write(p) }

// Wait closes the command's stdin and waits for it to end, returning its
// exit code (-1 when a signal ended it) and an error only when waiting
// failed or the command could not run to an exit code.
func (a *Attached) Wait() (int, error) {
	_ = a.stdin.Close()
	err := a.cmd.Wait()
	code := -1
	if a.cmd.ProcessState != nil {
		code = a.cmd.ProcessState.ExitCode()
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		err = nil
	}
	return code, err
}
