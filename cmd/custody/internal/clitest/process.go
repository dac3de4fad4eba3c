package clitest

// Waiting for a run started in the background (StartCustody, to signal it
// or race it), and git wrappers that slow or break one git subcommand.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custody-sh/custody/fixtures"
)

// Running is a run of the ordinary binary that was started and not yet
// waited for.
type Running struct {
	Cmd            *exec.Cmd
	Stdout, Stderr *bytes.Buffer
}

// Wait waits for the run and returns its result (exit -1 when a signal
// killed it).
func (b *Running) Wait(t testing.TB) Result {
	t.Helper()
	res, err := Exited(b.Cmd.Wait(), b.Stdout, b.Stderr)
	if err != nil {
		t.Fatalf("wait: %v", err)
	}
	return res
}

// Exited is the result of a run that ended with err (from Run or Wait);
// an err other than a non-zero exit is returned as it is.
func Exited(err error, out, errb *bytes.Buffer) (Result, error) {
	res := Result{Stdout: out.String(), Stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.Code = ee.ExitCode()
	default:
		return res, err
	}
	return res, nil
}

// WaitOpen waits until process pid holds path open (a link of
// /proc/<pid>/fd leads to it). For custody that is past the point where it
// catches interrupts (watchInterrupts runs before any command opens a file
// of the repository), and for a command waiting for a lock file, the wait
// itself. The Go runtime installs its handler for every signal as the
// process starts (SigCgt shows them caught at once), so that says nothing
// of whether custody is ready for one: a signal that comes before
// signal.Notify still ends the process.
func WaitOpen(t testing.TB, pid int, path string, within time.Duration) {
	t.Helper()
	want := path
	if real, err := filepath.EvalSymlinks(path); err == nil {
		want = real
	}
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		for _, fd := range fds {
			if l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); err == nil && (l == want || l == path) {
				return
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("process %d did not open %s within %v", pid, path, within)
}

// WaitFile waits until path exists.
func WaitFile(t testing.TB, path string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		if _, err := os.Lstat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not appear within %v", path, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// WrapGitRemove writes a directory holding git, a shell script that runs
// body when git is asked for `worktree remove` and the real git otherwise.
// In body, $last is the removal target and REALGIT the real git. It
// returns the directory, for PATH.
func WrapGitRemove(t testing.TB, r *fixtures.Repo, name, body string) string {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(r.Root, "git-"+name)
	script := fmt.Sprintf(`#!/bin/sh
REALGIT=%q
prev=
for a in "$@"; do
	if [ "$prev" = worktree ] && [ "$a" = remove ]; then
		for last in "$@"; do :; done
		%s
	fi
	prev=$a
done
exec "$REALGIT" "$@"
`, real, body)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// SlowGitEnv writes a git wrapper that sleeps before `git worktree list`,
// widening the window between a command's reads and its commit, and
// returns the fixture's environment with the wrapper first on PATH.
func SlowGitEnv(t testing.TB, r *fixtures.Repo) []string {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git on PATH")
	}
	dir := t.TempDir()
	script := "#!/bin/sh\ncase \"$*\" in *\"worktree list\"*) sleep 0.5;; esac\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	env := r.Env()
	for i, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			env[i] = "PATH=" + dir + string(os.PathListSeparator) + v
		}
	}
	return env
}
