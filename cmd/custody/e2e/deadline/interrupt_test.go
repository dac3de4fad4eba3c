//go:build unix

package deadline

// Interrupts (SIGINT, Ctrl-C): custody stops promptly, says what it did
// before it stopped, and starts nothing new.

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
)

// TestInterruptWhileWaitingForLock: another process holds the state file
// and `custody list --lock-timeout 8s` waits for it. SIGINT during that
// wait makes custody stop promptly with exit 1, well before the lock
// timeout.
func TestInterruptWhileWaitingForLock(t *testing.T) {
	t.Parallel()
	r := fixtures.New(t, fixtures.Options{})
	clitest.MustCustody(t, r, 0, "init")
	state := filepath.Join(r.Dir, ".git", "custody", "state.db")
	release := clitest.HoldLock(t, state)
	defer release()
	b := clitest.StartCustody(t, r, nil, "list", "--lock-timeout", "8s")
	clitest.WaitCatches(t, b.Cmd.Process.Pid, syscall.SIGINT)
	time.Sleep(300 * time.Millisecond) // now waiting for the lock
	start := time.Now()
	if err := b.Cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	res := b.Wait(t)
	took := time.Since(start)
	if took > 4*time.Second {
		t.Errorf("custody ignored SIGINT while waiting for the state lock: it exited %s later (exit %d):\n%s", took.Round(time.Millisecond), res.Code, res.Stderr)
	}
	if res.Code != 1 {
		t.Errorf("interrupted list: exit %d, want 1", res.Code)
	}
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
