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
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("cannot unlock a pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Skipf("cannot name a pseudo-terminal: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("cannot open /dev/pts/%d: %v", n, err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}

// readAvailable reads what the terminal side wrote so far; the deadline
// only keeps a broken test from hanging, it asserts nothing.
func readAvailable(t *testing.T, m *os.File) string {
	t.Helper()
	var out bytes.Buffer
	buf := make([]byte, 4096)
	for {
		_ = m.SetReadDeadline(time.Now().Add(2 * time.Second))
		n, err := m.Read(buf)
		out.Write(buf[:n])
		if err != nil || n < len(buf) && bytes.HasSuffix(out.Bytes(), []byte("\r\033[K")) {
			return out.String()
		}
	}
}

// TestProgressOnATerminal: on a terminal's stderr, apply (like plan) shows
// which item it is at on one overwritten line, on stderr only, and clears
// the line before it prints its result; stdout holds the result alone.
func TestProgressOnATerminal(t *testing.T) {
	t.Parallel()
	m, term := openPTY(t)
	a := &App{Globals: &Globals{}, Stderr: term}
	if _, ok := a.progress().(termProgress); !ok {
		t.Fatalf("stderr a terminal: progress %T, want termProgress", a.progress())
	}

	r := clitest.InitSpacedRepo(t, fixtures.Options{})
	id, _ := clitest.NewTree(t, r, "shown")
	kept, _ := rtKept(t, r)
	clitest.MustCustody(t, r, 0, "finish", id)
	plan := clitest.PlanOutside(t, r, 0)
	shown := regexp.MustCompile(`\r\033\[K1/\d+ ` + regexp.QuoteMeta(id))

	cmd := exec.Command(clitest.Bin(), "plan")
	cmd.Dir, cmd.Env = r.Dir, r.Env()
	var planOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &planOut, term
	if err := cmd.Run(); err != nil {
		t.Fatalf("plan: %v\n%s", err, planOut.String())
	}
	if got := readAvailable(t, m); !regexp.MustCompile(`\r\033\[K\d/2 `).MatchString(got) || !strings.HasSuffix(got, "\r\033[K") {
		t.Errorf("plan's progress on the terminal = %q, want its trees counted, cleared at the end", got)
	}

	cmd = exec.Command(clitest.Bin(), "apply", plan)
	cmd.Dir, cmd.Env = r.Dir, r.Env()
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, term
	if err := cmd.Run(); err != nil {
		t.Fatalf("apply: %v\n%s", err, stdout.String())
	}
	got := readAvailable(t, m)
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
