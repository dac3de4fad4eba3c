//go:build unix

package sweep_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/steps/archive"
	"github.com/custody-sh/custody/steps/custody"
	"github.com/custody-sh/custody/steps/sweep"
	"github.com/custody-sh/custody/store"
)

// sweepEnv is the environment of a command in r's main checkout after
// custody init, built by the one constructor the custody command uses
// (custody.NewEnv, every feature registered), and a clock later than real
// time by ahead: every file the test writes is then that much older than
// "now" (a change time cannot be set back). Every process custody runs
// sees r's environment.
func sweepEnv(t *testing.T, r *fixtures.Repo, ahead time.Duration) *steps.Env {
	t.Helper()
	for _, kv := range r.Env() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			t.Setenv(k, v)
		}
	}
	ctx := context.Background()
	g := hostio.NewGit(&hostio.Runner{})
	site, err := custody.Locate(ctx, g, r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenContext(ctx, site.StatePath(), 5*time.Second, true)
	if err != nil {
		t.Fatal(err)
	}
	e := custody.NewEnv(site, st, custody.Wiring{Git: g, Clock: custody.ClockFunc(func() time.Time { return time.Now().Add(ahead) }), Actor: "test", Wait: time.Second})
	if err := e.EnsureRoot(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ExcludeRoot(); err != nil {
		t.Fatal(err)
	}
	return e
}

// newTree makes a managed tree named name.
func newTree(t *testing.T, e *steps.Env, name string) steps.NewResult {
	t.Helper()
	res, err := steps.New(context.Background(), e, name, "", "")
	if err != nil {
		t.Fatalf("new %s: %v", name, err)
	}
	return res
}

// cargoTarget writes a Cargo target directory into tree (a tracked
// Cargo.toml, committed, and target/ with .rustc_info.json and n bytes of
// build output).
func cargoTarget(t *testing.T, r *fixtures.Repo, tree string, n int) {
	t.Helper()
	r.WriteFile(tree, "Cargo.toml", "[package]\nname = \"x\"\n")
	r.CommitAll(tree, "crate")
	r.WriteFile(tree, "target/.rustc_info.json", "{}\n")
	r.WriteFile(tree, "target/debug/x", strings.Repeat("b", n))
}

// TestSweepFleet: on a fleet with idle and busy trees, a dry run changes
// nothing and says what a sweep would free; the sweep then frees exactly
// the recognised build output of the idle trees (a live lease, a process
// standing in the tree and a recent write each keep a tree's output),
// archives the finished tree's unpublished work, removes no tree and
// changes no record's state, and journals each deletion.
func TestSweepFleet(t *testing.T) {
	r := fixtures.New(t, fixtures.Options{})
	e := sweepEnv(t, r, 2*time.Hour)
	ctx := context.Background()
	idle := newTree(t, e, "idle")
	leased := newTree(t, e, "leased")
	busy := newTree(t, e, "busy")
	recent := newTree(t, e, "recent")
	done := newTree(t, e, "done")
	// done: finished, with an unpushed commit and an untracked note.
	r.Commit(done.Path, "work.txt", "unpushed work\n")
	for _, tr := range []steps.NewResult{idle, leased, busy, recent, done} {
		cargoTarget(t, r, tr.Path, 3000)
	}
	r.WriteFile(done.Path, "notes.txt", "mine\n")
	if _, err := steps.Finish(ctx, e, []string{done.ID}); err != nil {
		t.Fatal(err)
	}
	// leased: a session holds it for the next day.
	if _, err := e.Store.ChangeLease(store.LeaseChange{Path: leased.Path, Key: leased.ID,
		Request: machine.LeaseRequest{Op: machine.LeaseAcquire, Session: "s1", Now: e.Now().UTC(), Duration: 24 * time.Hour}}); err != nil {
		t.Fatal(err)
	}
	// busy: a process stands in it (not this process's child: the scan
	// leaves custody's own children out, as they are custody's git).
	sh := exec.Command("sh", "-c", "sleep 300 >/dev/null 2>&1 & echo $!")
	sh.Dir = busy.Path
	out, err := sh.Output()
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	// recent: a file changed within the hour before the clock's now.
	fresh := filepath.Join(recent.Path, "src.txt")
	if err := os.WriteFile(fresh, []byte("editing\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	soon := time.Now().Add(90 * time.Minute)
	if err := os.Chtimes(fresh, soon, soon); err != nil {
		t.Fatal(err)
	}
	statesBefore := states(t, e)

	dry, err := sweep.Sweep(ctx, e, sweep.Options{Idle: time.Hour, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	byID := func(res sweep.Result) map[string]sweep.Tree {
		m := map[string]sweep.Tree{}
		for _, tr := range res.Trees {
			m[tr.ID] = tr
		}
		return m
	}
	d := byID(dry)
	for _, id := range []string{idle.ID, done.ID} {
		if tr := d[id]; !tr.Idle || len(tr.Discard) != 1 || tr.Discard[0].Path != "target" || tr.Discard[0].Kind != machine.BuildCargoTarget {
			t.Errorf("dry run %s: %+v; want idle, discarding target/ (cargo-target)", id, tr)
		}
	}
	for id, why := range map[string]string{leased.ID: "leased by s1", busy.ID: "(sleep) uses it", recent.ID: "src.txt changed"} {
		if tr := d[id]; tr.Idle || !strings.Contains(tr.Why, why) {
			t.Errorf("dry run %s: idle %v, why %q; want busy because %q", id, tr.Idle, tr.Why, why)
		}
	}
	if !d[done.ID].Archive || d[idle.ID].Archive {
		t.Errorf("dry run archives: done %v, idle %v; want done only", d[done.ID].Archive, d[idle.ID].Archive)
	}
	if dry.Bytes < 2*3000 || dry.Archived != 1 {
		t.Errorf("dry run frees %d bytes, archives %d; want ≥ %d and 1", dry.Bytes, dry.Archived, 2*3000)
	}
	for _, tr := range []steps.NewResult{idle, leased, busy, recent, done} {
		if _, err := os.Stat(filepath.Join(tr.Path, "target", "debug", "x")); err != nil {
			t.Errorf("the dry run changed %s: %v", tr.ID, err)
		}
	}
	if archives(t, e) != 0 {
		t.Errorf("the dry run captured an archive")
	}

	res, err := sweep.Sweep(ctx, e, sweep.Options{Idle: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	got := byID(res)
	for _, tr := range []steps.NewResult{idle, done} {
		if _, err := os.Lstat(filepath.Join(tr.Path, "target")); !os.IsNotExist(err) {
			t.Errorf("%s: target/ is still there (%v); sweep result %+v", tr.ID, err, got[tr.ID])
		}
		if _, err := os.Stat(filepath.Join(tr.Path, "Cargo.toml")); err != nil {
			t.Errorf("%s: the tree lost Cargo.toml: %v", tr.ID, err)
		}
		if ds := got[tr.ID].Discarded; len(ds) != 1 || ds[0].Freed < 3000 || ds[0].Skipped != "" || len(ds[0].Kept) != 0 {
			t.Errorf("%s discarded %+v; want target/ freed whole", tr.ID, ds)
		}
	}
	for _, tr := range []steps.NewResult{leased, busy, recent} {
		if _, err := os.Stat(filepath.Join(tr.Path, "target", "debug", "x")); err != nil {
			t.Errorf("%s is busy and lost its build output: %v", tr.ID, err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(done.Path, "notes.txt")); err != nil || string(b) != "mine\n" {
		t.Errorf("done lost notes.txt: %q %v", b, err)
	}
	if got[done.ID].ArchiveID == "" || archives(t, e) != 1 {
		t.Errorf("done: archive %q, %d archives; want one captured", got[done.ID].ArchiveID, archives(t, e))
	}
	if res.Bytes < 2*3000 {
		t.Errorf("sweep freed %d bytes; want ≥ %d", res.Bytes, 2*3000)
	}
	if after := states(t, e); !maps(statesBefore, after) {
		t.Errorf("record states changed: before %v, after %v", statesBefore, after)
	}
	var events []string
	if err := e.Store.Journal(idle.ID, func(_ []byte, en store.Entry) error {
		if en.Event != "" {
			events = append(events, en.Event+" "+string(en.Detail))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(events) != 2 || !strings.HasPrefix(events[0], "sweep-discard ") || !strings.HasPrefix(events[1], "swept ") ||
		!strings.Contains(events[0], `"kind":"cargo-target"`) || !strings.Contains(events[1], `"freed":`) {
		t.Errorf("journal of %s: %q; want the intent (path, kind, bytes) then the outcome", idle.ID, events)
	}
	// A second sweep finds nothing left to discard in the idle trees.
	again, err := sweep.Sweep(ctx, e, sweep.Options{Idle: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range again.Trees {
		if len(tr.Discarded) != 0 {
			t.Errorf("second sweep discarded %+v in %s", tr.Discarded, tr.ID)
		}
	}
}

// states maps each live record to its state.
func states(t *testing.T, e *steps.Env) map[string]machine.State {
	t.Helper()
	recs, err := e.Store.ListLive()
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]machine.State{}
	for _, r := range recs {
		if r.Kind == "" || r.Kind == machine.KindWorktree {
			m[r.ID] = r.State
		}
	}
	return m
}

// maps reports whether a and b hold the same entries.
func maps(a, b map[string]machine.State) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// archives counts the archives under the archives root.
func archives(t *testing.T, _ *steps.Env) int {
	t.Helper()
	root, err := archive.ArchivesRoot()
	if err != nil {
		t.Fatal(err)
	}
	list, err := archive.ListArchives(root)
	if err != nil {
		t.Fatal(err)
	}
	return len(list)
}

// TestSweepTimer: the systemd units sweep installs load in
// systemd-analyze (for a program path and a repository path with spaces,
// "%", "$" and a byte that is not UTF-8), a second install changes
// nothing, a file custody did not write is refused and left, and
// uninstall removes exactly what install wrote.
func TestSweepTimer(t *testing.T) {
	r := fixtures.New(t, fixtures.Options{Name: "re po$x%n\xff"})
	e := sweepEnv(t, r, 0)
	cfgHome := t.TempDir()
	getenv := func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return cfgHome
		}
		return os.Getenv(k)
	}
	bin := filepath.Join(t.TempDir(), "my cust%$x\xff")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tm, err := sweep.InstallTimer(e, sweep.Systemd, bin, getenv)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(cfgHome, "systemd", "user")
	name := machine.SweepTimerName(e.Repo.CommonDir)
	want := []string{filepath.Join(dir, name+".service"), filepath.Join(dir, name+".timer")}
	if !slices.Equal(tm.Files, want) || !tm.Changed || !strings.Contains(tm.Next, "systemctl --user enable --now "+name+".timer") {
		t.Errorf("install: %+v; want %q written and the enable command", tm, want)
	}
	if sa, err := exec.LookPath("systemd-analyze"); err == nil {
		out, err := exec.Command(sa, "verify", want[0], want[1]).CombinedOutput()
		if err != nil {
			t.Errorf("systemd-analyze verify: %v\n%s", err, out)
		}
	} else if os.Getenv("CUSTODY_CI_CHROMIUM") == "required" {
		t.Errorf("systemd-analyze is not installed; CI checks the units with it")
	} else {
		t.Log("systemd-analyze is not installed here: the units are not loaded by systemd in this run")
	}
	if again, err := sweep.InstallTimer(e, sweep.Systemd, bin, getenv); err != nil || again.Changed {
		t.Errorf("second install: %+v %v; want nothing changed", again, err)
	}
	// A file custody did not write is never overwritten nor removed.
	if err := os.WriteFile(want[1], []byte("[Timer]\nOnCalendar=hourly\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(want[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := sweep.InstallTimer(e, sweep.Systemd, bin, getenv); err == nil || !strings.Contains(err.Error(), "custody did not write it") {
		t.Errorf("install over a foreign timer: %v; want refused", err)
	}
	if _, err := os.Lstat(want[0]); !os.IsNotExist(err) {
		t.Errorf("a refused install wrote %s (%v); want nothing written", want[0], err)
	}
	// Put the service back as install wrote it: uninstall checks every
	// file before it removes any.
	if err := os.WriteFile(want[0], []byte(machine.SystemdSweepUnits(name, bin, e.Repo.MainCheckout)[0].Content), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := sweep.UninstallTimer(e, sweep.Systemd, getenv); err == nil {
		t.Errorf("uninstall removed a foreign timer")
	}
	if _, err := os.Stat(want[0]); err != nil {
		t.Errorf("a refused uninstall removed %s: %v", want[0], err)
	}
	if b, _ := os.ReadFile(want[1]); string(b) != "[Timer]\nOnCalendar=hourly\n" {
		t.Errorf("the foreign timer changed: %q", b)
	}
	if err := os.Remove(want[1]); err != nil {
		t.Fatal(err)
	}
	un, err := sweep.UninstallTimer(e, sweep.Systemd, getenv)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(un.Files, want[:1]) || !un.Changed {
		t.Errorf("uninstall: %+v; want the service removed", un)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left in %s: %v", dir, ents)
	}
}
