package main

// Review of issue 4 (per-worktree resources): tests that pin behaviour the
// issue asks for. Tests named TestReviewBug* fail on the code as reviewed
// and assert the correct behaviour; TestReviewCover* fill coverage gaps and
// pass. Helpers carry the prefix rv so they cannot collide with the other
// test files of this package; the rt* helpers come from resource_test.go.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
)

// rvWaitFile waits until path exists.
func rvWaitFile(t testing.TB, path string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		if _, err := os.Lstat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not appear within %v", path, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// rvStart starts the ordinary binary in the main checkout without waiting.
func rvStart(t testing.TB, r *fixtures.Repo, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(custodyBin, args...)
	cmd.Dir = r.Dir
	cmd.Env = r.Env()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return cmd, &out, &errb
}

// rvWait waits for a started command and returns its result.
func rvWait(t testing.TB, cmd *exec.Cmd, out, errb *bytes.Buffer) result {
	t.Helper()
	err := cmd.Wait()
	res := result{Stdout: out.String(), Stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.Code = ee.ExitCode()
	default:
		t.Fatalf("wait: %v", err)
	}
	return res
}

// TestReviewBugCreateLargeOutput: a create that succeeds but prints more
// than the runner's 1 MiB bound is a successful create whose output is kept
// bounded. Observed: the runner's ErrOutputTooLarge makes it "exit -1", so
// a required create rolls `custody new` back (and a destroy that prints as
// much is recorded as failed and run again by GC).
func TestReviewBugCreateLargeOutput(t *testing.T) {
	t.Parallel()
	noisy := "head -c 3000000 /dev/zero | tr '\\0' x; mkdir {EXT}/@resource@ && echo create @resource@ >> {EXT}/log"
	w := rtSetup(t, rtRes("db", noisy, ""), fixtures.Options{})
	res := custody(t, w.r, "new", "noisy", "--json")
	if res.Code != 0 {
		t.Fatalf("custody new with a create that exits 0 after printing 3 MB: want exit 0, got %d\n%.600s", res.Code, res.Stderr)
	}
	made := decodeResult[steps.NewResult](t, res, "new")
	e := w.entry(t, made.ID+"/db")
	if e.State != machine.StateActive || e.Evidence.ExitCode != 0 {
		t.Errorf("entry: %s exit %d, want active exit 0", e.State, e.Evidence.ExitCode)
	}
	if len(e.Evidence.Output) > 8<<10 {
		t.Errorf("ledger keeps %d bytes of output", len(e.Evidence.Output))
	}
}

// TestReviewBugUnexpandedBehindApostrophe: a frozen command still carrying
// an @token@ is refused, never half-run, even when an apostrophe inside
// double quotes comes before it (sh does not start a single-quoted string
// there). Observed: machine.Unexpanded treats the apostrophe as an opening
// quote, hides @nosuchtoken@, and `custody new` runs the command.
func TestReviewBugUnexpandedBehindApostrophe(t *testing.T) {
	t.Parallel()
	create := `echo "it's" >/dev/null; mkdir {EXT}/@nosuchtoken@; echo create ran >> {EXT}/log`
	w := rtSetup(t, rtRes("db", create, ""), fixtures.Options{})
	res := custody(t, w.r, "new", "tok", "--json")
	if res.Code != 1 {
		t.Errorf("custody new: want exit 1 (refused), got %d", res.Code)
	} else if ref := decodeError(t, res); !strings.Contains(ref.Message, "@nosuchtoken@") {
		t.Errorf("refusal does not name @nosuchtoken@: %+v", ref)
	}
	if lines := w.logLines(t); len(lines) != 0 {
		t.Errorf("the command with an unexpanded token ran: log %q", lines)
	}
	if _, err := os.Lstat(filepath.Join(w.ext, "@nosuchtoken@")); err == nil {
		t.Errorf("%s/@nosuchtoken@ was made by a half-expanded command", w.ext)
	}
}

// rvSlowGit writes a git wrapper that sleeps before `git worktree list`,
// widening the window between a command's reads and its commit, and returns
// the fixture's environment with the wrapper first on PATH.
func rvSlowGit(t testing.TB, r *fixtures.Repo) []string {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git on PATH")
	}
	dir := t.TempDir()
	script := "#!/bin/sh\ncase \"$*\" in *\"worktree list\"*) sleep 0.5;; esac\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	env := r.Env()
	for i, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			env[i] = "PATH=" + dir + string(os.PathListSeparator) + v
		}
	}
	return env
}

