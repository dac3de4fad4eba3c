//go:build unix

package deadline

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
)

// TestResourceChildOutlivesKilledCustody: custody new is SIGKILLed while a
// resource's create runs; the create (its own process group) outlives it.
// custody resume, run at once, ends that group before it undoes and
// redoes the create: the log shows the first create never ran on alongside
// resume's destroy or the second create, and the resource is made exactly
// once.
func TestResourceChildOutlivesKilledCustody(t *testing.T) {
	t.Parallel()
	// The first create (the one custody is killed under) sleeps long, so
	// whether resume ended it does not depend on how fast this machine is.
	create := "echo start $$ >> {EXT}/log; if rm {EXT}/slow 2>/dev/null; then sleep 60; fi; echo end $$ >> {EXT}/log; mkdir {EXT}/@resource@ || echo twice $$ >> {EXT}/log"
	destroy := "echo destroy >> {EXT}/log; rm -rf {EXT}/@resource@"
	w := rkSlowWorld(t, create, destroy)
	bg := clitest.StartCustody(t, w.R, nil, "new", "killed")
	first, pid := rkFirstStart(t, w, "start")
	if err := bg.Cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = bg.Cmd.Wait()
	defer func() { _ = syscall.Kill(-pid, syscall.SIGKILL) }()
	res := clitest.Custody(t, w.R, "resume", "--json")
	if res.Code != 0 {
		t.Fatalf("resume: %s", res)
	}
	// Resume ended the outliving create before its redo: the process is
	// gone (it would sleep for a minute otherwise).
	if err := rkAlive(pid); err != nil {
		t.Errorf("the killed custody's create (pid %d) still runs after resume: %v", pid, err)
	}
	lines := w.LogLines(t)
	var redo string
	for i, l := range lines {
		f := strings.Fields(l)
		switch {
		case len(f) == 2 && f[1] == first[1] && i > 0:
			t.Errorf("the killed custody's create (pid %s) went on after it was killed: log %q", first[1], lines)
		case len(f) == 2 && f[0] == "twice":
			t.Errorf("the resource was made twice: log %q", lines)
		case len(f) == 2 && f[0] == "start" && i > 0:
			redo = f[1]
		}
	}
	if want := []string{"start " + first[1], "destroy", "start " + redo, "end " + redo}; redo == "" || !slices.Equal(lines, want) {
		t.Errorf("log %q, want %q", lines, want)
	}
	rkMadeOnce(t, w)
}

// TestResourceDestroyOutlivesKilledCustody: custody apply is SIGKILLed
// while a resource's destroy runs; resume, run at once, ends the outliving
// destroy before it runs the destroy again, so the two never overlap, and
// the entry ends tombstoned with the destroy run to its end once.
func TestResourceDestroyOutlivesKilledCustody(t *testing.T) {
	t.Parallel()
	// The first destroy (the one custody is killed under) sleeps long, so
	// whether resume ended it does not depend on how fast this machine is;
	// the redo runs at once.
	destroy := "echo dstart $$ >> {EXT}/log; if rm {EXT}/slow 2>/dev/null; then sleep 60; fi; echo dend $$ >> {EXT}/log; rm -rf {EXT}/@resource@"
	w := clitest.SetupResources(t, clitest.ResourceDecl("db", "mkdir {EXT}/@resource@", destroy), fixtures.Options{})
	made := w.New(t, "dkill")
	clitest.MustCustody(t, w.R, 0, "finish", made.ID)
	plan := filepath.Join(w.R.Root, "plan.json")
	clitest.MustCustody(t, w.R, 0, "plan", "-o", plan)
	if err := os.WriteFile(filepath.Join(w.Ext, "slow"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	bg := clitest.StartCustody(t, w.R, nil, "apply", plan)
	first, pid := rkFirstStart(t, w, "dstart")
	if err := bg.Cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = bg.Cmd.Wait()
	defer func() { _ = syscall.Kill(-pid, syscall.SIGKILL) }()
	if res := clitest.Custody(t, w.R, "resume", "--json"); res.Code != 0 {
		t.Fatalf("resume: %s", res)
	}
	// The outliving destroy was ended before the redo ran: its process is
	// gone (it would sleep for a minute otherwise) and it never finished.
	if err := rkAlive(pid); err != nil {
		t.Errorf("the killed custody's destroy (pid %d) still runs after resume: %v", pid, err)
	}
	lines := w.LogLines(t)
	if len(lines) != 3 || lines[0] != "dstart "+first[1] || !strings.HasPrefix(lines[1], "dstart ") || lines[2] != "dend "+strings.TrimPrefix(lines[1], "dstart ") {
		t.Errorf("log %q: want the killed custody's destroy (pid %s) ended, then one destroy run to its end", lines, first[1])
	}
	if e := w.Entry(t, made.ID+"/db"); e.State != machine.StateTombstoned || e.Intent != nil {
		t.Errorf("entry after resume: %s %+v", e.State, e.Intent)
	}
	if w.Exists(t, w.Handle(made.ID, "db")) {
		t.Errorf("the resource still exists after resume")
	}
}

// TestResourceCreateEndsOnHangup: the terminal custody new runs in closes
// (SIGHUP) — or it is told to stop (SIGTERM) — while a resource's create
// runs. custody ends the create's whole process group before it exits, so
// nothing of the first create runs on; custody resume then makes the
// resource exactly once.
func TestResourceCreateEndsOnHangup(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			// The first create starts a grandchild that would log after
			// the signal, and sleeps long itself.
			create := "echo start $$ >> {EXT}/log; if rm {EXT}/slow 2>/dev/null; then (sleep 3; echo grandchild $$ >> {EXT}/log) & sleep 60; fi; echo end $$ >> {EXT}/log; mkdir {EXT}/@resource@ || echo twice $$ >> {EXT}/log"
			destroy := "echo destroy >> {EXT}/log; rm -rf {EXT}/@resource@"
			w := rkSlowWorld(t, create, destroy)
			b := dlStart(t, w.R, nil, "new", "hangup")
			first, pid := rkFirstStart(t, w, "start")
			defer func() { _ = syscall.Kill(-pid, syscall.SIGKILL) }()
			dlSignal(t, b, sig)
			res, _ := dlWaitExit(t, b, 15*time.Second, "new under "+sig.String())
			dlAssertInterrupted(t, res, sig, "new", "custody resume settles")
			if err := rkAlive(pid); err != nil {
				t.Errorf("the create (pid %d) still runs after custody ended on %v: %v", pid, sig, err)
			}
			// The grandchild would have logged 3 s after the create began.
			time.Sleep(4 * time.Second)
			clitest.MustCustody(t, w.R, 0, "resume")
			lines := w.LogLines(t)
			var made int
			for _, l := range lines {
				f := strings.Fields(l)
				switch {
				case f[0] == "grandchild" || f[0] == "twice" || f[0] == "end" && f[1] == first[1]:
					t.Errorf("%q: the first create's group ran on after %v, or the resource was made twice: log %q", l, sig, lines)
				case f[0] == "end":
					made++
				}
			}
			if made != 1 {
				t.Errorf("the resource was made %d times, want once: log %q", made, lines)
			}
			rkMadeOnce(t, w)
		})
	}
}

