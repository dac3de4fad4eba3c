package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"golang.org/x/sys/unix"
)

// escapeSeq matches one terminal escape sequence.
var escapeSeq = regexp.MustCompile("\033\\[[0-9;]*[A-Za-z]")

// listOnTerminal runs custody list in r with stdout on a pseudo-terminal
// of cols columns and the extra environment, and returns what the
// terminal showed, line endings as written (the terminal's \r\n made \n).
func listOnTerminal(t *testing.T, r *fixtures.Repo, cols uint16, env ...string) string {
	t.Helper()
	m, term := openPTY(t)
	if err := unix.IoctlSetWinsize(int(term.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 40, Col: cols}); err != nil {
		t.Skipf("cannot size the pseudo-terminal: %v", err)
	}
	cmd := exec.Command(clitest.Bin(), "list")
	cmd.Dir, cmd.Env = r.Dir, append(r.Env(), env...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = term, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("list: %v\n%s", err, stderr.String())
	}
	return strings.ReplaceAll(readAvailable(t, m, "\n"), "\r\n", "\n")
}

// TestListOnATerminal: on a terminal list colours the states and the
// words (and nothing else) where escapes are allowed, fits the terminal's
// width (or COLUMNS), and prints no escape under TERM=dumb or NO_COLOR;
// off a terminal (the scripts) it fits 80 columns and prints none.
func TestListOnATerminal(t *testing.T) {
	t.Parallel()
	r := clitest.InitSpacedRepo(t, fixtures.Options{})
	clean, _ := clitest.NewTree(t, r, "clean-tree-with-a-long-name-for-its-path")
	dirty, dirtyPath := clitest.NewTree(t, r, "dirty")
	r.WriteFile(dirtyPath, "notes.txt", "mine\n")

	got := listOnTerminal(t, r, 200, "TERM=xterm-256color")
	for _, want := range []string{"\033[32mactive\033[0m", "\033[31mdirty\033[0m"} {
		if !strings.Contains(got, want) {
			t.Errorf("list on a terminal does not colour %q:\n%q", want, got)
		}
	}
	plain := escapeSeq.ReplaceAllString(got, "")
	// active twice and dirty once, each a colour and a reset; clean is
	// not coloured.
	if n := len(escapeSeq.FindAllString(got, -1)); n != 6 {
		t.Errorf("list wrote %d escapes, want 6:\n%q", n, got)
	}
	for _, id := range []string{clean, dirty} {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(id) + `\s`).MatchString(plain) {
			t.Errorf("row of %s missing:\n%s", id, plain)
		}
	}
	if !strings.Contains(plain, "/"+clean+"\n") {
		t.Errorf("at 200 columns the path of %s is elided:\n%s", clean, plain)
	}

	for _, tt := range []struct {
		name string
		cols uint16
		env  []string
	}{
		{"COLUMNS=64 on a terminal of 200", 200, []string{"TERM=xterm-256color", "COLUMNS=64"}},
		{"a terminal of 64", 64, []string{"TERM=xterm-256color"}},
	} {
		got := escapeSeq.ReplaceAllString(listOnTerminal(t, r, tt.cols, tt.env...), "")
		sc := bufio.NewScanner(strings.NewReader(got))
		for sc.Scan() {
			if l := sc.Text(); len([]rune(l)) > 64 {
				t.Errorf("%s: line wider than 64 columns: %q", tt.name, l)
			}
		}
		if !strings.Contains(got, "…") {
			t.Errorf("%s: nothing elided:\n%s", tt.name, got)
		}
	}

	for name, env := range map[string][]string{
		"TERM=dumb":  {"TERM=dumb"},
		"no TERM":    nil,
		"NO_COLOR=1": {"TERM=xterm-256color", "NO_COLOR=1"},
	} {
		if got := listOnTerminal(t, r, 120, env...); strings.Contains(got, "\033") {
			t.Errorf("%s: list printed an escape: %q", name, got)
		}
	}
}

// TestListRowsAsTheyAreRead: on a terminal a row is printed as soon as its
// tree (and every tree before it) is read: the first tree's row is on the
// terminal while git status of the second, slowed by a clean filter, still
// runs.
func TestListRowsAsTheyAreRead(t *testing.T) {
	t.Parallel()
	r := clitest.InitSpacedRepo(t, fixtures.Options{})
	first, firstPath := clitest.NewTree(t, r, "a-first")
	_, slow := clitest.NewTree(t, r, "b-slow")
	// The first tree's index written a second after its files: list reads
	// it from git's files alone.
	time.Sleep(1100 * time.Millisecond)
	r.GitIn(firstPath, "update-index", "-q", "--refresh", "--force-write-index")
	// git status reads a file whose stat data changed through its clean
	// filter: this one sleeps.
	r.Git("config", "filter.slow.clean", "sleep 4; cat")
	if err := os.WriteFile(filepath.Join(r.Dir, ".git", "info", "attributes"), []byte("README filter=slow\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	readme := filepath.Join(slow, "README")
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(readme, later, later); err != nil {
		t.Fatal(err)
	}
	m, term := openPTY(t)
	cmd := exec.Command(clitest.Bin(), "list")
	cmd.Dir, cmd.Env = r.Dir, append(r.Env(), "TERM=dumb")
	cmd.Stdout, cmd.Stderr = term, term
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var seen bytes.Buffer
	buf := make([]byte, 4096)
	for !strings.Contains(seen.String(), first) {
		_ = m.SetReadDeadline(time.Now().Add(10 * time.Second))
		n, err := m.Read(buf)
		seen.Write(buf[:n])
		if err != nil {
			t.Fatalf("reading the terminal: %v (so far %q)", err, seen.String())
		}
	}
	select {
	case err := <-done:
		t.Errorf("list ended (%v) after %v before its first row was seen apart: %q", err, time.Since(start), seen.String())
	default:
	}
	if err := <-done; err != nil {
		t.Fatalf("list: %v", err)
	}
	rest := readAvailable(t, m, "\n")
	if !strings.Contains(rest, "b-slow") {
		t.Errorf("the slow tree's row never came: %q", seen.String()+rest)
	}
}
