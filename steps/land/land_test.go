//go:build unix

package land_test

import (
	"context"
	"errors"
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
	"github.com/custody-sh/custody/steps/custody"
	"github.com/custody-sh/custody/steps/land"
	"github.com/custody-sh/custody/store"
)

// landEnv is the environment of a command in r's main checkout after
// custody init, built by the one constructor the custody command uses
// (custody.NewEnv, every feature registered). Every process custody runs
// sees r's environment.
func landEnv(t *testing.T, r *fixtures.Repo) *steps.Env {
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
	e := custody.NewEnv(site, st, custody.Wiring{Git: g, Actor: "test", Wait: time.Second})
	if err := e.EnsureRoot(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ExcludeRoot(); err != nil {
		t.Fatal(err)
	}
	return e
}

// tree makes a managed tree named name with one commit per file given.
func tree(t *testing.T, r *fixtures.Repo, e *steps.Env, name string, files ...string) steps.NewResult {
	t.Helper()
	res, err := steps.New(context.Background(), e, name, "", "")
	if err != nil {
		t.Fatalf("new %s: %v", name, err)
	}
	for _, f := range files {
		r.Commit(res.Path, f, "from "+name+"\n")
	}
	return res
}

// moveMain pushes a commit of file to origin's main from a scratch clone,
// as another person would, leaving the main checkout as it was.
func moveMain(t *testing.T, r *fixtures.Repo, file, content string) string {
	t.Helper()
	other := filepath.Join(r.Root, "other-"+strings.ReplaceAll(file, "/", "_"))
	r.GitIn(r.Root, "clone", "-q", r.Remote, other)
	r.Commit(other, file, content)
	r.GitIn(other, "push", "-q", "origin", "HEAD:refs/heads/main")
	return r.Head(other)
}

// remoteMain is origin's main now.
func remoteMain(t *testing.T, r *fixtures.Repo) string {
	t.Helper()
	return r.GitIn(r.Remote, "rev-parse", "refs/heads/main")
}

func opts(m machine.LandMethod, yes bool) land.Options {
	return land.Options{Method: m, Yes: yes, Retry: "custody land ID",
		RetryWith: func(m machine.LandMethod) string { return "custody land --" + string(m) + " ID" }}
}

// landEvents are the journal's events of record id, in order.
func journalEvents(t *testing.T, e *steps.Env, id string) []string {
	t.Helper()
	var out []string
	if err := e.Store.Journal(id, func(_ []byte, en store.Entry) error {
		if en.Event != "" {
			out = append(out, en.Event)
		} else {
			out = append(out, en.Trigger)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// mustLand lands id and requires it landed and removed.
func mustLand(t *testing.T, e *steps.Env, id string, o land.Options) land.Result {
	t.Helper()
	res, err := land.Land(context.Background(), e, id, o)
	if err != nil {
		t.Fatalf("land %s: %v", id, err)
	}
	if res.Landing != land.Landed || !res.Removed || res.Pending() {
		t.Fatalf("land %s: %+v; want landed and removed", id, res)
	}
	return res
}

// TestLandFastForward: a tree whose branch is ahead of main lands as a
// fast-forward: origin's main is the tree's HEAD, the main checkout is
// untouched, the journal records the landing before the removal, and the
// tree is gone on an ancestry proof.
func TestLandFastForward(t *testing.T) {
	r := fixtures.New(t, fixtures.Options{})
	e := landEnv(t, r)
	a := tree(t, r, e, "ff", "a.txt", "b.txt")
	head := r.Head(a.Path)
	mainBefore := r.Head(r.Dir)
	res := mustLand(t, e, a.ID, opts("", true))
	if got := remoteMain(t, r); got != head || res.New != head || res.Method != machine.LandFastForward {
		t.Errorf("origin main %s, result %+v; want the tree's HEAD %s by fast-forward", got, res, head)
	}
	if r.Head(r.Dir) != mainBefore || r.GitIn(r.Dir, "status", "--porcelain") != "" {
		t.Errorf("the main checkout changed")
	}
	if _, err := os.Lstat(a.Path); !os.IsNotExist(err) {
		t.Errorf("tree still there: %v", err)
	}
	if res.Proof == nil || res.Proof.Kind != machine.ProofAncestry {
		t.Errorf("proof %+v; want ancestry", res.Proof)
	}
	ev := journalEvents(t, e, a.ID)
	li, ld := slices.Index(ev, machine.EventLandIntent), slices.Index(ev, machine.EventLanded)
	rm := slices.Index(ev, string(machine.TriggerRemove))
	if li < 0 || ld < li || rm < ld {
		t.Errorf("journal %q; want land-intent, landed, then the removal", ev)
	}
	// Again: already done, nothing pushed.
	again, err := land.Land(context.Background(), e, a.ID, opts("", true))
	if err != nil || !again.Removed || again.Pending() {
		t.Errorf("again: %+v %v", again, err)
	}
}

// TestLandSquashRebaseMerge: into a main that moved on, each method lands
// the tree's changes on top of the moved tip, and the tree goes.
func TestLandSquashRebaseMerge(t *testing.T) {
	for _, m := range []machine.LandMethod{machine.LandSquash, machine.LandRebase, machine.LandMerge} {
		t.Run(string(m), func(t *testing.T) {
			r := fixtures.New(t, fixtures.Options{})
			e := landEnv(t, r)
			a := tree(t, r, e, "work", "a.txt", "b.txt")
			// A third commit by someone else, at a date of its own: a
			// rebase keeps both.
			r.WriteFile(a.Path, "c.txt", "by Ada\n")
			r.GitIn(a.Path, "add", "c.txt")
			r.GitIn(a.Path, "commit", "-q", "-m", "change c.txt", "--author=Ada <ada@example.com>", "--date=2001-02-03T04:05:06Z")
			head := r.Head(a.Path)
			moved := moveMain(t, r, "other.txt", "theirs\n")
			res := mustLand(t, e, a.ID, opts(m, true))
			got := remoteMain(t, r)
			if res.Old != moved || res.New != got || res.Method != m {
				t.Errorf("result %+v; want %s from %s to %s", res, m, moved, got)
			}
			for _, f := range []string{"a.txt", "b.txt", "c.txt", "other.txt"} {
				if _, err := r.TryGitIn(r.Remote, "cat-file", "-e", got+":"+f); err != nil {
					t.Errorf("%s not in the landed tip: %v", f, err)
				}
			}
			parents := strings.Fields(r.GitIn(r.Remote, "rev-list", "--parents", "-n", "1", got))[1:]
			switch m {
			case machine.LandSquash:
				msg := r.GitIn(r.Remote, "log", "-1", "--format=%B", got)
				if len(parents) != 1 || parents[0] != moved || !strings.HasPrefix(msg, "Squashed custody/work-") || !strings.Contains(msg, "* change a.txt") {
					t.Errorf("squash commit parents %v message %q", parents, msg)
				}
			case machine.LandRebase:
				subjects := r.GitIn(r.Remote, "log", "--format=%s %an <%ae> %aI", moved+".."+got)
				if !strings.HasPrefix(subjects, "change c.txt Ada <ada@example.com> 2001-02-03T04:05:06+00:00\nchange b.txt Fixture") || !strings.Contains(subjects, "\nchange a.txt Fixture") {
					t.Errorf("rebased commits %q", subjects)
				}
			case machine.LandMerge:
				if !slices.Equal(parents, []string{moved, head}) {
					t.Errorf("merge parents %v; want %s %s", parents, moved, head)
				}
			}
		})
	}
}

// TestLandRefusals: each refused landing pushes nothing and keeps the
// tree in the state it had, with the reason and the land command again.
func TestLandRefusals(t *testing.T) {
	type world struct {
		r *fixtures.Repo
		e *steps.Env
		a steps.NewResult
	}
	for _, tc := range []struct {
		name   string
		method machine.LandMethod
		setup  func(t *testing.T, w world)
		code   machine.Code
		says   string
	}{
		{name: "conflict", method: machine.LandSquash, code: machine.CodeLandConflict, says: "a.txt",
			setup: func(t *testing.T, w world) { moveMain(t, w.r, "a.txt", "theirs\n") }},
		{name: "rebase conflict", method: machine.LandRebase, code: machine.CodeLandConflict, says: "a.txt",
			setup: func(t *testing.T, w world) { moveMain(t, w.r, "a.txt", "theirs\n") }},
		{name: "diverged without a method", code: machine.CodeLandDiverged, says: "--rebase, --squash or --merge",
			setup: func(t *testing.T, w world) { moveMain(t, w.r, "other.txt", "theirs\n") }},
		{name: "dirty", code: machine.CodeTrackedChanges,
			setup: func(t *testing.T, w world) { w.r.WriteFile(w.a.Path, "a.txt", "changed\n") }},
		{name: "untracked", code: machine.CodeUntrackedFiles,
			setup: func(t *testing.T, w world) { w.r.WriteFile(w.a.Path, "new.txt", "x\n") }},
		{name: "a process in it", code: machine.CodeInUse, setup: func(t *testing.T, w world) {
			// Not this process's child: the scan leaves custody's own
			// children out, as they are custody's git.
			sh := exec.Command("sh", "-c", "sleep 300 >/dev/null 2>&1 & echo $!")
			sh.Dir = w.a.Path
			out, err := sh.Output()
			if err != nil {
				t.Fatal(err)
			}
			pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
		}},
		{name: "leased", code: machine.CodeLeaseLive, setup: func(t *testing.T, w world) {
			lr := machine.LeaseRequest{Op: machine.LeaseAcquire, Session: "s-1", Now: time.Now().UTC(), Duration: time.Hour}
			if _, err := w.e.Store.ChangeLease(store.LeaseChange{Path: w.a.Path, Key: w.a.ID, Request: lr}); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := fixtures.New(t, fixtures.Options{})
			e := landEnv(t, r)
			a := tree(t, r, e, "work", "a.txt")
			tc.setup(t, world{r, e, a})
			before := remoteMain(t, r)
			res, err := land.Land(context.Background(), e, a.ID, opts(tc.method, true))
			if err != nil {
				t.Fatal(err)
			}
			if res.Landing != land.NotLanded || res.Removed || !res.Pending() || len(res.Refusals) == 0 {
				t.Fatalf("%+v; want not landed, kept", res)
			}
			rf := res.Refusals[0]
			if rf.Code != tc.code || !strings.Contains(rf.Message, tc.says) || rf.Retry == "" || rf.Retry == "custody plan" {
				t.Errorf("refusal %+v; want %s saying %q with a land retry", rf, tc.code, tc.says)
			}
			if got := remoteMain(t, r); got != before {
				t.Errorf("origin main moved to %s", got)
			}
			rec, err := e.Store.Get(a.ID)
			if err != nil || rec.State != machine.StateActive {
				t.Errorf("record %+v %v; want active still", rec, err)
			}
			if _, err := os.Lstat(a.Path); err != nil {
				t.Errorf("tree gone: %v", err)
			}
		})
	}
}

// TestLandPlan: --plan lands, journals the landing, and writes a plan
// apply carries out; the tree goes only with apply.
func TestLandPlan(t *testing.T) {
	r := fixtures.New(t, fixtures.Options{})
	e := landEnv(t, r)
	a := tree(t, r, e, "p", "a.txt")
	moveMain(t, r, "other.txt", "theirs\n")
	res, err := land.Land(context.Background(), e, a.ID, opts(machine.LandSquash, false))
	if err != nil {
		t.Fatal(err)
	}
	if res.Landing != land.Landed || res.Plan == nil || res.Action != machine.ActionRemove || res.Pending() {
		t.Fatalf("%+v; want landed with a removal planned", res)
	}
	if _, err := os.Lstat(a.Path); err != nil {
		t.Fatalf("the tree went before apply: %v", err)
	}
	if ev := journalEvents(t, e, a.ID); !slices.Contains(ev, machine.EventLanded) {
		t.Errorf("journal %q; want the landing recorded before apply", ev)
	}
	out, err := steps.Apply(context.Background(), e, *res.Plan, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Items) != 1 || out.Items[0].Outcome != machine.OutcomeRemoved {
		t.Fatalf("apply: %+v", out.Items)
	}
}

// TestLandCheck: the [land] check runs only once approved; a failing one
// refuses with its output, a passing one lets the tree land.
func TestLandCheck(t *testing.T) {
	r := fixtures.New(t, fixtures.Options{})
	r.WriteFile(r.Dir, "custody.toml", "[land]\ncheck = \"test -f ok.txt || { echo missing ok.txt; exit 7; }\"\n")
	r.CommitAll(r.Dir, "config")
	r.Git("push", "-q", "origin", "main")
	e := landEnv(t, r)
	a := tree(t, r, e, "c", "a.txt")
	res, err := land.Land(context.Background(), e, a.ID, opts("", true))
	if err != nil || len(res.Refusals) == 0 || res.Refusals[0].Code != machine.CodeConfigUntrusted {
		t.Fatalf("unapproved: %+v %v; want config-untrusted", res, err)
	}
	if _, err := steps.Trust(e); err != nil {
		t.Fatal(err)
	}
	res, err = land.Land(context.Background(), e, a.ID, opts("", true))
	if err != nil || len(res.Refusals) == 0 || res.Refusals[0].Code != machine.CodeLandCheckFailed || !strings.Contains(res.Refusals[0].Message, "missing ok.txt") {
		t.Fatalf("failing check: %+v %v; want land-check-failed with its output", res, err)
	}
	r.Commit(a.Path, "ok.txt", "ok\n")
	mustLand(t, e, a.ID, opts("", true))
}

// TestLandRemovedWithoutLanding: a tree removed by custody remove (its
// branch published by hand) was never landed: land refuses, naming that,
// and pushes nothing.
func TestLandRemovedWithoutLanding(t *testing.T) {
	r := fixtures.New(t, fixtures.Options{})
	e := landEnv(t, r)
	a := tree(t, r, e, "gone", "a.txt")
	r.Push(a.Path, "published")
	if _, err := steps.Retire(context.Background(), e, a.ID, steps.RetireOptions{Actor: "test"}); err != nil {
		t.Fatal(err)
	}
	before := remoteMain(t, r)
	_, err := land.Land(context.Background(), e, a.ID, opts("", true))
	var rf *machine.Refusal
	if !errors.As(err, &rf) || rf.Code != machine.CodeWrongState || !strings.Contains(rf.Message, "never landed") {
		t.Fatalf("land of a removed tree: %v; want wrong-state saying it never landed", err)
	}
	if remoteMain(t, r) != before {
		t.Errorf("origin's main moved")
	}
}

// TestLandTarget: a remote whose HEAD names no branch it advertises makes
// the target ambiguous: refused, naming --onto, nothing pushed. --onto
// lands on the branch named, and only there.
func TestLandTarget(t *testing.T) {
	r := fixtures.New(t, fixtures.Options{})
	e := landEnv(t, r)
	a := tree(t, r, e, "onto", "a.txt")
	head := r.Head(a.Path)
	r.Git("push", "-q", "origin", "main:refs/heads/dev")
	r.GitIn(r.Remote, "symbolic-ref", "HEAD", "refs/heads/nothing")
	before := remoteMain(t, r)
	res, err := land.Land(context.Background(), e, a.ID, opts("", true))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Refusals) == 0 || res.Refusals[0].Code != machine.CodeLandNoTarget || !strings.Contains(res.Refusals[0].Message, "--onto BRANCH") {
		t.Fatalf("%+v; want land-no-target advising --onto", res)
	}
	o := opts("", true)
	o.Onto = "dev"
	res = mustLand(t, e, a.ID, o)
	if got := r.GitIn(r.Remote, "rev-parse", "refs/heads/dev"); got != head || res.Target.Ref != "refs/heads/dev" {
		t.Errorf("dev is %s, target %+v; want the tree's HEAD %s on dev", got, res.Target, head)
	}
	if remoteMain(t, r) != before {
		t.Errorf("main moved")
	}
}
