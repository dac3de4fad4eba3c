//go:build unix

package observe_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/hostio"
)

// TestWorktreeStatusTimesOut: a clean filter that starts a child holding
// git's pipe and then waits for it hangs git status of the tree whose file
// it must hash again. The observation ends at ObserveTimeout with the
// status command in TimedOut (its exact argv, the tree, the deadline) and
// a status error; the filter and its child are gone; and a tree the filter
// does not cover, observed by the same Git, has no timeout.
func TestWorktreeStatusTimesOut(t *testing.T) {
	t.Parallel()
	r := fixtures.New(t, fixtures.Options{})
	slow, plain := filepath.Join(r.Root, "slow"), filepath.Join(r.Root, "plain")
	r.Git("worktree", "add", "-q", "-b", "custody/slow", slow)
	r.Git("worktree", "add", "-q", "-b", "custody/plain", plain)
	pids := filepath.Join(r.Root, "filter-pids")
	r.Git("config", "filter.hang.clean", fmt.Sprintf("sleep 600 & echo $! >> %q; echo $$ >> %q; wait", pids, pids))
	r.WriteFile(slow, ".gitattributes", "* filter=hang\n")
	old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(slow, "README"), old, old); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killPids(pids) })
	ctx := context.Background()
	g := hostio.NewGit(&hostio.Runner{Env: r.Env(), Grace: 200 * time.Millisecond})
	g.ObserveTimeout = time.Second
	repo, err := gitfiles.Discover(ctx, g, r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	inv, err := gitfiles.TakeInventory(ctx, g, repo)
	if err != nil {
		t.Fatal(err)
	}
	scope := observe.Scope{Status: true, Hidden: true}
	start := time.Now()
	o := observe.Worktree(ctx, g, repo, inv, machine.Record{ID: "slow", Path: slow, Branch: "custody/slow", AdminKey: "slow"}, scope)
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("observing the tree took %s with a 1s deadline", took)
	}
	want := machine.TimedOut{Dir: slow, Deadline: "1s", Command: machine.Command("git", "-c", "core.fsmonitor=false", "-c", "status.showUntrackedFiles=all", "-c", "diff.ignoreSubmodules=none",
		"status", "--porcelain=v2", "-z", "--ignored=matching", "--untracked-files=all", "--ignore-submodules=none")}
	if len(o.TimedOut) != 1 || o.TimedOut[0] != want {
		t.Errorf("TimedOut = %+v, want [%+v]", o.TimedOut, want)
	}
	if o.StatusErr == "" || len(o.Status.Untracked) > 0 {
		t.Errorf("a status that timed out reads as status %+v, error %q: want no status and an error", o.Status, o.StatusErr)
	}
	b, _ := os.ReadFile(pids)
	if len(strings.Fields(string(b))) < 2 {
		t.Fatalf("the filter did not run (pids %q)", b)
	}
	for _, w := range strings.Fields(string(b)) {
		pid, _ := strconv.Atoi(w)
		waitPidGone(t, pid)
	}
	o = observe.Worktree(ctx, g, repo, inv, machine.Record{ID: "plain", Path: plain, Branch: "custody/plain", AdminKey: "plain"}, scope)
	if len(o.TimedOut) != 0 || o.StatusErr != "" {
		t.Errorf("the tree without the filter: TimedOut %+v, status error %q", o.TimedOut, o.StatusErr)
	}
}

// waitPidGone fails the test when pid still runs two seconds on (a zombie
// counts as gone: it runs nothing).
func waitPidGone(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if syscall.Kill(pid, 0) != nil || zombie(pid) {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("process %d outlived the command that timed out", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
			return
		}
	}
}

// zombie reports whether /proc says pid has exited and awaits its reaping.
func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] == "Z"
}

// killPids kills every process whose pid is in the file, so a failing
// test leaves none behind.
func killPids(file string) {
	b, _ := os.ReadFile(file)
	for _, w := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(w); err == nil && pid > 1 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
