package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
)

// TestDescribeTimeout: a git observation of the whole repository that ran
// out of time ends the command as observation-timed-out, naming the
// command and where it ran, retried by the same command line with four
// times the deadline in place of the one given; a command that changes
// the repository and ran out of time is a plain error naming it.
func TestDescribeTimeout(t *testing.T) {
	t.Parallel()
	read := &hostio.TimeoutError{Cmd: hostio.Cmd{Dir: "/r", Args: []string{"git", "worktree", "list", "--porcelain", "-z"}}, After: 2 * time.Second, Observing: true}
	got := describeIn(fmt.Errorf("registry: %w", read), invocation{args: []string{"--observe-timeout", "2s", "plan", "-o", "p.json"}})
	want := errorBody{Code: string(machine.CodeObservationTimedOut), Path: "/r", Retry: "custody --observe-timeout 8s plan -o p.json",
		Message: "registry: git worktree list --porcelain -z in /r: no answer within 2s; it and every process it started were killed; nothing was changed. If it hangs, find what it waits for (GIT_TRACE=1)."}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("observation timeout (-want +got):\n%s", d)
	}
	change := &hostio.TimeoutError{Cmd: hostio.Cmd{Dir: "/r", Args: []string{"git", "worktree", "add"}}, After: 10 * time.Minute}
	if got := describeIn(change, invocation{args: []string{"new", "x"}}); got.Code != "error" || got.Message != "git worktree add in /r: no answer within 10m; it and every process it started were killed" {
		t.Errorf("change timeout = %+v", got)
	}
}
