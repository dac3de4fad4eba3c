package agent

// Session hooks through the binary: an agent's session leases its tree,
// renews and releases the lease, and a crashed agent's lease expires. Time
// is stepped with CUSTODY_NOW, which only the failpoint build (tests only)
// reads. Helpers are prefixed hk.

import (
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/cmd/custody/internal/output"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/store"
)

// hkEnvelope is the hook protocol 1 envelope, as a test reads it.
type hkEnvelope = output.HookEnvelope

// hkClock is the binary and environment that run custody at time at: the
// failpoint build with CUSTODY_NOW, or (at zero) the ordinary binary and
// the real clock.
func hkClock(at time.Time) (string, []string) {
	if at.IsZero() {
		return clitest.Bin(), nil
	}
	return clitest.FailpointBin(), []string{"CUSTODY_NOW=" + at.UTC().Format(time.RFC3339Nano)}
}

// hkEnv is the environment that runs the failpoint build at time at.
func hkEnv(at time.Time) []string { _, env := hkClock(at); return env }

// hkRun runs bin in dir with stdin and extra environment.
func hkRun(t testing.TB, bin string, r *fixtures.Repo, dir, stdin string, extra []string, args ...string) clitest.Result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(r.Env(), extra...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	res := clitest.Result{Stdout: out.String(), Stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.Code = ee.ExitCode()
	default:
		t.Fatalf("run %s %s: %v", bin, strings.Join(args, " "), err)
	}
	if strings.Contains(res.Stderr, "panic:") || strings.Contains(res.Stderr, "goroutine ") {
		t.Fatalf("custody %s panicked:\n%s", strings.Join(args, " "), res)
	}
	return res
}

// hkHook runs `custody hook NAME ARGS...` with payload at time at (zero:
// the ordinary binary and the real clock) and returns its envelope; a hook
// must exit 0 with exactly one envelope on stdout.
func hkHook(t *testing.T, r *fixtures.Repo, at time.Time, payload, name string, args ...string) hkEnvelope {
	t.Helper()
	bin, extra := hkClock(at)
	res := hkRun(t, bin, r, r.Dir, payload, extra, append([]string{"hook", name}, args...)...)
	if res.Code != 0 {
		t.Fatalf("custody hook %s: exit %d, want 0 (a hook never blocks an agent)\n%s", name, res.Code, res)
	}
	var env hkEnvelope
	dec := json.NewDecoder(strings.NewReader(res.Stdout))
	if err := dec.Decode(&env); err != nil || dec.More() {
		t.Fatalf("custody hook %s: stdout is not one envelope (%v)\n%s", name, err, res)
	}
	clitest.ValidateSchema(t, "hook-envelope.json", "custody hook "+name, []byte(res.Stdout))
	if env.HookProtocol != 1 || env.Hook != name {
		t.Fatalf("custody hook %s: envelope %+v, want hook_protocol 1 and hook %s", name, env, name)
	}
	return env
}

// hkPayload is the payload Claude Code sends a session hook.
func hkPayload(event, session, cwd string) string {
	b, _ := json.Marshal(map[string]string{"session_id": session, "transcript_path": "/no-home/.claude/t.jsonl",
		"cwd": cwd, "hook_event_name": event, "permission_mode": "default"})
	return string(b)
}

// hkLeases reads every lease straight from the store.
func hkLeases(t testing.TB, r *fixtures.Repo) map[string]*machine.Lease {
	t.Helper()
	st, err := store.Open(filepath.Join(r.Dir, ".git", "custody", "state.db"), 5*time.Second, false)
	if err != nil {
		t.Fatal(err)
	}
	ls, err := st.Leases()
	if err != nil {
		t.Fatal(err)
	}
	return ls
}

