package clitest

// Runs of the failpoint build held at a failpoint, so a test can act
// while custody waits there, and the state file's lock held in-process.

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/store"
)

// HoldLock opens the state file in this process, which takes bbolt's
// exclusive file lock until the returned release is called.
func HoldLock(t *testing.T, state string) (release func()) {
	t.Helper()
	db, err := bolt.Open(state, 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("open %s: %v", state, err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			if err := db.Close(); err != nil {
				t.Errorf("close %s: %v", state, err)
			}
		})
	}
	t.Cleanup(release)
	return release
}

// PausedPlan makes n finished trees whose HEADs are published and plans
// their removal.
func PausedPlan(t *testing.T, n int) (r *fixtures.Repo, ids []string, plan string) {
	t.Helper()
	r = fixtures.New(t, fixtures.Options{})
	MustCustody(t, r, 0, "init")
	from := r.Head(r.Dir)
	for i := range n {
		made := DecodeResult[steps.NewResult](t, MustCustody(t, r, 0, "new", fmt.Sprintf("p%d", i), "--from", from, "--json"), "new")
		from = r.Commit(made.Path, fmt.Sprintf("p%d.txt", i), "published\n")
		r.Push(made.Path, "main")
		ids = append(ids, made.ID)
	}
	MustCustody(t, r, 0, append([]string{"finish"}, ids...)...)
	plan = filepath.Join(r.Root, "plan.json")
	MustCustody(t, r, 2, "plan", "-o", plan, "--detailed-exitcode")
	return r, ids, plan
}

// Paused starts the failpoint build with args, held at point (see
// steps.PausePoints and store.PausePoints) until the returned release is
// called; it returns once the process is held there. wait returns its
// result.
func Paused(t *testing.T, r *fixtures.Repo, point string, args ...string) (release func(), wait func() Result) {
	t.Helper()
	release, wait, _ = PausedPID(t, r, point, args...)
	return release, wait
}

// PausedPID is Paused that also returns the held process's pid.
func PausedPID(t *testing.T, r *fixtures.Repo, point string, args ...string) (release func(), wait func() Result, pid int) {
	t.Helper()
	if !slices.Contains(steps.PausePoints(), point) && !slices.Contains(store.PausePoints(), point) {
		t.Fatalf("%s is not a pause point", point)
	}
	dir := t.TempDir()
	env := append(r.Env(), "CUSTODY_PAUSE="+point, "CUSTODY_PAUSE_DIR="+dir)
	done := make(chan struct{})
	var res Result
	var err error
	pid, waitRun, err := startInGoroutine(failpointBin, r, env, args...)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(done)
		res, err = waitRun()
	}()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, serr := os.Stat(filepath.Join(dir, "paused")); serr == nil {
			break
		}
		select {
		case <-done:
			t.Fatalf("custody %s ended before reaching %s (%v):\n%s", strings.Join(args, " "), point, err, res)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("custody %s did not reach %s", strings.Join(args, " "), point)
		}
	}
	release = func() {
		if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wait = func() Result {
		<-done
		if err != nil {
			t.Fatalf("custody %s: %v", strings.Join(args, " "), err)
		}
		return res
	}
	t.Cleanup(func() {
		release()
		<-done
	})
	return release, wait, pid
}

// WantOutcomes checks that every item of an apply ended in one of want.
func WantOutcomes(t *testing.T, name string, res Result, ids []string, want ...string) map[string]string {
	t.Helper()
	got := Outcomes(DecodeResult[steps.ApplyResult](t, res, "apply"))
	for _, id := range ids {
		if !slices.Contains(want, got[id]) {
			t.Errorf("%s: %s is %q, want one of %q:\n%s", name, id, got[id], want, res)
		}
	}
	return got
}

// StartPaused starts the failpoint build with args, held at point (see
// steps.PausePoints), and returns once the process is held there, so a
// test can signal it: interrupt sends sig and lets the process go on once
// the interrupt took effect in it (failpoint.Interrupted), so it goes on
// interrupted; release lets it go on as it is. Wait on the returned run
// gives its result. The test's cleanup kills it if it still runs.
func StartPaused(t *testing.T, r *fixtures.Repo, point string, args ...string) (b *Running, interrupt func(os.Signal), release func()) {
	t.Helper()
	return StartPausedAfter(t, r, point, 0, args...)
}

// StartPausedAfter is StartPaused held at point the time after it passed
// it skip times (CUSTODY_PAUSE_SKIP): apply of a plan of many trees held
// at its (skip+1)th item.
func StartPausedAfter(t *testing.T, r *fixtures.Repo, point string, skip int, args ...string) (b *Running, interrupt func(os.Signal), release func()) {
	t.Helper()
	if !slices.Contains(steps.PausePoints(), point) {
		t.Fatalf("%s is not a pause point", point)
	}
	dir := t.TempDir()
	b = startBin(t, failpointBin, r, []string{"CUSTODY_PAUSE=" + point, "CUSTODY_PAUSE_DIR=" + dir, "CUSTODY_PAUSE_SKIP=" + strconv.Itoa(skip)}, args...)
	cmd := b.Cmd
	WaitFile(t, filepath.Join(dir, "paused"), 30*time.Second+time.Duration(skip)*2*time.Second)
	release = func() {
		if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	interrupt = func(sig os.Signal) {
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		WaitFile(t, filepath.Join(dir, "interrupted"), 30*time.Second)
		release()
	}
	return b, interrupt, release
}
