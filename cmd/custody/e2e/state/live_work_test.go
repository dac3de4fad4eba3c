//go:build unix

package state

// Another custody's live work: an intent whose holder is another process
// on this host, alive at that moment, is its work in progress. Real
// concurrent processes, held at named pause points of the failpoint build
// (never timed with sleeps), show that resume reports it in progress
// (pid, command, since) without a take-over, that every other mutating
// command says nothing of it, that doctor does not count it, and that a
// lock timeout names the process that really holds the state file.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/cmd/custody/internal/output"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
)

// TestLiveWorkIsInProgress: while an apply is held right after committing
// its removal intent, another custody's resume, new and doctor report it
// in progress or say nothing of it, and never advise taking it over; once
// the apply is let go it removes the tree as if alone.
func TestLiveWorkIsInProgress(t *testing.T) {
	t.Parallel()
	r := fixtures.New(t, fixtures.Options{})
	clitest.MustCustody(t, r, 0, "init")
	id, path := clitest.NewTree(t, r, "held")
	clitest.MustCustody(t, r, 0, "finish", id)
	plan := clitest.PlanOutside(t, r, 0)
	release, wait, pid := clitest.PausedPID(t, r, "apply/after-intent", "apply", plan)
	progress := fmt.Sprintf("removal in progress (pid %d, command custody-failpoint apply %s, since ", pid, machine.ShowName(plan))

	// A mutating command resumes first, and says nothing of it.
	res := clitest.MustCustody(t, r, 0, "new", "beside")
	if res.Stderr != "" {
		t.Errorf("custody new beside another custody's live removal says something of it:\n%s", res)
	}
	// resume reports it in progress, exits 0, and offers no take-over.
	res = clitest.MustCustody(t, r, 0, "resume")
	if want := "in-progress " + id + ": " + progress; !strings.Contains(res.Stdout, want) {
		t.Errorf("custody resume does not say %q:\n%s", want, res)
	}
	if strings.Contains(res.Stdout+res.Stderr, "take-over") || strings.Contains(res.Stdout+res.Stderr, "to retry") {
		t.Errorf("custody resume advises something about another custody's live work:\n%s", res)
	}
	items := clitest.DecodeResult[clitest.ItemsResult[steps.ResumeItem]](t, clitest.MustCustody(t, r, 0, "resume", "--json"), "resume").Items
	if len(items) != 1 || items[0].ID != id || items[0].Outcome != machine.OutcomeInProgress || items[0].Refusal != nil ||
		items[0].Progress == nil || items[0].Progress.PID != pid || items[0].Progress.Intent != machine.IntentRemoval ||
		items[0].Progress.Since.IsZero() || !strings.HasPrefix(items[0].Progress.Command, "custody-failpoint apply ") {
		t.Errorf("custody resume --json: want %s in progress under pid %d, got %+v", id, pid, items)
	}
	// doctor lists it in progress and counts no problem.
	res = clitest.MustCustody(t, r, 0, "doctor")
	if want := "worktree " + id + ": " + progress; !strings.Contains(res.Stdout, want) || !strings.HasSuffix(res.Stdout, "OK\n") {
		t.Errorf("custody doctor: want %q and OK:\n%s", want, res)
	}
	d := clitest.DecodeResult[output.DoctorResult](t, clitest.MustCustody(t, r, 0, "doctor", "--json"), "doctor")
	if len(d.Problems) != 0 || len(d.InProgress) != 1 || d.InProgress[0].ID != id || d.InProgress[0].Progress.PID != pid {
		t.Errorf("custody doctor --json: want no problem and %s in progress, got %+v", id, d)
	}

	release()
	if res := wait(); res.Code != 0 {
		t.Fatalf("the held apply, let go: %s", res)
	}
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Errorf("the held apply, let go, left the tree: %v", err)
	}
	clitest.MustCustody(t, r, 0, "doctor")
	if res := clitest.MustCustody(t, r, 0, "resume"); !strings.Contains(res.Stdout, "nothing to resume") {
		t.Errorf("after the apply ended, resume: %s", res)
	}
}

// TestDoctorLiveNew: a custody new held after its create intent is in
// progress for doctor (exit 0); the same intent left by a new that was
// killed there is a problem (exit 3) that resume settles.
func TestDoctorLiveNew(t *testing.T) {
	t.Parallel()
	r := fixtures.New(t, fixtures.Options{})
	clitest.MustCustody(t, r, 0, "init")
	release, wait, pid := clitest.PausedPID(t, r, "new/after-intent", "new", "live")
	res := clitest.MustCustody(t, r, 0, "doctor")
	if want := fmt.Sprintf(": create in progress (pid %d, command custody-failpoint new live, since ", pid); !strings.Contains(res.Stdout, want) ||
		strings.Contains(res.Stdout, "unfinished") || !strings.HasSuffix(res.Stdout, "OK\n") {
		t.Errorf("custody doctor beside a live custody new: want %q and OK:\n%s", want, res)
	}
	release()
	if res := wait(); res.Code != 0 {
		t.Fatalf("the held new, let go: %s", res)
	}
	clitest.MustCustody(t, r, 0, "doctor")

	clitest.MustBeKilled(t, r, "new/after-intent", "new", "killed")
	res = clitest.MustCustody(t, r, 3, "doctor")
	if !strings.Contains(res.Stdout, "carries an unfinished create intent") || strings.Contains(res.Stdout, "in progress") {
		t.Errorf("custody doctor after a killed new: want its unfinished intent as a problem:\n%s", res)
	}
	clitest.MustCustody(t, r, 0, "resume")
	clitest.MustCustody(t, r, 0, "doctor")
}

// TestLockTimeoutNamesTheHolder: a command that waits for the state file
// in vain names the process that holds it, read from the kernel: another
// custody (held inside a write transaction) is named as one, with its
// command; a process that is not custody (this test, holding the lock
// itself) is named as not custody, and nothing claims another custody is
// running.
func TestLockTimeoutNamesTheHolder(t *testing.T) {
	t.Parallel()
	r := fixtures.New(t, fixtures.Options{})
	clitest.MustCustody(t, r, 0, "init")
	state := filepath.Join(r.Dir, ".git", "custody", "state.db")

	release, wait, pid := clitest.PausedPID(t, r, "state/write-locked", "new", "writer")
	res := clitest.MustCustody(t, r, 1, "--lock-timeout", "200ms", "list")
	if want := fmt.Sprintf("held by another custody: pid %d on ", pid); !strings.Contains(res.Stderr, want) ||
		!strings.Contains(res.Stderr, "custody-failpoint new writer) since ") || !strings.Contains(res.Stderr, "Another custody is still running in this repository.") {
		t.Errorf("a lock held by a custody new: want %q, its command, and another custody running:\n%s", want, res)
	}
	release()
	if res := wait(); res.Code != 0 {
		t.Fatalf("the held new, let go: %s", res)
	}

	letGo := clitest.HoldLock(t, state)
	res = clitest.MustCustody(t, r, 1, "--lock-timeout", "200ms", "list")
	if want := fmt.Sprintf("held by pid %d (", os.Getpid()); !strings.Contains(res.Stderr, want) || !strings.Contains(res.Stderr, "which is not custody") ||
		!strings.Contains(res.Stderr, "It is not custody") || strings.Contains(res.Stderr, "another custody") || strings.Contains(res.Stderr, "Another custody") {
		t.Errorf("a lock held by this test: want %q named as not custody, and no other custody claimed:\n%s", want, res)
	}
	letGo()
	clitest.MustCustody(t, r, 0, "list")
}