// hkPlanItem plans (at at, when set) and returns id's item.
func hkPlanItem(t testing.TB, r *fixtures.Repo, at time.Time, id string) (machine.PlanItem, string) {
	t.Helper()
	file := clitest.PlanFile(t, r)
	bin, extra := hkClock(at)
	res := clitest.RunBin(t, bin, r, r.Dir, extra, "plan", "-o", file, "--json")
	if res.Code != 0 {
		t.Fatalf("plan: %s", res)
	}
	return clitest.PlanItem(t, clitest.DecodeResult[machine.Plan](t, res, "plan"), id), file
}

// hkEvents returns the journal's event names about record id.
func hkEvents(t testing.TB, r *fixtures.Repo, id string) []string {
	t.Helper()
	var out []string
	for _, e := range clitest.JournalEntries(t, r) {
		if e.Record == id && e.Event != "" {
			out = append(out, e.Event)
		}
	}
	return out
}

// TestHookAgentSession: an agent's whole session through the hooks.
// session-start leases the tree (plan keeps it, lease-live), heartbeat
// keeps the lease, session-end releases it, finish then succeeds and plan
// removes the tree; every lease change is journaled.
func TestHookAgentSession(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.NewTree(t, r, "agent")
	sub := filepath.Join(path, "deep", "er")

	env := hkHook(t, r, time.Time{}, hkPayload("SessionStart", "sess-1", path), "session-start", "--agent", "claude")
	if !env.OK || env.Outcome != "acquired" || env.ID != id || env.Lease == nil || env.Lease.Holder != "sess-1" {
		t.Fatalf("session-start: %+v, want acquired by sess-1 on %s", env, id)
	}
	if l := hkLeases(t, r)[id]; l == nil || l.Holder != "sess-1" || time.Until(l.Expires) < 29*time.Minute {
		t.Fatalf("the store's lease after session-start: %+v, want sess-1's for 30m", l)
	}
	it, _ := hkPlanItem(t, r, time.Time{}, id)
	if it.Action != machine.ActionKeep || !clitest.HasCode(it.Refusals, "lease-live") {
		t.Fatalf("plan during the session: %s %v, want keep [lease-live]", it.Action, clitest.RefusalCodes(it.Refusals))
	}
	res := clitest.Custody(t, r, "finish", id, "--json")
	if res.Code != 3 || !strings.Contains(res.Stdout, `"lease-live"`) {
		t.Fatalf("finish under the session's lease: want exit 3 [lease-live]\n%s", res)
	}

	// The heartbeat is resolved from a directory below the tree.
	if err := execOK(t, "mkdir", "-p", sub); err != nil {
		t.Fatal(err)
	}
	env = hkHook(t, r, time.Time{}, hkPayload("UserPromptSubmit", "sess-1", sub), "heartbeat")
	if !env.OK || env.Outcome != "unchanged" || env.ID != id {
		t.Fatalf("heartbeat: %+v, want unchanged (renewed just now)", env)
	}
	if err := execOK(t, "rmdir", sub, filepath.Dir(sub)); err != nil {
		t.Fatal(err)
	}
	env = hkHook(t, r, time.Time{}, hkPayload("SessionEnd", "sess-1", path), "session-end")
	if !env.OK || env.Outcome != "released" || env.Lease != nil {
		t.Fatalf("session-end: %+v, want released", env)
	}
	if l := hkLeases(t, r)[id]; l != nil {
		t.Fatalf("the store still holds a lease after session-end: %+v", l)
	}
	clitest.MustCustody(t, r, 0, "finish", id)
	it, file := hkPlanItem(t, r, time.Time{}, id)
	if it.Action != machine.ActionRemove {
		t.Fatalf("plan after the session: %s %v, want remove", it.Action, clitest.RefusalCodes(it.Refusals))
	}
	if o := clitest.ApplyOutcome(t, clitest.Apply(t, r, file, 0), id); o.Outcome != machine.OutcomeRemoved {
		t.Fatalf("apply: %+v", o)
	}
	clitest.AssertRemoved(t, r, id, path, true)
	got := strings.Join(hkEvents(t, r, id), " ")
	if !strings.Contains(got, "lease-acquired") || !strings.Contains(got, "lease-released") || strings.Contains(got, "lease-renewed") {
		t.Errorf("journal events of %s: %s; want lease-acquired and lease-released, and no renewal for a heartbeat that wrote nothing", id, got)
	}
}

