package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"golang.org/x/sys/unix"
)

// onTerminal runs the custody binary in r's main checkout with stdout on
// a pseudo-terminal of rows × 80 (stderr, where progress goes, is not
// one), env added to r's environment, and returns its exit code and what
// the terminal showed (line ends as "\n"). The terminal shows it all by
// the time custody exits: custody waits for its pager.
func onTerminal(t *testing.T, r *fixtures.Repo, rows uint16, env []string, args ...string) (int, string) {
	t.Helper()
	m, term := openPTY(t)
	if err := unix.IoctlSetWinsize(int(term.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: rows, Col: 80}); err != nil {
		t.Skipf("cannot size a pseudo-terminal: %v", err)
	}
	cmd := exec.Command(clitest.Bin(), args...)
	cmd.Dir, cmd.Env = r.Dir, append(r.Env(), env...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = term, &stderr
	done := make(chan []byte)
	go func() {
		var out bytes.Buffer
		buf := make([]byte, 4096)
		for {
			_ = m.SetReadDeadline(time.Now().Add(20 * time.Second))
			n, err := m.Read(buf)
			out.Write(buf[:n])
			if err != nil {
				break
			}
			if bytes.HasSuffix(out.Bytes(), []byte("<end>\r\n")) {
				break
			}
		}
		done <- out.Bytes()
	}()
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if _, err := term.Write([]byte("<end>\n")); err != nil {
		t.Fatal(err)
	}
	out := strings.ReplaceAll(string(<-done), "\r\n", "\n")
	t.Logf("custody %s: exit %d, stderr:\n%s", strings.Join(args, " "), code, stderr.String())
	return code, strings.TrimSuffix(out, "<end>\n")
}

// pagerFleet is a repository with two finished trees to remove, so plan
// prints five lines: more than a terminal of 3 rows shows, fewer than one
// of 24.
func pagerFleet(t *testing.T) *fixtures.Repo {
	t.Helper()
	r := clitest.InitSpacedRepo(t, fixtures.Options{})
	a, _ := clitest.NewTree(t, r, "paged-a")
	b, _ := clitest.NewTree(t, r, "paged-b")
	clitest.MustCustody(t, r, 0, "finish", a, b)
	return r
}

// TestPlanPagedOnATerminal: on a terminal, a plan longer than the screen
// goes through the pager custody was asked for (CUSTODY_PAGER before
// PAGER), run by the shell with LESS=FRX unless LESS is set; the pager
// gets exactly what custody would have printed, and custody prints none of
// it itself. The exit code is the command's own. A plan that fits the
// screen, PAGER=cat, an empty CUSTODY_PAGER and --json are printed
// directly; a pager the shell cannot run is passed over (the plan is
// printed directly); a pager that quits without reading is no error.
func TestPlanPagedOnATerminal(t *testing.T) {
	t.Parallel()
	r := pagerFleet(t)
	dir := t.TempDir()
	got := filepath.Join(dir, "paged")
	env := filepath.Join(dir, "env")
	fake := "cat > " + shellQuote(got) + "; env > " + shellQuote(env) + "; echo shown-by-the-pager"
	direct := clitest.MustCustody(t, r, 0, "plan").Stdout
	if n := strings.Count(direct, "\n"); n < 4 || n > 20 {
		t.Fatalf("plan prints %d lines, want between 4 and 20 for this test:\n%s", n, direct)
	}
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			return ""
		}
		os.Remove(p)
		return string(b)
	}

	t.Run("longer than the screen", func(t *testing.T) {
		code, shown := onTerminal(t, r, 3, []string{"CUSTODY_PAGER=" + fake, "PAGER=false", "TERM=dumb"}, "plan", "--detailed-exitcode")
		if code != 2 {
			t.Errorf("paged plan --detailed-exitcode exited %d, want 2 (removals planned)", code)
		}
		if shown != "shown-by-the-pager\n" {
			t.Errorf("the terminal showed %q, want only the pager's output", shown)
		}
		if paged := read(got); paged != direct {
			t.Errorf("the pager read\n%q\nwant what plan prints\n%q", paged, direct)
		}
		if e := read(env); !strings.Contains(e, "\nLESS=FRX\n") || !strings.Contains(e, "\nLV=-c\n") {
			t.Errorf("the pager's environment lacks LESS=FRX and LV=-c:\n%s", e)
		}
	})
	t.Run("PAGER when CUSTODY_PAGER is unset, LESS kept", func(t *testing.T) {
		_, shown := onTerminal(t, r, 3, []string{"PAGER=" + fake, "LESS=-S", "TERM=dumb"}, "plan")
		if paged := read(got); shown != "shown-by-the-pager\n" || paged != direct {
			t.Errorf("with PAGER set, the terminal showed %q", shown)
		}
		if e := read(env); !strings.Contains(e, "\nLESS=-S\n") {
			t.Errorf("the pager's environment changed the person's LESS:\n%s", e)
		}
	})
	for name, env := range map[string][]string{
		"fits the screen":      {"CUSTODY_PAGER=" + fake},
		"PAGER=cat":            {"PAGER=cat"},
		"empty CUSTODY_PAGER":  {"CUSTODY_PAGER=", "PAGER=" + fake},
		"CUSTODY_PAGER=cat":    {"CUSTODY_PAGER=cat", "PAGER=" + fake},
		"pager not found":      {"CUSTODY_PAGER=no-such-pager-anywhere"},
		"pager not executable": {"CUSTODY_PAGER=" + shellQuote(dir)},
	} {
		t.Run(name, func(t *testing.T) {
			rows := uint16(3)
			if name == "fits the screen" {
				rows = 24
			}
			code, shown := onTerminal(t, r, rows, append(env, "TERM=dumb"), "plan")
			if code != 0 || !strings.HasSuffix(shown, direct) {
				t.Errorf("exit %d, the terminal showed\n%q\nwant the plan printed directly\n%q", code, shown, direct)
			}
			if paged := read(got); paged != "" {
				t.Errorf("the pager ran: it read %q", paged)
			}
		})
	}
	t.Run("--json", func(t *testing.T) {
		code, shown := onTerminal(t, r, 3, []string{"CUSTODY_PAGER=" + fake, "TERM=dumb"}, "plan", "--json")
		if paged := read(got); code != 0 || !strings.HasPrefix(shown, "{\n") || paged != "" {
			t.Errorf("plan --json on a terminal: exit %d, shown %.80q, want its envelope printed directly", code, shown)
		}
	})
	t.Run("the pager quits without reading", func(t *testing.T) {
		start := time.Now()
		code, shown := onTerminal(t, r, 3, []string{"CUSTODY_PAGER=exec 0<&-; sleep 0.2", "TERM=dumb"}, "plan")
		if code != 0 || shown != "" {
			t.Errorf("a pager that quit at once: exit %d, the terminal showed %q, want exit 0 and nothing", code, shown)
		}
		if took := time.Since(start); took > 10*time.Second {
			t.Errorf("custody took %s after its pager quit", took)
		}
	})
}