// TestReviewBugPortsDistinctUnderConcurrentNew: @port@ is collision-checked
// against live worktrees, so no two live worktrees hold the same port, even
// when made at once. Observed: portFor reads the records, and the create
// intent commits without re-checking, so parallel `custody new` with
// port_span = 1 all get port 30000. (git is slowed down only to make the
// race certain; it happens without, too.)
func TestReviewBugPortsDistinctUnderConcurrentNew(t *testing.T) {
	t.Parallel()
	toml := "[worktree]\nport_base = 30000\nport_span = 1\n\n" +
		"[resources.srv]\ncreate = '''echo @port@ >> {EXT}/ports'''\ndestroy = '''true'''\n"
	w := rtSetup(t, toml, fixtures.Options{})
	env := rvSlowGit(t, w.r)
	const n = 3
	results := make([]result, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(custodyBin, "new", fmt.Sprintf("p%d", i), "--json", "--lock-timeout", "60s")
			cmd.Dir, cmd.Env = w.r.Dir, env
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			err := cmd.Run()
			results[i] = result{Stdout: out.String(), Stderr: errb.String()}
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				results[i].Code, err = ee.ExitCode(), nil
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	held := map[int][]string{}
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("new #%d: %v", i, errs[i])
		}
		if results[i].Code != 0 {
			continue // refused: every port is held
		}
		made := decodeResult[steps.NewResult](t, results[i], "new")
		held[made.Port] = append(held[made.Port], made.ID)
	}
	for port, ids := range held {
		if len(ids) > 1 {
			t.Errorf("live worktrees %v all hold @port@ %d", ids, port)
		}
	}
}

// TestReviewBugApplyRacingGC: while apply tears down a removed tree's
// resources, `custody resource gc` may reclaim one of them (its worktree is
// provably gone). Apply must then count it as done, not fail. Observed:
// apply's teardown commits on a stale ledger entry, gets ErrConflict and
// exits 1 ("record changed concurrently") although the tree was removed and
// every resource destroyed once.
func TestReviewBugApplyRacingGC(t *testing.T) {
	t.Parallel()
	slow := "touch {EXT}/b-started; sleep 3; rm -rf {EXT}/@resource@ && echo destroy @resource@ >> {EXT}/log"
	w := rtSetup(t, rtRes("a", "", "")+rtRes("b", "", slow), fixtures.Options{})
	made := w.rtNew(t, "race")
	mustCustody(t, w.r, 0, "finish", made.ID)
	plan := filepath.Join(w.r.Root, "plan.json")
	mustCustody(t, w.r, 0, "plan", "-o", plan)

	cmd, out, errb := rvStart(t, w.r, "apply", plan, "--json")
	rvWaitFile(t, filepath.Join(w.ext, "b-started"), 30*time.Second) // b (torn down first) is being destroyed
	g := decodeResult[gcResult](t, mustCustody(t, w.r, 0, "resource", "gc", "--json"), "resource gc")
	t.Logf("gc: %v", rtGCOutcomes(g))
	res := rvWait(t, cmd, out, errb)
	if res.Code == 1 {
		t.Errorf("apply exited 1 because gc reclaimed a sibling resource meanwhile:\n%s", res)
	}
	lines := w.logLines(t)
	for _, n := range []string{"a", "b"} {
		h := w.handle(made.ID, n)
		if c := rtCount(lines, "destroy "+h); c != 1 {
			t.Errorf("%s destroyed %d times, want once: %q", h, c, lines)
		}
		if e := w.entry(t, made.ID+"/"+n); e.State != machine.StateTombstoned {
			t.Errorf("entry %s is %s, want tombstoned", e.ID, e.State)
		}
	}
}

// TestReviewBugConcurrentResumeDestroysOnce: after a crash between a destroy
// intent and the destroy, resume converges with the external effect exactly
// once, even when two custody processes resume at the same time (every
// mutating command resumes first). Observed: both see the dead holder and
// both run the frozen destroy; the loser exits 1 on the ledger conflict.
func TestReviewBugConcurrentResumeDestroysOnce(t *testing.T) {
	t.Parallel()
	destroy := "sleep 2; echo destroy @resource@ >> {EXT}/log; rm -rf {EXT}/@resource@"
	w := rtSetup(t, rtRes("db", "", destroy), fixtures.Options{})
	made := w.rtNew(t, "crash")
	mustCustody(t, w.r, 0, "finish", made.ID)
	plan := filepath.Join(w.r.Root, "plan.json")
	mustCustody(t, w.r, 0, "plan", "-o", plan)
	w.rtKilled(t, "resource/after-destroy-intent", "apply", plan)

	const n = 2
	results := make([]result, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = rtRun(custodyBin, w.r, "resume", "--lock-timeout", "60s")
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("resume #%d: %v", i, errs[i])
		}
		if results[i].Code == 1 {
			t.Errorf("resume #%d exited 1:\n%s", i, results[i])
		}
	}
	h := w.handle(made.ID, "db")
	if c := rtCount(w.logLines(t), "destroy "+h); c != 1 {
		t.Errorf("%s destroyed %d times by two concurrent resumes, want exactly once: %q", h, c, w.logLines(t))
	}
}