// execOK runs a plain command.
func execOK(t testing.TB, name string, args ...string) error {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Logf("%s %s: %s", name, strings.Join(args, " "), out)
	}
	return err
}

// TestHookCrashedAgent: an agent that never runs session-end. Its lease
// keeps the tree (plan keeps it lease-live, finish refuses) until the lease
// expires; only then does plan treat the tree as finished and apply remove
// it.
func TestHookCrashedAgent(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.NewTree(t, r, "crashed")
	t0 := time.Now().UTC()
	env := hkHook(t, r, t0, hkPayload("SessionStart", "sess-dead", path), "session-start", "--lease", "30m")
	if env.Outcome != "acquired" || !env.Lease.Expires.Equal(t0.Add(30*time.Minute)) {
		t.Fatalf("session-start: %+v, want acquired until %s", env, t0.Add(30*time.Minute))
	}
	for _, at := range []time.Time{t0.Add(10 * time.Minute), t0.Add(29*time.Minute + 59*time.Second)} {
		it, _ := hkPlanItem(t, r, at, id)
		if it.Action != machine.ActionKeep || !clitest.HasCode(it.Refusals, "lease-live") {
			t.Fatalf("plan at +%s: %s %v, want keep [lease-live]", at.Sub(t0), it.Action, clitest.RefusalCodes(it.Refusals))
		}
	}
	res := clitest.RunBin(t, clitest.FailpointBin(), r, r.Dir, hkEnv(t0.Add(10*time.Minute)), "finish", id, "--json")
	if res.Code != 3 || !strings.Contains(res.Stdout, `"lease-live"`) {
		t.Fatalf("finish at +10m under the dead session's lease: want exit 3 [lease-live]\n%s", res)
	}
	after := t0.Add(30*time.Minute + time.Second)
	it, file := hkPlanItem(t, r, after, id)
	if it.Action != machine.ActionRemove {
		t.Fatalf("plan at +30m1s, the lease expired: %s %v, want remove", it.Action, clitest.RefusalCodes(it.Refusals))
	}
	a := clitest.RunBin(t, clitest.FailpointBin(), r, r.Dir, hkEnv(after), "apply", file, "--json")
	if a.Code != 0 {
		t.Fatalf("apply after expiry: %s", a)
	}
	clitest.AssertRemoved(t, r, id, path, true)
}

