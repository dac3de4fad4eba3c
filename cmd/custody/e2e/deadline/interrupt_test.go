//go:build unix

package deadline

// Interrupts (SIGINT, Ctrl-C): custody stops promptly, says what it did
// before it stopped, and starts nothing new.

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
)

// TestInterruptWhileWaitingForLock: another process holds the state file
// and `custody list --lock-timeout 8s` waits for it. SIGINT during that
// wait makes custody stop promptly with exit 130, well before the lock
// timeout, saying in one line that list changed nothing.
func TestInterruptWhileWaitingForLock(t *testing.T) {
	t.Parallel()
	r := fixtures.New(t, fixtures.Options{})
	clitest.MustCustody(t, r, 0, "init")
	state := filepath.Join(r.Dir, ".git", "custody", "state.db")
	release := clitest.HoldLock(t, state)
	defer release()
	b := clitest.StartCustody(t, r, nil, "list", "--lock-timeout", "8s")
	clitest.WaitOpen(t, b.Cmd.Process.Pid, state, 30*time.Second)
	time.Sleep(100 * time.Millisecond) // now waiting for the lock
	start := time.Now()
	if err := b.Cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	res := b.Wait(t)
	took := time.Since(start)
	if took > 4*time.Second {
		t.Errorf("custody ignored SIGINT while waiting for the state lock: it exited %s later (exit %d):\n%s", took.Round(time.Millisecond), res.Code, res.Stderr)
	}
	dlAssertInterrupted(t, res, syscall.SIGINT, "list", "it only reads")
}

// TestInterruptStopsProvisioning: an interrupt during `custody new` lets
// the running create finish (its own timeout bounds it) but starts no
// further resource command.
func TestInterruptStopsProvisioning(t *testing.T) {
	t.Parallel()
	toml := ""
	for _, n := range []string{"a", "b", "c"} {
		toml += clitest.ResourceDecl(n, "echo create "+n+" >> {EXT}/log; touch {EXT}/started-"+n+"; sleep 2", "echo destroy "+n+" >> {EXT}/log")
	}
	w := clitest.SetupResources(t, toml, fixtures.Options{})
	b := clitest.StartCustody(t, w.R, nil, "new", "interrupted")
	clitest.WaitFile(t, filepath.Join(w.Ext, "started-a"), 30*time.Second)
	if err := b.Cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	res := b.Wait(t)
	t.Logf("custody new after SIGINT: %s", res)
	for _, l := range w.LogLines(t) {
		if l == "create b" || l == "create c" {
			t.Errorf("after the interrupt, custody new still started %q: log %q", l, w.LogLines(t))
		}
	}
}

// TestInterruptedApplyExitsBySignal: SIGINT (Ctrl-C) or SIGTERM arrives
// while apply of a plan of three trees is held at a pause point of its
// first removal: after its intent is committed, or after the tree is
// removed. apply exits 128 + the signal's number (130, 143) and prints one
// line on stderr: what it finished, what it left midway for custody
// resume, what it did not start, and none of the cancellation's or git's
// own text. custody resume then settles what was left midway, and applying
// the plan again removes the rest.
func TestInterruptedApplyExitsBySignal(t *testing.T) {
	t.Parallel()
	for _, sig := range []struct {
		sig  syscall.Signal
		name string
		exit int
	}{{syscall.SIGINT, "SIGINT", 130}, {syscall.SIGTERM, "SIGTERM", 143}} {
		for _, point := range []string{"apply/after-intent", "apply/after-remove"} {
			t.Run(sig.name+"_"+strings.ReplaceAll(point, "/", "_"), func(t *testing.T) {
				t.Parallel()
				r, ids, plan := clitest.PausedPlan(t, 3)
				b, interrupt, _ := clitest.StartPaused(t, r, point, "apply", plan)
				interrupt(sig.sig)
				res := b.Wait(t)
				if res.Code != sig.exit {
					t.Fatalf("apply interrupted by %s: exit %d, want %d\n%s", sig.name, res.Code, sig.exit, res)
				}
				line := strings.TrimSuffix(res.Stderr, "\n")
				if strings.Contains(line, "\n") || line == res.Stderr {
					t.Errorf("apply interrupted by %s: stderr is not one line:\n%s", sig.name, res.Stderr)
				}
				want := "custody apply: interrupted by " + sig.name + " "
				if point == "apply/after-intent" {
					want += "before any of its 3 actions finished; left midway: " + ids[0] + " (removal worktree), which custody resume settles"
				} else {
					want += "after 1 of 3 actions (1 removed); nothing is left midway"
				}
				want += "; not started: " + ids[1] + ", " + ids[2] + " (custody apply " + plan + " does them)"
				if line != want {
					t.Errorf("apply interrupted by %s: stderr\n%s\nwant\n%s", sig.name, line, want)
				}
				for _, noise := range []string{"context", "canceled", "git ", "signal:", "\t"} {
					if strings.Contains(res.Stderr, noise) {
						t.Errorf("apply interrupted by %s: stderr holds %q:\n%s", sig.name, noise, res.Stderr)
					}
				}
				removed := "removed " + ids[0] + " "
				if got := strings.HasPrefix(res.Stdout, removed); got != (point == "apply/after-remove") {
					t.Errorf("apply interrupted by %s at %s: stdout\n%s", sig.name, point, res.Stdout)
				}

				// custody resume settles what was left midway, and only that.
				resumed := clitest.MustCustody(t, r, 0, "resume")
				if point == "apply/after-intent" && resumed.Stdout != "removed "+ids[0]+"\n" {
					t.Errorf("resume after the interrupt: %q, want %s removed", resumed.Stdout, ids[0])
				}
				for i, id := range ids {
					want := "finished"
					if i == 0 {
						want = "tombstoned"
					}
					if st := clitest.RecordState(t, r, id); st != want {
						t.Errorf("after resume %s is %s, want %s", id, st, want)
					}
				}
				again := clitest.MustCustody(t, r, 0, "apply", plan, "--json")
				clitest.WantOutcomes(t, "apply again", again, ids[:1], "already-done")
				clitest.WantOutcomes(t, "apply again", again, ids[1:], "removed")
			})
		}
	}
}