// TestReviewBugIdentityAfterSlugChange: `custody resource identity`, the
// ledger and the tree's .env all yield the same handle. Observed: identity
// recomputes the handle from the current custody.toml, so after [project]
// slug changes it prints a handle no resource has, while the ledger and
// .env keep the frozen one.
func TestReviewBugIdentityAfterSlugChange(t *testing.T) {
	t.Parallel()
	w := rtSetup(t, "[project]\nslug = \"alpha\"\n\n"+rtRes("db", "", ""), fixtures.Options{})
	made := w.rtNew(t, "ident")
	frozen := w.entry(t, made.ID+"/db").Handle
	w.r.WriteFile(w.r.Dir, "custody.toml", w.x("[project]\nslug = \"beta\"\n\n"+rtRes("db", "", "")))
	got := strings.TrimSpace(mustCustody(t, w.r, 0, "resource", "identity", "db", "--id", made.ID).Stdout)
	if got != frozen {
		t.Errorf("resource identity db = %q, but the ledger and .env hold %q", got, frozen)
	}
	if b, _ := os.ReadFile(filepath.Join(made.Path, ".env")); !strings.Contains(string(b), "="+frozen+"\n") {
		t.Errorf(".env does not hold %s: %q", frozen, b)
	}
}

// TestReviewBugEnvUserLineShapedLikeCustodys: a .env line custody did not
// write is the user's and keeps the tree, even when it is shaped like
// custody's (CUSTODY_RESOURCE_<X>=<value>). Observed: observe's
// dropOwnEnv accepts any line matching the pattern, so plan removes the
// tree and the user's line is lost.
func TestReviewBugEnvUserLineShapedLikeCustodys(t *testing.T) {
	t.Parallel()
	w := rtSetup(t, rtRes("db", "", ""), fixtures.Options{})
	made := w.rtNew(t, "env")
	env := filepath.Join(made.Path, ".env")
	f, err := os.OpenFile(env, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, "CUSTODY_RESOURCE_SEARCH=my-own-shared-index")
	f.Close()
	mustCustody(t, w.r, 0, "finish", made.ID)
	items := w.plan(t, "")
	it, ok := rtPlanItemOf(t, items, made.ID)
	if !ok {
		t.Fatalf("plan has no item %s: %+v", made.ID, items)
	}
	if it.Action != "keep" {
		t.Errorf("plan would %s %s, whose .env holds a line the user wrote", it.Action, made.ID)
	}
}

// TestReviewBugInterruptStopsProvisioning: an interrupt during `custody new`
// lets the running create finish (its own timeout bounds it) but starts no
// further resource command. Observed: provisionResources never checks the
// context, so every remaining create still runs after Ctrl-C.
func TestReviewBugInterruptStopsProvisioning(t *testing.T) {
	t.Parallel()
	toml := ""
	for _, n := range []string{"a", "b", "c"} {
		toml += rtRes(n, "echo create "+n+" >> {EXT}/log; touch {EXT}/started-"+n+"; sleep 2", "echo destroy "+n+" >> {EXT}/log")
	}
	w := rtSetup(t, toml, fixtures.Options{})
	cmd, out, errb := rvStart(t, w.r, "new", "interrupted")
	rvWaitFile(t, filepath.Join(w.ext, "started-a"), 30*time.Second)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	res := rvWait(t, cmd, out, errb)
	t.Logf("custody new after SIGINT: %s", res)
	for _, l := range w.logLines(t) {
		if l == "create b" || l == "create c" {
			t.Errorf("after the interrupt, custody new still started %q: log %q", l, w.logLines(t))
		}
	}
}

