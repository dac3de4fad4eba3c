package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal: its controller and the terminal side.
func openPTY(t *testing.T) (controller, term *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	// The ioctls go through SyscallConn, not Fd: Fd would put the
	// controller in blocking mode, where a read deadline never fires.
	rc, err := m.SyscallConn()
	if err != nil {
		t.Skipf("no raw access to a pseudo-terminal: %v", err)
	}
	var n int
	var ioErr error
	if err := rc.Control(func(fd uintptr) {
		if ioErr = unix.IoctlSetPointerInt(int(fd), unix.TIOCSPTLCK, 0); ioErr != nil {
			ioErr = fmt.Errorf("cannot unlock a pseudo-terminal: %w", ioErr)
			return
		}
		if n, ioErr = unix.IoctlGetInt(int(fd), unix.TIOCGPTN); ioErr != nil {
			ioErr = fmt.Errorf("cannot name a pseudo-terminal: %w", ioErr)
		}
	}); err != nil {
		t.Skipf("no raw access to a pseudo-terminal: %v", err)
	}
	if ioErr != nil {
		t.Skip(ioErr)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("cannot open /dev/pts/%d: %v", n, err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}

// readAvailable reads what the terminal side wrote, which ends with end.
func readAvailable(t *testing.T, m *os.File, end string) string {
	t.Helper()
	var out bytes.Buffer
	buf := make([]byte, 4096)
	for {
		// The writer has exited, but the terminal hands its bytes over in
		// pieces, later on a busy machine: once they end with end, a
		// quiet half second says they are all here; until then, wait
		// long.
		wait := 10 * time.Second
		if bytes.HasSuffix(out.Bytes(), []byte(end)) {
			wait = 500 * time.Millisecond
		}
		_ = m.SetReadDeadline(time.Now().Add(wait))
		n, err := m.Read(buf)
		out.Write(buf[:n])
		if err != nil {
			return out.String()
		}
	}
}

// ptyTerm is the environment of a terminal that takes escapes.
func ptyTerm(k string) string {
	if k == "TERM" {
		return "xterm-256color"
	}
	return ""
}

// TestProgressOnATerminal: on a terminal's stderr, apply (like plan) shows
// which item it is at on one overwritten line, on stderr only, and clears
// the line before it prints its result; stdout holds the result alone.
func TestProgressOnATerminal(t *testing.T) {
	t.Parallel()
	m, term := openPTY(t)
	a := &App{Globals: &Globals{}, Stderr: term, getenv: ptyTerm}
	if p, ok := a.progress().(*termProgress); !ok || !p.escapes {
		t.Fatalf("stderr a terminal: progress %#v, want termProgress with escapes", a.progress())
	}

	r := clitest.InitSpacedRepo(t, fixtures.Options{})
	id, _ := clitest.NewTree(t, r, "shown")
	kept, _ := rtKept(t, r)
	clitest.MustCustody(t, r, 0, "finish", id)
	plan := clitest.PlanOutside(t, r, 0)
	shown := regexp.MustCompile(`\r\033\[K1/\d+ ` + regexp.QuoteMeta(id))

	env := append(r.Env(), "TERM=xterm-256color")
	cmd := exec.Command(clitest.Bin(), "plan")
	cmd.Dir, cmd.Env = r.Dir, env
	var planOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &planOut, term
	if err := cmd.Run(); err != nil {
		t.Fatalf("plan: %v\n%s", err, planOut.String())
	}
	if got := readAvailable(t, m, "\r\033[K"); !regexp.MustCompile(`\r\033\[K\d/2 `).MatchString(got) || !strings.HasSuffix(got, "\r\033[K") {
		t.Errorf("plan's progress on the terminal = %q, want its trees counted, cleared at the end", got)
	}

	cmd = exec.Command(clitest.Bin(), "apply", plan)
	cmd.Dir, cmd.Env = r.Dir, env
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, term
	if err := cmd.Run(); err != nil {
		t.Fatalf("apply: %v\n%s", err, stdout.String())
	}
	got := readAvailable(t, m, "\r\033[K")
	if !shown.MatchString(got) || !strings.HasSuffix(got, "\r\033[K") {
		t.Errorf("apply's progress on the terminal = %q, want the line \"1/N %s\", cleared at the end", got, id)
	}
	if strings.Contains(got, kept) {
		t.Errorf("apply's progress names the kept tree %s it never acts on: %q", kept, got)
	}
	if strings.Contains(stdout.String(), "\033") || !strings.HasPrefix(stdout.String(), "removed "+id) {
		t.Errorf("apply's stdout = %q, want its result alone", stdout.String())
	}
}

// TestProgressWithoutEscapes: on a terminal that takes no escapes (TERM
// dumb or unset) or under NO_COLOR, plan still shows its progress on one
// line, overwritten with a carriage return and blanked with spaces, and
// prints no escape sequence at all.
func TestProgressWithoutEscapes(t *testing.T) {
	t.Parallel()
	r := clitest.InitSpacedRepo(t, fixtures.Options{})
	id, _ := clitest.NewTree(t, r, "shown")
	clitest.MustCustody(t, r, 0, "finish", id)
	for name, env := range map[string][]string{
		"TERM=dumb":  {"TERM=dumb"},
		"no TERM":    nil,
		"NO_COLOR=1": {"TERM=xterm-256color", "NO_COLOR=1"},
	} {
		t.Run(name, func(t *testing.T) {
			m, term := openPTY(t)
			cmd := exec.Command(clitest.Bin(), "plan")
			cmd.Dir, cmd.Env = r.Dir, append(r.Env(), env...)
			var planOut bytes.Buffer
			cmd.Stdout, cmd.Stderr = &planOut, term
			if err := cmd.Run(); err != nil {
				t.Fatalf("plan: %v\n%s", err, planOut.String())
			}
			got := readAvailable(t, m, " \r")
			if strings.Contains(got, "\033") || strings.Contains(planOut.String(), "\033") {
				t.Errorf("plan printed an escape sequence: stderr %q, stdout %q", got, planOut.String())
			}
			if !regexp.MustCompile(`\A(\r *\r)?1/1 ` + regexp.QuoteMeta(id) + `\r {5,}\r\z`).MatchString(got) {
				t.Errorf("plan's progress without escapes = %q, want \"1/1 %s\" blanked with spaces", got, id)
			}
		})
	}
}
