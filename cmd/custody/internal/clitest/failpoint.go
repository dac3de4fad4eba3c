package clitest

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/steps"
)

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

// Outcomes maps each item of an apply result to its outcome.
func Outcomes(ap steps.ApplyResult) map[string]string {
	m := map[string]string{}
	for _, it := range ap.Items {
		m[it.ID] = string(it.Outcome)
	}
	return m
}