// TestInterruptedRemoveExitsBySignal: SIGINT arrives while custody remove
// of three trees is held in its first tree's removal, after its intent or
// after the tree is removed. remove exits 130 with one line on stderr
// (what it went through, what it left midway, what it did not start and
// the command that does them); custody resume settles what was left
// midway, and the same remove again lets the rest go, the first tree
// already-done.
func TestInterruptedRemoveExitsBySignal(t *testing.T) {
	t.Parallel()
	for _, point := range []string{"apply/after-intent", "apply/after-remove"} {
		t.Run(strings.ReplaceAll(point, "/", "_"), func(t *testing.T) {
			t.Parallel()
			r, ids, _ := clitest.PausedPlan(t, 3)
			args := append([]string{"remove"}, ids...)
			b, interrupt, _ := clitest.StartPaused(t, r, point, args...)
			interrupt(syscall.SIGINT)
			res := b.Wait(t)
			if res.Code != 130 {
				t.Fatalf("remove interrupted by SIGINT: exit %d, want 130\n%s", res.Code, res)
			}
			want := "custody remove: interrupted by SIGINT "
			if point == "apply/after-intent" {
				want += "before it was done with any of its 3 trees; left midway: " + ids[0] + " (removal worktree), which custody resume settles"
			} else {
				want += "after 1 of 3 trees (1 removed); nothing is left midway"
			}
			want += "; not started: " + ids[1] + ", " + ids[2] + " (custody remove " + strings.Join(ids, " ") + " does them)\n"
			if res.Stderr != want {
				t.Errorf("remove interrupted by SIGINT: stderr\n%s\nwant\n%s", res.Stderr, want)
			}
			if got := strings.HasPrefix(res.Stdout, "removed "+ids[0]+"\n"); got != (point == "apply/after-remove") {
				t.Errorf("remove interrupted at %s: stdout\n%s", point, res.Stdout)
			}
			clitest.MustCustody(t, r, 0, "resume")
			again := clitest.MustCustody(t, r, 0, append(args, "--json")...)
			for i, id := range ids {
				want := "removed"
				if i == 0 {
					want = "already-done"
				}
				if !strings.Contains(again.Stdout, `"id": "`+id+`",`) || clitest.RecordState(t, r, id) != "tombstoned" {
					t.Errorf("remove again: %s is %s, want %s:\n%s", id, clitest.RecordState(t, r, id), want, again.Stdout)
				}
			}
			if strings.Count(again.Stdout, `"outcome": "already-done"`) != 1 || strings.Count(again.Stdout, `"outcome": "removed"`) != 2 {
				t.Errorf("remove again: want 1 already-done and 2 removed:\n%s", again.Stdout)
			}
		})
	}
}
