//go:build unix

package observe

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/proof"
)

// TestRunTimeoutIsTyped: a command still running at its deadline — the
// Runner's, when its context has none, or its context's — ends with a
// *TimeoutError that errors.Is ErrTimedOut and context.DeadlineExceeded,
// names the command, where it ran and the time it had, and leaves nothing
// of its group: here a child that holds the output pipe while its parent
// waits for it.
func TestRunTimeoutIsTyped(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		runner hostio.Runner
		ctx    func() (context.Context, context.CancelFunc)
		after  time.Duration
	}{
		{"runner deadline", hostio.Runner{Deadline: 300 * time.Millisecond, Grace: 100 * time.Millisecond},
			func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }, 300 * time.Millisecond},
		{"context deadline", hostio.Runner{Deadline: time.Hour, Grace: 100 * time.Millisecond},
			func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 300*time.Millisecond)
			}, 300 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			pidfile := filepath.Join(dir, "pid")
			ctx, cancel := tc.ctx()
			defer cancel()
			c := withArg(sh(`sleep 30 & echo $! > "$0"; wait`), pidfile)
			c.Dir = dir
			start := time.Now()
			_, err := tc.runner.Run(ctx, c)
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("Run took %s past a %s deadline", took, tc.after)
			}
			var te *hostio.TimeoutError
			if !errors.As(err, &te) || !errors.Is(err, hostio.ErrTimedOut) || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Run past its deadline = %v, want a *TimeoutError that is ErrTimedOut and context.DeadlineExceeded", err)
			}
			if got := hostio.RoundDeadline(te.After); got != tc.after {
				t.Errorf("TimeoutError.After = %s (rounded %s), want %s", te.After, got, tc.after)
			}
			msg := err.Error()
			for _, want := range []string{"sh -c sleep 30", " in " + dir, "no answer within 300ms", "killed"} {
				if !strings.Contains(msg, want) {
					t.Errorf("timeout message %q lacks %q", msg, want)
				}
			}
			pid := readPid(t, mustRead(t, pidfile))
			waitGone(t, pid)
		})
	}
}

// TestRunInterruptIsNoTimeout: a command ended by its context's
// cancellation (an interrupt) is not a timeout: nothing ran out of time,
// and no tree is kept as if it had.
func TestRunInterruptIsNoTimeout(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := (&hostio.Runner{Grace: 50 * time.Millisecond}).Run(ctx, sh("sleep 30"))
	if !errors.Is(err, context.Canceled) || errors.Is(err, hostio.ErrTimedOut) {
		t.Errorf("interrupted Run = %v, want context.Canceled and not ErrTimedOut", err)
	}
}

// TestGitNotesTimeouts: a Git noting its commands records each observing
// command that ran out of its ObserveTimeout once (the command quoted as a
// shell takes it back, where it ran and the time it had), whatever its
// caller did with the error; a Git that does not note records nothing, and
// a command that changes the repository keeps the Runner's deadline.
func TestGitNotesTimeouts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "slow git")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\nexec sleep 30\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	g := &hostio.Git{Runner: &hostio.Runner{Grace: 50 * time.Millisecond, Deadline: time.Hour}, Bin: bin, ObserveTimeout: 200 * time.Millisecond}
	ng, notes := g.Noting()
	ctx := context.Background()
	for range 2 {
		if _, err := ng.Observe(ctx, dir, "status", "--porcelain=v2"); !errors.Is(err, hostio.ErrTimedOut) {
			t.Fatalf("Observe = %v, want ErrTimedOut", err)
		}
	}
	got := notes.Taken()
	if len(got) != 1 || got[0].Command != machine.Command(bin, "status", "--porcelain=v2") || got[0].Dir != dir || got[0].Deadline != "200ms" {
		t.Errorf("noted %+v, want the status command once, in %s, 200ms", got, dir)
	}
	if g.Timeouts != nil {
		t.Errorf("noting changed the Git it was asked of")
	}
	var te *hostio.TimeoutError
	if _, err := g.Observe(ctx, dir, "rev-parse"); !errors.As(err, &te) || !te.Observing {
		t.Errorf("Observe = %v, want a *TimeoutError marked Observing", err)
	}
	mctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, err := g.Mutate(mctx, dir, "worktree", "add"); !errors.As(err, &te) || te.Observing || hostio.RoundDeadline(te.After) != 300*time.Millisecond {
		t.Errorf("Mutate = %v, want a *TimeoutError after the context's 300ms, not marked Observing", err)
	}
}

// TestAttachProofNotesBatchTimeout: a proof asked for the whole plan at
// once ran on the plan's Git, not the tree's; when one of its commands
// ran out of time, the tree it was proving still has it in TimedOut, once
// however often it is attached, beside its proof error.
func TestAttachProofNotesBatchTimeout(t *testing.T) {
	t.Parallel()
	head := strings.Repeat("a", 40)
	tip := strings.Repeat("b", 40)
	slow := &hostio.TimeoutError{Cmd: hostio.Cmd{Dir: "/repo", Args: []string{"git", "rev-list", "--parents", "--stdin"}}, After: 5 * time.Minute, Observing: true}
	done := make(chan struct{})
	close(done)
	scope := Scope{
		View:   &proof.RemoteView{Remotes: []string{"origin"}, Tips: []proof.Tip{{Remote: "origin", Ref: "refs/heads/main", Commit: tip}}},
		Proofs: &proof.ProofSet{Done: done, Res: map[string]proof.ProofResult{head: {Err: fmt.Errorf("commits %s adds: %w", head, slow)}}},
	}
	o := machine.WorktreeObservation{Path: "/tree", PathState: machine.PathPresent, IsDir: true, Registered: true, Head: head}
	g := hostio.NewGit(&hostio.Runner{})
	for range 2 {
		AttachProof(context.Background(), g, hostio.Repo{}, machine.Record{ID: "t", Path: "/tree"}, &o, scope)
	}
	want := []machine.TimedOut{{Command: "git rev-list --parents --stdin", Dir: "/repo", Deadline: "5m"}}
	if diff := cmp.Diff(want, o.TimedOut); diff != "" || o.ProofErr == "" || o.Proof != nil {
		t.Errorf("TimedOut (-want +got):\n%s\nproof %+v, error %q", diff, o.Proof, o.ProofErr)
	}
}