// TestHookLeaseRules: who may renew or release, when a heartbeat writes,
// and that a lease is taken only on an active tree. Refusals change
// nothing, exit 0, and are journaled as hook-error.
func TestHookLeaseRules(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.NewTree(t, r, "rules")
	t0 := time.Now().UTC().Truncate(time.Second)
	p := func(s string) string { return hkPayload("PostToolUse", s, path) }
	hkHook(t, r, t0, p("a"), "session-start")
	if env := hkHook(t, r, t0.Add(2*time.Minute), p("a"), "heartbeat"); env.Outcome != "unchanged" || !env.Lease.Expires.Equal(t0.Add(30*time.Minute)) {
		t.Errorf("heartbeat at +2m (less than a tenth of 30m since the write): %+v, want unchanged", env)
	}
	if env := hkHook(t, r, t0.Add(4*time.Minute), p("a"), "heartbeat"); env.Outcome != "renewed" || !env.Lease.Expires.Equal(t0.Add(34*time.Minute)) {
		t.Errorf("heartbeat at +4m: %+v, want renewed until +34m", env)
	}
	for _, hook := range []string{"session-start", "heartbeat", "session-end"} {
		env := hkHook(t, r, t0.Add(5*time.Minute), p("b"), hook)
		logged := "journal"
		if hook == "heartbeat" {
			logged = "stderr" // not an entry for every tool call of a second session
		}
		if env.OK || env.Outcome != "refused" || env.Refusal == nil || env.Refusal.Code != machine.CodeLeaseHeld || env.Logged != logged {
			t.Errorf("%s by another session under a live lease: %+v, want refused [lease-held], logged to the %s", hook, env, logged)
		}
	}
	if l := hkLeases(t, r)[id]; l == nil || l.Holder != "a" || !l.Expires.Equal(t0.Add(34*time.Minute)) {
		t.Errorf("the lease after refusals: %+v, want a's until +34m", l)
	}
	// Expired: another session takes it over; the old holder has nothing
	// to release.
	if env := hkHook(t, r, t0.Add(40*time.Minute), p("b"), "heartbeat"); env.Outcome != "acquired" || env.Lease.Holder != "b" {
		t.Errorf("heartbeat of b after a's lease expired: %+v, want acquired by b", env)
	}
	if env := hkHook(t, r, t0.Add(80*time.Minute), p("a"), "session-end"); !env.OK || env.Outcome != "not-held" {
		t.Errorf("session-end of a, whose lease b took over and let expire: %+v, want not-held", env)
	}
	hkHook(t, r, t0.Add(80*time.Minute), p("b"), "session-end")
	clitest.RunBin(t, clitest.FailpointBin(), r, r.Dir, hkEnv(t0.Add(81*time.Minute)), "finish", id)
	env := hkHook(t, r, t0.Add(82*time.Minute), p("c"), "session-start")
	if env.Outcome != "refused" || env.Refusal == nil || env.Refusal.Code != machine.CodeWrongState || env.Refusal.Retry != "custody reopen "+id {
		t.Errorf("session-start on a finished tree: %+v, want refused [wrong-state] with retry custody reopen", env)
	}
	if l := hkLeases(t, r)[id]; l != nil {
		t.Errorf("a finished tree got a lease: %+v", l)
	}
	got := strings.Join(hkEvents(t, r, id), " ")
	for _, want := range []string{"lease-acquired", "lease-renewed", "hook-error", "lease-released"} {
		if !strings.Contains(got, want) {
			t.Errorf("journal events of %s: %s; want %s", id, got, want)
		}
	}
}