// TestReviewBugEnsureUnknownWorktree: `custody resource ensure ID` for an
// id that names no worktree is refused like `resource identity --id` is.
// Observed: exit 0, "no ensure commands to run".
func TestReviewBugEnsureUnknownWorktree(t *testing.T) {
	t.Parallel()
	w := rtSetup(t, rtRes("db", "", ""), fixtures.Options{})
	res := custody(t, w.r, "resource", "ensure", "nope-000000", "--json")
	if res.Code != 1 {
		t.Fatalf("resource ensure of an unknown id: want exit 1, got\n%s", res)
	}
	if ref := decodeError(t, res); ref.Code != string(machine.CodeUnknownRecord) {
		t.Errorf("want %s, got %+v", machine.CodeUnknownRecord, ref)
	}
}

// TestReviewBugRollbackNamesFailedDestroy: when a required create fails and
// an earlier resource's destroy also fails during the rollback, the error
// says so (that resource still exists and waits for GC). Observed: the
// message claims "earlier resources destroyed".
func TestReviewBugRollbackNamesFailedDestroy(t *testing.T) {
	t.Parallel()
	w := rtSetup(t, rtRes("a", "", "echo destroy a >> {EXT}/log; exit 1")+rtRes("b", "exit 1", ""), fixtures.Options{})
	ref := decodeError(t, mustCustody(t, w.r, 1, "new", "doomed", "--json"))
	recs := w.records(t)
	if len(recs) != 1 {
		t.Fatalf("records: %+v", recs)
	}
	ha := w.handle(recs[0].ID, "a")
	if !w.exists(t, ha) {
		t.Fatalf("scene: %s should still exist after its failed destroy", ha)
	}
	if !strings.Contains(ref.Message, ha) || strings.Contains(ref.Message, "earlier resources destroyed") {
		t.Errorf("the rollback error hides that %s was not destroyed: %q", ha, ref.Message)
	}
}

// TestReviewCoverTokens: every token of the issue expands to its value
// (coverage: @port@, @slug@, @branch@, @id@, @repo@, @resource_ident@ had
// no end-to-end test).
func TestReviewCoverTokens(t *testing.T) {
	t.Parallel()
	create := "printf '%s\\n' @resource@ @resource_ident@ @id@ @dir@ @branch@ @port@ @slug@ @repo@ > {EXT}/@resource@"
	w := rtSetup(t, "[project]\nslug = \"shop\"\n[worktree]\nport_base = 40000\nport_span = 3\n\n"+rtRes("db", create, ""), fixtures.Options{})
	var ports []int
	for i := range 3 {
		made := w.rtNew(t, fmt.Sprintf("tok %d", i))
		h := w.handle(made.ID, "db")
		b, err := os.ReadFile(filepath.Join(w.ext, h))
		if err != nil {
			t.Fatal(err)
		}
		want := strings.Join([]string{h, strings.ReplaceAll(h, "-", "_"), made.ID, made.Path, made.Branch,
			strconv.Itoa(made.Port), "shop", w.r.Dir}, "\n") + "\n"
		if string(b) != want {
			t.Errorf("expanded tokens:\n%s\nwant:\n%s", b, want)
		}
		if made.Port < 40000 || made.Port > 40002 {
			t.Errorf("port %d outside port_base..port_base+span-1", made.Port)
		}
		ports = append(ports, made.Port)
	}
	if ports[0] == ports[1] || ports[1] == ports[2] || ports[0] == ports[2] {
		t.Errorf("live worktrees share a port: %v", ports)
	}
	// Every port is held: the next new is refused.
	mustCustody(t, w.r, 1, "new", "full")
}

// TestReviewCoverFrozenCommandsWin: custody.toml edited between new and
// removal does not change what runs: ensure and destroy run the frozen
// commands of the ledger (coverage gap).
func TestReviewCoverFrozenCommandsWin(t *testing.T) {
	t.Parallel()
	w := rtSetup(t, rtRes("db", "", ""), fixtures.Options{})
	made := w.rtNew(t, "frozen")
	h := w.handle(made.ID, "db")
	w.r.WriteFile(w.r.Dir, "custody.toml", w.x("[resources.cache]\ncreate = 'echo NEW cache >> {EXT}/log'\ndestroy = 'echo NEW cache destroy >> {EXT}/log'\n\n"+
		"[resources.db]\ncreate = 'echo NEW create >> {EXT}/log'\ndestroy = 'echo NEW destroy >> {EXT}/log'\nensure = 'echo NEW ensure >> {EXT}/log'\n"))
	mustCustody(t, w.r, 0, "resource", "ensure", made.ID)
	ap := w.removeTree(t, made.ID, 0)
	if len(ap.Items) != 1 || ap.Items[0].Outcome != "removed" {
		t.Fatalf("apply: %+v", ap)
	}
	w.wantLog(t, "create "+h, "ensure "+h, "destroy "+h)
}