// TestColourOnATerminal: on a terminal that takes escapes, plan colours
// what goes green and what is kept yellow, apply its outcomes and show a
// record's state; under
// NO_COLOR=1, TERM=dumb or with no TERM there is no escape at all. (Off a
// terminal there is none either: output_no_escapes.txtar.)
func TestColourOnATerminal(t *testing.T) {
	t.Parallel()
	r := clitest.InitSpacedRepo(t, fixtures.Options{})
	id, _ := clitest.NewTree(t, r, "goes")
	kept, _ := rtKept(t, r)
	clitest.MustCustody(t, r, 0, "finish", id)
	for name, env := range map[string][]string{
		"xterm":      {"TERM=xterm-256color"},
		"NO_COLOR=1": {"TERM=xterm-256color", "NO_COLOR=1"},
		"TERM=dumb":  {"TERM=dumb"},
		"no TERM":    nil,
	} {
		t.Run(name, func(t *testing.T) {
			_, shown := onTerminal(t, r, 50, append(env, "CUSTODY_PAGER=cat"), "plan")
			colour := strings.Contains(shown, "\033[")
			if want := name == "xterm"; colour != want {
				t.Errorf("plan on a terminal (%s): colour %v, want %v:\n%q", name, colour, want, shown)
			}
			if name != "xterm" {
				return
			}
			for _, want := range []string{"\033[32mto remove\033[m:\n", "\033[33mkept\033[m [", "  .worktrees/" + id + "  ", "  .worktrees/" + kept + "  "} {
				if !strings.Contains(shown, want) {
					t.Errorf("plan on a terminal lacks %q:\n%q", want, shown)
				}
			}
			if strings.Contains(shown, "\\e[") {
				t.Errorf("plan escaped its own colour:\n%q", shown)
			}
			if _, shown := onTerminal(t, r, 50, append(env, "CUSTODY_PAGER=cat"), "show", kept); !strings.Contains(shown, "\nstate       \033[36mfinished\033[m\n") {
				t.Errorf("show on a terminal does not colour the state finished cyan:\n%q", shown)
			}
		})
	}
	// apply colours its outcomes: removed green.
	plan := filepath.Join(t.TempDir(), "plan.json")
	clitest.MustCustody(t, r, 0, "plan", "-o", plan)
	if _, shown := onTerminal(t, r, 50, []string{"TERM=xterm-256color"}, "apply", plan); !strings.HasPrefix(shown, "\033[32mremoved\033[m "+id+" (") {
		t.Errorf("apply on a terminal does not colour removed green:\n%q", shown)
	}
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestListPagedOnATerminal: on a terminal, a list longer than the screen
// goes through the person's pager once every tree is read, with exactly
// what list prints off a terminal at that width; one that fits the
// screen is printed directly, row by row, and no pager runs.
func TestListPagedOnATerminal(t *testing.T) {
	t.Parallel()
	r := pagerFleet(t)
	dir := t.TempDir()
	got := filepath.Join(dir, "paged")
	fake := "cat > " + shellQuote(got) + "; echo shown-by-the-pager"
	direct := clitest.MustCustody(t, r, 0, "list").Stdout
	if n := strings.Count(direct, "\n"); n < 3 || n > 20 {
		t.Fatalf("list prints %d lines, want between 3 and 20 for this test:\n%s", n, direct)
	}
	_, shown := onTerminal(t, r, 3, []string{"CUSTODY_PAGER=" + fake, "TERM=dumb", "NO_COLOR=1"}, "list")
	if shown != "shown-by-the-pager\n" {
		t.Errorf("a list longer than the screen: the terminal showed %q, want only the pager's output", shown)
	}
	if b, err := os.ReadFile(got); err != nil || string(b) != direct {
		t.Errorf("the pager read\n%q (%v)\nwant what list prints\n%q", b, err, direct)
	}
	os.Remove(got)
	_, shown = onTerminal(t, r, 40, []string{"CUSTODY_PAGER=" + fake, "TERM=dumb", "NO_COLOR=1"}, "list")
	// Printed row by row, its columns sized before the words are known.
	if !strings.HasPrefix(shown, "ID ") || strings.Count(shown, "\n") != strings.Count(direct, "\n") || !strings.HasSuffix(shown, "2 trees: 2 clean\n") {
		t.Errorf("a list that fits the screen: the terminal showed\n%q\nwant its rows, as\n%q", shown, direct)
	}
	if _, err := os.Stat(got); err == nil {
		t.Errorf("a pager ran for a list that fits the screen")
	}
}