// TestHookBadInput: a payload a hook cannot use (not JSON, larger than the
// bound, no session, a field that is not a string) and a directory outside
// every managed tree change nothing and still exit 0 with the envelope.
func TestHookBadInput(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.NewTree(t, r, "bad")
	huge := `{"session_id":"s","cwd":"` + path + `","tool_response":"` + strings.Repeat("x", machine.MaxHookPayload) + `"}`
	for name, payload := range map[string]string{
		"garbage":    "not json at all\x00\xff",
		"huge":       huge,
		"no session": `{"cwd":"` + path + `"}`,
		"not string": `{"session_id":7,"cwd":"` + path + `"}`,
		"two values": `{"session_id":"s"} {"session_id":"t"}`,
	} {
		for _, hook := range []string{"session-start", "heartbeat", "session-end"} {
			env := hkHook(t, r, time.Time{}, payload, hook)
			if env.OK || env.Outcome != "refused" || env.Refusal == nil || env.Refusal.Code != machine.CodeHookPayloadInvalid {
				t.Errorf("%s payload to %s: %+v, want refused [hook-payload-invalid]", name, hook, env)
			}
		}
	}
	for _, lease := range []string{"0s", "--lease=-5m"} {
		args := []string{"--lease", lease}
		if strings.HasPrefix(lease, "--") {
			args = []string{lease}
		}
		if env := hkHook(t, r, time.Time{}, hkPayload("SessionStart", "s", path), "session-start", args...); env.OK || env.Refusal == nil || env.Refusal.Code != machine.CodeUsage {
			t.Errorf("session-start --lease %s: %+v, want refused [usage]", lease, env)
		}
	}
	env := hkHook(t, r, time.Time{}, hkPayload("SessionStart", "s", r.Dir), "session-start")
	if !env.OK || env.Outcome != "ignored" || env.Refusal == nil || env.Refusal.Code != machine.CodeNotInWorktree {
		t.Errorf("session-start in the main checkout: %+v, want ignored [not-in-worktree]", env)
	}
	env = hkHook(t, r, time.Time{}, "", "session-start", "--session", "by-hand", "-C", path)
	if !env.OK || env.Outcome != "acquired" {
		t.Errorf("session-start with no payload, --session and -C: %+v, want acquired", env)
	}
	if ls := hkLeases(t, r); len(ls) != 1 || ls[id] == nil || ls[id].Holder != "by-hand" {
		t.Errorf("leases: %v, want only by-hand's", ls)
	}
	// Global flags after the hook's name or before it: the same envelope.
	short := hkRun(t, clitest.Bin(), r, r.Dir, "", nil, "hook", "heartbeat", "--session", "by-hand", "-C", path, "--lock-timeout", "5s")
	whole := hkRun(t, clitest.Bin(), r, r.Dir, "", nil, "--lock-timeout", "5s", "-C", path, "hook", "heartbeat", "--session", "by-hand")
	if short.Code != 0 || short.Stdout != whole.Stdout || short.Stderr != whole.Stderr || !strings.Contains(short.Stdout, `"unchanged"`) {
		t.Errorf("hook heartbeat parsed two ways differs:\n%s\n%s", short, whole)
	}
}

// TestHookSessionStartEnsure: session-start --ensure takes the lease, then
// runs the tree's resource ensure commands (custody.toml declares one); a
// failing ensure is reported in the envelope, and the hook still exits 0
// with the lease taken.
func TestHookSessionStartEnsure(t *testing.T) {
	t.Parallel()
	r := fixtures.New(t, fixtures.Options{})
	clitest.WriteTrusted(t, r, "[resources.db]\ncreate = 'true'\ndestroy = 'true'\nensure = '''test ! -e @dir@/fail'''\n")
	clitest.MustCustody(t, r, 0, "init")
	id, path := clitest.NewTree(t, r, "with db")
	res := hkRun(t, clitest.Bin(), r, r.Dir, hkPayload("SessionStart", "s1", path), nil, "hook", "session-start", "--ensure")
	var env struct {
		hkEnvelope
		Ensure *struct {
			Resources []struct {
				Outcome string `json:"outcome"`
			} `json:"resources"`
		} `json:"ensure"`
	}
	if err := json.Unmarshal([]byte(res.Stdout), &env); err != nil || res.Code != 0 {
		t.Fatalf("session-start --ensure: %v\n%s", err, res)
	}
	if env.Outcome != "acquired" || env.ID != id || env.Ensure == nil || len(env.Ensure.Resources) != 1 || env.Ensure.Resources[0].Outcome != "ensured" {
		t.Fatalf("session-start --ensure: %s, want the lease acquired and db ensured", res.Stdout)
	}
	r.WriteFile(path, "fail", "")
	clitest.MustCustody(t, r, 0, "hook", "session-end", "--session", "s1", "-C", path)
	res = hkRun(t, clitest.Bin(), r, r.Dir, hkPayload("SessionStart", "s2", path), nil, "hook", "session-start", "--ensure")
	if res.Code != 0 || !strings.Contains(res.Stdout, `"acquired"`) || !strings.Contains(res.Stdout, `"resource-failed"`) || !strings.Contains(res.Stderr, "[resource-failed]") {
		t.Fatalf("session-start --ensure with a failing ensure: want exit 0, the lease acquired and [resource-failed] reported\n%s", res)
	}
}
