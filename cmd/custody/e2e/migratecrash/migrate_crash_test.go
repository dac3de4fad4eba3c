package migratecrash

// Crash safety of migrate apply: SIGKILLed at every failpoint it passes
// (its own and those of the removal and archive steps it reuses) and at
// random instants, then run again, the migration converges to the end
// state of an uninterrupted run (clitest.LegacyCheckEnd), and migrate
// status never reports completion while a candidate is pending.

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/steps/migrate"
)

// mgCrashPoints are the failpoints a migrate apply of the legacy layout
// passes: its own and those of the removal, archive and relocation it
// reuses.
func mgCrashPoints() []string {
	points := migrate.MigrateFailpoints()
	for _, p := range steps.Failpoints() {
		if strings.HasPrefix(p, "apply/") || strings.HasPrefix(p, "relocate/") || (strings.HasPrefix(p, "archive/after-") || p == "archive/before-seal") && !strings.Contains(p, "prune") && !strings.Contains(p, "strip") {
			points = append(points, p)
		}
	}
	return points
}

// mgReady builds the legacy layout with every disposition recorded.
func mgReady(t *testing.T) (*fixtures.Legacy, map[string]fixtures.Snapshot) {
	l := fixtures.NewLegacy(t)
	untouched := clitest.LegacyUntouched(l)
	clitest.MustCustody(t, l.Repo, 0, "init")
	clitest.MigrateDisposeAll(t, l.Repo, clitest.MigratePlan(t, l.Repo, "migrate.json"))
	return l, untouched
}

// mgKilledAt runs the failpoint build's migrate apply with point set and
// reports whether it died by SIGKILL there.
func mgKilledAt(t *testing.T, r *fixtures.Repo, point string) bool {
	t.Helper()
	cmd := exec.Command(clitest.FailpointBin(), "migrate", "apply", "migrate.json", "--allow-external-retirement")
	cmd.Dir = r.Dir
	cmd.Env = append(r.Env(), "CUSTODY_FAILPOINT="+point)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		if strings.Contains(out.String(), "panic:") {
			t.Fatalf("migrate apply panicked:\n%s", &out)
		}
		return false
	}
	return true
}

// mgAfterKill checks what status says after a kill, then runs apply to
// the end and checks the end state.
func mgAfterKill(t *testing.T, l *fixtures.Legacy, untouched map[string]fixtures.Snapshot) {
	t.Helper()
	res := clitest.Custody(t, l.Repo, "--json", "migrate", "status")
	st := clitest.DecodeResult[migrate.MigrateStatusResult](t, res, "migrate status")
	if st.Complete {
		// Complete is claimed only when it is true: the end state holds
		// without another run.
		if res.Code != 0 {
			t.Fatalf("status complete but exit %d", res.Code)
		}
		clitest.LegacyCheckEnd(t, l, untouched)
		return
	}
	if res.Code != 3 {
		t.Fatalf("status incomplete but exit %d:\n%s", res.Code, res)
	}
	clitest.MustCustody(t, l.Repo, 0, "migrate", "apply", "migrate.json", "--allow-external-retirement")
	clitest.LegacyCheckEnd(t, l, untouched)
}

func TestMigrateCrash(t *testing.T) {
	t.Parallel()
	// Every migrate/ point is killed at. The points migrate reuses from the
	// removal, archive and relocation (each killed at on its own by
	// TestCrash, TestArchiveCrash and TestRelocateCrash) are all killed at
	// under fixtures.Full; bounded, one per step it reuses: the instant
	// just after its destructive act (each run builds and migrates the
	// whole legacy layout, about 8 s of a core).
	bounded := map[string]bool{"apply/after-remove": true, "archive/after-rename": true, "relocate/after-move": true}
	points := mgCrashPoints()
	for p := range bounded {
		if !slices.Contains(points, p) {
			t.Fatalf("bounded crash point %s is not one migrate apply passes (%v)", p, points)
		}
	}
	for _, point := range points {
		if !strings.HasPrefix(point, "migrate/") && !fixtures.Full() && !bounded[point] {
			continue
		}
		t.Run(strings.ReplaceAll(point, "/", "_"), func(t *testing.T) {
			t.Parallel()
			l, untouched := mgReady(t)
			if !mgKilledAt(t, l.Repo, point) {
				if strings.HasPrefix(point, "migrate/") {
					t.Fatalf("failpoint %s was never reached by migrate apply", point)
				}
				t.Skipf("migrate apply of the legacy layout does not pass %s", point)
			}
			st := clitest.MigrateStatus(t, l.Repo, 3)
			if st.Complete {
				t.Fatalf("killed at %s, status reports completion: %+v", point, st)
			}
			mgAfterKill(t, l, untouched)
		})
	}
	// Random instants: the uninterrupted apply is killed after a random
	// fraction of its own duration.
	instants := 1
	if fixtures.Full() {
		instants = 4
	}
	for i := range instants {
		t.Run("random-"+string(rune('a'+i)), func(t *testing.T) {
			t.Parallel()
			l, untouched := mgReady(t)
			cmd := exec.Command(clitest.Bin(), "migrate", "apply", "migrate.json", "--allow-external-retirement")
			cmd.Dir = l.Dir
			cmd.Env = l.Env()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Duration(rand.Int64N(int64(3 * time.Second))))
			_ = cmd.Process.Signal(syscall.SIGKILL)
			_ = cmd.Wait()
			mgAfterKill(t, l, untouched)
		})
	}
}