// rkSlowWorld is a repository with one resource db (create and destroy as
// given, {EXT} the scratch directory) whose first create finds {EXT}/slow
// and so runs long.
func rkSlowWorld(t *testing.T, create, destroy string) *clitest.World {
	t.Helper()
	w := clitest.SetupResources(t, clitest.ResourceDecl("db", create, destroy), fixtures.Options{})
	if err := os.WriteFile(filepath.Join(w.Ext, "slow"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return w
}

// rkFirstStart waits for the first command to log "<word> <pid>" and to
// take the slow marker (so it is the run that sleeps), and returns that
// line's fields and the pid.
func rkFirstStart(t *testing.T, w *clitest.World, word string) ([]string, int) {
	t.Helper()
	// The log may exist before its first line is written, and the line
	// comes before the marker is taken.
	for deadline := time.Now().Add(20 * time.Second); !strings.HasSuffix(rkRead(t, w), "\n") || w.Exists(t, "slow"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the first %s never started; log %q", word, w.LogLines(t))
		}
	}
	first := strings.Fields(w.LogLines(t)[0])
	if len(first) != 2 || first[0] != word {
		t.Fatalf("log starts with %q", w.LogLines(t))
	}
	pid, err := strconv.Atoi(first[1])
	if err != nil {
		t.Fatal(err)
	}
	return first, pid
}

// rkRead returns the log's bytes ("" when it does not exist yet).
func rkRead(t *testing.T, w *clitest.World) string {
	t.Helper()
	b, err := os.ReadFile(w.Log)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return string(b)
}

// rkAlive returns an error when process pid still runs: neither gone nor
// a zombie (an orphan ended by custody is reaped by whoever inherited it,
// which may take a moment).
func rkAlive(pid int) error {
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		st, ok := dlStat(pid)
		if !ok || st.state == "Z" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("process %d is in state %s", pid, st.state)
		}
	}
}

// rkMadeOnce checks that the ledger holds exactly one live entry, active
// and without an intent, and that its resource exists.
func rkMadeOnce(t *testing.T, w *clitest.World) {
	t.Helper()
	recs := w.Ledger(t, true)
	var live []machine.Resource
	for _, r := range recs {
		if r.State != machine.StateTombstoned {
			live = append(live, r)
		}
	}
	if len(live) != 1 || live[0].State != machine.StateActive || live[0].Intent != nil {
		t.Fatalf("ledger after resume: %+v, want one active entry without an intent", recs)
	}
	if fi, err := os.Stat(filepath.Join(w.Ext, live[0].Handle)); err != nil || !fi.IsDir() {
		t.Errorf("the resource %s does not exist after resume: %v", live[0].Handle, err)
	}
}
