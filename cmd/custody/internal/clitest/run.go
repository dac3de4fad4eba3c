// Package clitest runs the custody binary for the tests that drive it:
// the tests of cmd/custody and of its end-to-end packages below it. Main
// builds the binary once per test package (the ordinary build and the
// failpoint build, as custody is shipped: without cgo); the helpers run it
// in a fixture repository and read its --json output back into custody's
// own types (package output, machine, steps, store).
//
// Every process clitest starts is started in this file (run.go), the one
// place observe's TestProcessesStartOnlyInTheRunner allows in it.
package clitest

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/fixtures/testsize"
)

// The binaries Main built for this test binary: set once, before any test
// runs, and only read after.
var (
	custodyBin   string // ordinary build
	failpointBin string // built with -tags failpoint
)

// ImportPath is the import path of the custody command.
const ImportPath = "github.com/custody-sh/custody/cmd/custody"

// Main builds the custody binary twice (the ordinary build and one with
// -tags failpoint, both with CGO_ENABLED=0), runs the tests and returns
// their exit code. A test package's TestMain is os.Exit(clitest.Main(m)).
//
// The builds are shared by every test package of one source tree (see
// buildCache): the first package to need them builds them, the others
// find them, so a run of the whole suite links custody twice, not twice
// per package.
func Main(m *testing.M) int {
	flag.Parse()
	testsize.WidenParallel()
	testsize.Scratch()
	dir, cleanup, err := binaries()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer cleanup()
	custodyBin = filepath.Join(dir, "custody")
	failpointBin = filepath.Join(dir, "custody-failpoint")
	return m.Run()
}

// goTool runs the go command with args in dir ("" for the current
// directory) and the environment plus extra, and returns its combined
// output.
func goTool(dir string, extra []string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), extra...)
	return cmd.CombinedOutput()
}

// gitTool runs git with args and exactly the environment env, and returns
// its combined output.
func gitTool(env []string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Env = env
	return cmd.CombinedOutput()
}

// Bin is the path of the ordinary custody binary Main built.
func Bin() string { return custodyBin }

// FailpointBin is the path of the custody binary Main built with -tags
// failpoint (CUSTODY_FAILPOINT=<point> kills it at that point).
func FailpointBin() string { return failpointBin }

// Result is one run of the custody binary.
type Result struct {
	Stdout, Stderr string
	Code           int
}

// String is the run as a test prints it: its exit code, stdout and stderr.
func (r Result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
}

// RunBin runs bin in dir with the fixture's environment plus extra.
func RunBin(t testing.TB, bin string, r *fixtures.Repo, dir string, extra []string, args ...string) Result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(r.Env(), extra...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	res := Result{Stdout: out.String(), Stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.Code = ee.ExitCode()
		if ee.ExitCode() == -1 {
			res.Code = -1 // killed by a signal
		}
	default:
		t.Fatalf("run custody %s: %v", strings.Join(args, " "), err)
	}
	if strings.Contains(res.Stderr, "panic:") || strings.Contains(res.Stderr, "goroutine ") {
		t.Fatalf("custody %s panicked:\n%s", strings.Join(args, " "), res)
	}
	return res
}

// Custody runs the ordinary binary in the fixture's main checkout.
func Custody(t testing.TB, r *fixtures.Repo, args ...string) Result {
	t.Helper()
	return RunBin(t, custodyBin, r, r.Dir, nil, args...)
}

// MustCustody runs custody and fails the test unless it exits with want.
func MustCustody(t testing.TB, r *fixtures.Repo, want int, args ...string) Result {
	t.Helper()
	res := Custody(t, r, args...)
	if res.Code != want {
		t.Fatalf("custody %s: want exit %d, got\n%s", strings.Join(args, " "), want, res)
	}
	return res
}

// NewTree makes a managed worktree and returns its id and path.
func NewTree(t testing.TB, r *fixtures.Repo, name string) (id, path string) {
	t.Helper()
	res := MustCustody(t, r, 0, "new", name)
	path = strings.TrimSpace(res.Stdout)
	return filepath.Base(path), path
}

// MustBeKilled runs the failpoint build with CUSTODY_FAILPOINT=point and
// fails unless it died by SIGKILL, i.e. the point was reached.
func MustBeKilled(t *testing.T, r *fixtures.Repo, point string, args ...string) {
	t.Helper()
	cmd := exec.Command(failpointBin, args...)
	cmd.Dir = r.Dir
	cmd.Env = append(r.Env(), "CUSTODY_FAILPOINT="+point)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("failpoint %s was never reached: custody %s exited 0\nstdout:\n%s\nstderr:\n%s", point, strings.Join(args, " "), &out, &errb)
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("failpoint %s was never reached: custody %s ended with %v, not SIGKILL\nstdout:\n%s\nstderr:\n%s", point, strings.Join(args, " "), err, &out, &errb)
	}
}

// RunInGoroutine runs bin without a testing.TB, for use from goroutines.
func RunInGoroutine(bin string, r *fixtures.Repo, env []string, args ...string) (Result, error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = r.Dir
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	res, err := Exited(cmd.Run(), &out, &errb)
	if err != nil {
		return res, err
	}
	if strings.Contains(res.Stderr, "panic:") || strings.Contains(res.Stderr, "goroutine ") {
		return res, fmt.Errorf("custody %s panicked:\n%s", strings.Join(args, " "), res)
	}
	return res, nil
}

// startInGoroutine starts bin as RunInGoroutine runs it, without waiting:
// it returns the process's pid and a wait that returns what
// RunInGoroutine would.
func startInGoroutine(bin string, r *fixtures.Repo, env []string, args ...string) (pid int, wait func() (Result, error), err error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = r.Dir
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		return 0, nil, err
	}
	return cmd.Process.Pid, func() (Result, error) {
		res, err := Exited(cmd.Wait(), &out, &errb)
		if err != nil {
			return res, err
		}
		if strings.Contains(res.Stderr, "panic:") || strings.Contains(res.Stderr, "goroutine ") {
			return res, fmt.Errorf("custody %s panicked:\n%s", strings.Join(args, " "), res)
		}
		return res, nil
	}, nil
}

// StartCustody starts the ordinary binary in the main checkout with the
// fixture's environment plus extra, without waiting. The test's cleanup
// kills it if it still runs.
func StartCustody(t testing.TB, r *fixtures.Repo, extra []string, args ...string) *Running {
	t.Helper()
	return startBin(t, custodyBin, r, extra, args...)
}

// startBin starts bin in the main checkout with the fixture's environment
// plus extra, without waiting; the test's cleanup kills it if it still
// runs.
func startBin(t testing.TB, bin string, r *fixtures.Repo, extra []string, args ...string) *Running {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = r.Dir
	cmd.Env = append(r.Env(), extra...)
	b := &Running{Cmd: cmd, Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}}
	cmd.Stdout, cmd.Stderr = b.Stdout, b.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return b
}
