package machine_test

// The resource machine (DESIGN §4, issue 4): every trigger through
// NewResourceMachine, held and refused; the ledger change each trigger
// makes; orphan GC's decision for every branch; handles and fingerprints.
// Helpers here carry the prefix rs so they cannot collide with the other
// test files of this package.

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/machine"
)

const (
	rsID      = "feat-login-a1b2c3/db"
	rsPath    = "/repo/.worktrees/feat-login-a1b2c3"
	rsHandle  = "repo-feat-login-a1b2c3-db"
	rsCreate  = "createdb 'repo-feat-login-a1b2c3-db'"
	rsDestroy = "dropdb 'repo-feat-login-a1b2c3-db'"
	rsEnsure  = "pg_isready"
)

var rsHolder = machine.Holder{PID: 4242, Host: "host"}

// rsResource is a ledger entry of worktree testID in state s.
func rsResource(s machine.State) machine.Resource {
	return machine.Resource{
		ID: rsID, Worktree: testID, AdminKey: testID, Path: rsPath, Name: "db", Handle: rsHandle,
		State: s, Create: rsCreate, Destroy: rsDestroy, Ensure: rsEnsure, Required: true, GC: true,
		Timeout: machine.DefaultResourceTimeout, Rev: 3, CreatedAt: createdAt, UpdatedAt: finishedAt,
	}
}

func rsIntent(kind machine.IntentKind, cmd string) *machine.ResourceIntent {
	return &machine.ResourceIntent{Kind: kind, Command: cmd, Holder: rsHolder, At: testNow}
}

// Firings over which each trigger's guard holds.

func rsDeclare() machine.ResourceFiring {
	return machine.ResourceFiring{Res: rsResource(machine.StateNone), Now: testNow, Intent: rsIntent(machine.IntentResourceCreate, rsCreate)}
}

func rsRan(s machine.State, code int) machine.ResourceFiring {
	return machine.ResourceFiring{Res: rsResource(s), Now: testNow, Ran: true, ExitCode: code, Attempts: 1, Output: "out"}
}

func rsTeardown(s machine.State) machine.ResourceFiring {
	return machine.ResourceFiring{Res: rsResource(s), Now: testNow, Intent: rsIntent(machine.IntentResourceDestroy, rsDestroy)}
}

func rsWith(f machine.ResourceFiring, mutate func(*machine.ResourceFiring)) machine.ResourceFiring {
	mutate(&f)
	return f
}

type rsCommitted struct {
	From, To machine.State
	Trigger  machine.Trigger
	Firing   machine.ResourceFiring
}

type rsFireCase struct {
	name    string
	trigger machine.Trigger
	firing  machine.ResourceFiring
	to      machine.State // "" with a refusal
	code    machine.Code
	guard   string
}

func rsFireCases() []rsFireCase {
	const (
		gFrozen    = "commandsFrozen"
		gSucceeded = "commandSucceeded"
		gFailed    = "commandFailed"
		gRan       = "commandRan"
	)
	N, P, A := machine.StateNone, machine.StateProvisioning, machine.StateActive
	F, R, T := machine.StateFinished, machine.StateRemoving, machine.StateTombstoned
	de, cd, cf := machine.TriggerDeclare, machine.TriggerCreated, machine.TriggerCreateFailed
	td, ds, df, en := machine.TriggerTeardown, machine.TriggerDestroyed, machine.TriggerDestroyFailed, machine.TriggerEnsure
	guard := func(name string, t machine.Trigger, f machine.ResourceFiring, g string) rsFireCase {
		return rsFireCase{name: name, trigger: t, firing: f, code: machine.CodeGuardFailed, guard: g}
	}
	wrong := func(name string, t machine.Trigger, f machine.ResourceFiring) rsFireCase {
		return rsFireCase{name: name, trigger: t, firing: f, code: machine.CodeWrongState}
	}
	token := func(f machine.ResourceFiring, field string) machine.ResourceFiring {
		switch field {
		case "intent":
			f.Intent.Command += " @dir@"
		case "create":
			f.Res.Create = "mkdir @resource@"
		case "destroy":
			f.Res.Destroy = "rm -rf @nosuchtoken@/cache"
		}
		return f
	}
	return []rsFireCase{
		// declare: none → provisioning, commandsFrozen.
		{name: "declare", trigger: de, firing: rsDeclare(), to: P},
		{name: "declare/no-ensure", trigger: de, firing: rsWith(rsDeclare(), func(f *machine.ResourceFiring) { f.Res.Ensure = "" }), to: P},
		{name: "declare/email-is-no-token", trigger: de, firing: rsWith(rsDeclare(), func(f *machine.ResourceFiring) {
			f.Res.Create = "notify ops@example.com"
			f.Intent.Command = f.Res.Create
		}), to: P},
		guard("declare/token-in-intent", de, token(rsDeclare(), "intent"), gFrozen),
		guard("declare/token-in-create", de, token(rsDeclare(), "create"), gFrozen),
		guard("declare/token-in-destroy", de, token(rsDeclare(), "destroy"), gFrozen),
		guard("declare/no-intent", de, rsWith(rsDeclare(), func(f *machine.ResourceFiring) { f.Intent = nil }), gFrozen),
		guard("declare/empty-command", de, rsWith(rsDeclare(), func(f *machine.ResourceFiring) { f.Intent.Command = "  " }), gFrozen),
		wrong("declare/from-active", de, rsWith(rsDeclare(), func(f *machine.ResourceFiring) { f.Res.State = A })),
		wrong("declare/from-tombstoned", de, rsWith(rsDeclare(), func(f *machine.ResourceFiring) { f.Res.State = T })),

		// created: provisioning → active, commandSucceeded.
		{name: "created", trigger: cd, firing: rsRan(P, 0), to: A},
		guard("created/exit-1", cd, rsRan(P, 1), gSucceeded),
		guard("created/killed", cd, rsRan(P, -1), gSucceeded),
		guard("created/not-ran", cd, rsWith(rsRan(P, 0), func(f *machine.ResourceFiring) { f.Ran = false }), gSucceeded),
		wrong("created/from-none", cd, rsRan(N, 0)),
		wrong("created/from-active", cd, rsRan(A, 0)),
		wrong("created/from-removing", cd, rsRan(R, 0)),

		// create-failed: provisioning → finished, commandFailed.
		{name: "create-failed", trigger: cf, firing: rsRan(P, 1), to: F},
		{name: "create-failed/killed", trigger: cf, firing: rsRan(P, -1), to: F},
		guard("create-failed/exit-0", cf, rsRan(P, 0), gFailed),
		guard("create-failed/not-ran", cf, rsWith(rsRan(P, 1), func(f *machine.ResourceFiring) { f.Ran = false }), gFailed),
		wrong("create-failed/from-active", cf, rsRan(A, 1)),
		wrong("create-failed/from-finished", cf, rsRan(F, 1)),

		// teardown: provisioning, active, finished → removing, commandsFrozen.
		{name: "teardown/provisioning", trigger: td, firing: rsTeardown(P), to: R},
		{name: "teardown/active", trigger: td, firing: rsTeardown(A), to: R},
		{name: "teardown/finished", trigger: td, firing: rsTeardown(F), to: R},
		guard("teardown/token-in-intent", td, token(rsTeardown(A), "intent"), gFrozen),
		guard("teardown/token-in-destroy", td, token(rsTeardown(A), "destroy"), gFrozen),
		guard("teardown/token-in-create", td, token(rsTeardown(F), "create"), gFrozen),
		guard("teardown/no-intent", td, rsWith(rsTeardown(A), func(f *machine.ResourceFiring) { f.Intent = nil }), gFrozen),
		guard("teardown/empty-command", td, rsWith(rsTeardown(A), func(f *machine.ResourceFiring) { f.Intent.Command = "" }), gFrozen),
		wrong("teardown/from-none", td, rsTeardown(N)),
		wrong("teardown/from-removing", td, rsTeardown(R)),
		wrong("teardown/from-tombstoned", td, rsTeardown(T)),

		// destroyed: removing → tombstoned, commandSucceeded.
		{name: "destroyed", trigger: ds, firing: rsRan(R, 0), to: T},
		guard("destroyed/exit-2", ds, rsRan(R, 2), gSucceeded),
		guard("destroyed/not-ran", ds, rsWith(rsRan(R, 0), func(f *machine.ResourceFiring) { f.Ran = false }), gSucceeded),
		wrong("destroyed/from-active", ds, rsRan(A, 0)),
		wrong("destroyed/from-finished", ds, rsRan(F, 0)),
		wrong("destroyed/from-tombstoned", ds, rsRan(T, 0)),

		// destroy-failed: removing → finished, commandFailed.
		{name: "destroy-failed", trigger: df, firing: rsRan(R, 1), to: F},
		guard("destroy-failed/exit-0", df, rsRan(R, 0), gFailed),
		guard("destroy-failed/not-ran", df, rsWith(rsRan(R, 1), func(f *machine.ResourceFiring) { f.Ran = false }), gFailed),
		wrong("destroy-failed/from-active", df, rsRan(A, 1)),

		// ensure: active → active (internal), commandRan.
		{name: "ensure", trigger: en, firing: rsRan(A, 0), to: A},
		{name: "ensure/failed-is-recorded", trigger: en, firing: rsRan(A, 3), to: A},
		guard("ensure/not-ran", en, rsWith(rsRan(A, 0), func(f *machine.ResourceFiring) { f.Ran = false }), gRan),
		wrong("ensure/from-provisioning", en, rsRan(P, 0)),
		wrong("ensure/from-finished", en, rsRan(F, 0)),
		wrong("ensure/from-removing", en, rsRan(R, 0)),
		wrong("ensure/from-tombstoned", en, rsRan(T, 0)),

		// Triggers of the worktree machine mean nothing here.
		wrong("finish/unknown-trigger", machine.TriggerFinish, rsRan(A, 0)),
	}
}

func TestResourceFire(t *testing.T) {
	t.Parallel()
	for _, tt := range rsFireCases() {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := tt.firing.Res
			var calls []rsCommitted
			m := machine.NewResourceMachine(r, func(_ context.Context, from, to machine.State, trig machine.Trigger, f machine.ResourceFiring) error {
				calls = append(calls, rsCommitted{from, to, trig, f})
				return nil
			})
			err := m.Fire(context.Background(), tt.trigger, tt.firing)
			if tt.code == "" {
				if err != nil {
					t.Fatalf("Fire(%s) from %s = %v, want nil", tt.trigger, r.State, err)
				}
				want := []rsCommitted{{From: r.State, To: tt.to, Trigger: tt.trigger, Firing: tt.firing}}
				if d := cmp.Diff(want, calls); d != "" {
					t.Errorf("commit calls (-want +got):\n%s", d)
				}
				return
			}
			var ref *machine.Refusal
			if !errors.As(err, &ref) {
				t.Fatalf("Fire(%s) from %s = %v (%T), want a *Refusal", tt.trigger, r.State, err, err)
			}
			if d := cmp.Diff(machine.Refusal{Code: tt.code, Path: rsPath, Retry: "custody resource list"},
				machine.Refusal{Code: ref.Code, Path: ref.Path, Retry: ref.Retry}); d != "" {
				t.Errorf("refusal (-want +got):\n%s", d)
			}
			if !errors.Is(err, tt.code.AsError()) {
				t.Errorf("errors.Is(err, %s.AsError()) = false", tt.code)
			}
			for _, s := range []string{string(tt.trigger), rsID, r.State.String()} {
				if !strings.Contains(ref.Message, s) {
					t.Errorf("message %q does not name %q", ref.Message, s)
				}
			}
			if tt.guard != "" && !strings.Contains(ref.Message, tt.guard+" did not hold") {
				t.Errorf("message %q does not name the guard %s", ref.Message, tt.guard)
			}
			if len(calls) != 0 {
				t.Errorf("commit called on a refused trigger: %+v", calls)
			}
		})
	}
}

// TestResourceFireCoversEveryTrigger keeps the table honest: every resource
// trigger has a case that fires and one that is refused.
func TestResourceFireCoversEveryTrigger(t *testing.T) {
	t.Parallel()
	fired, refused := map[machine.Trigger]bool{}, map[machine.Trigger]bool{}
	for _, c := range rsFireCases() {
		if c.code == "" {
			fired[c.trigger] = true
		} else {
			refused[c.trigger] = true
		}
	}
	for _, tr := range []machine.Trigger{machine.TriggerDeclare, machine.TriggerCreated, machine.TriggerCreateFailed,
		machine.TriggerTeardown, machine.TriggerDestroyed, machine.TriggerDestroyFailed, machine.TriggerEnsure} {
		if !fired[tr] || !refused[tr] {
			t.Errorf("trigger %s: fired case %v, refused case %v; want both", tr, fired[tr], refused[tr])
		}
	}
}

// TestResourceFireCommitError: a failing commit is returned and the
// machine does not move.
func TestResourceFireCommitError(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	f := rsRan(machine.StateProvisioning, 0)
	m := machine.NewResourceMachine(f.Res, func(context.Context, machine.State, machine.State, machine.Trigger, machine.ResourceFiring) error {
		return boom
	})
	if err := m.Fire(context.Background(), machine.TriggerCreated, f); !errors.Is(err, boom) {
		t.Fatalf("Fire = %v, want the commit's error", err)
	}
	// Still provisioning: created is still permitted, ensure is not.
	got := m.Permitted(context.Background(), f)
	if d := cmp.Diff([]machine.Trigger{machine.TriggerCreated}, got); d != "" {
		t.Errorf("Permitted after a failed commit (-want +got):\n%s", d)
	}
}

// rsStarted is a firing that records a started command's process group in
// the entry's intent of kind, changed by mutate.
func rsStarted(st machine.State, kind machine.IntentKind, mutate func(*machine.ResourceIntent)) machine.ResourceFiring {
	r := rsResource(st)
	r.Intent = rsIntent(kind, rsDestroy)
	in := *r.Intent
	in.Group = &machine.Holder{PID: 4242, Host: rsHolder.Host, Start: 7}
	if mutate != nil {
		mutate(&in)
	}
	if st == machine.StateActive {
		r.Intent = nil
	}
	return machine.ResourceFiring{Res: r, Intent: &in}
}

// TestResourceStartedKeepsGroup: started stores the group in the intent and
// changes nothing else of it.
func TestResourceStartedKeepsGroup(t *testing.T) {
	t.Parallel()
	f := rsStarted(machine.StateRemoving, machine.IntentResourceDestroy, nil)
	n := machine.NextResource(f.Res, machine.StateRemoving, machine.TriggerStarted, f)
	if d := cmp.Diff(f.Intent, n.Intent); d != "" {
		t.Errorf("intent after started (-want +got):\n%s", d)
	}
	f.Intent.Group.PID = 1
	if n.Intent.Group.PID != 4242 {
		t.Errorf("the stored intent shares the firing's group")
	}
}

func TestResourcePermitted(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		f    machine.ResourceFiring
		want []machine.Trigger
	}{
		{"none", rsDeclare(), []machine.Trigger{machine.TriggerDeclare}},
		{"provisioning/created", rsRan(machine.StateProvisioning, 0), []machine.Trigger{machine.TriggerCreated}},
		{"provisioning/failed", rsRan(machine.StateProvisioning, 1), []machine.Trigger{machine.TriggerCreateFailed}},
		{"provisioning/intent", rsTeardown(machine.StateProvisioning), []machine.Trigger{machine.TriggerTeardown}},
		{"active/ran", rsRan(machine.StateActive, 0), []machine.Trigger{machine.TriggerEnsure}},
		{"active/intent", rsTeardown(machine.StateActive), []machine.Trigger{machine.TriggerTeardown}},
		{"removing/ok", rsRan(machine.StateRemoving, 0), []machine.Trigger{machine.TriggerDestroyed}},
		{"removing/failed", rsRan(machine.StateRemoving, 9), []machine.Trigger{machine.TriggerDestroyFailed}},
		{"tombstoned", rsRan(machine.StateTombstoned, 0), []machine.Trigger{}},
		{"provisioning/started", rsStarted(machine.StateProvisioning, machine.IntentResourceCreate, nil),
			[]machine.Trigger{machine.TriggerStarted, machine.TriggerTakeOver, machine.TriggerTeardown}},
		{"removing/started", rsStarted(machine.StateRemoving, machine.IntentResourceDestroy, nil),
			[]machine.Trigger{machine.TriggerStarted, machine.TriggerTakeOver}},
		{"provisioning/started-other-command", rsStarted(machine.StateProvisioning, machine.IntentResourceCreate, func(in *machine.ResourceIntent) { in.Command = "other" }),
			[]machine.Trigger{machine.TriggerTeardown}},
		{"provisioning/started-other-holder", rsStarted(machine.StateProvisioning, machine.IntentResourceCreate, func(in *machine.ResourceIntent) { in.Holder.PID++ }),
			[]machine.Trigger{machine.TriggerTakeOver, machine.TriggerTeardown}},
		{"provisioning/started-no-group", rsStarted(machine.StateProvisioning, machine.IntentResourceCreate, func(in *machine.ResourceIntent) { in.Group = nil }),
			[]machine.Trigger{machine.TriggerTakeOver, machine.TriggerTeardown}},
		{"active/started", rsStarted(machine.StateActive, machine.IntentResourceCreate, nil), []machine.Trigger{machine.TriggerTeardown}},
		{"active/token", rsWith(rsTeardown(machine.StateActive), func(f *machine.ResourceFiring) { f.Res.Destroy += " @x@" }), []machine.Trigger{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := machine.NewResourceMachine(tt.f.Res, func(context.Context, machine.State, machine.State, machine.Trigger, machine.ResourceFiring) error {
				return nil
			})
			if d := cmp.Diff(tt.want, m.Permitted(context.Background(), tt.f)); d != "" {
				t.Errorf("Permitted (-want +got):\n%s", d)
			}
		})
	}
}

func TestResourceUnexpanded(t *testing.T) {
	t.Parallel()
	tests := []struct{ cmd, want string }{
		{"", ""},
		{"createdb 'repo-x-1-db'", ""},
		{"echo @nosuchtoken@", "@nosuchtoken@"},
		{"mkdir @resource@ && touch @dir@/x", "@resource@"},
		{"echo @resource_ident@", "@resource_ident@"},
		{"mail ops@example.com", ""},
		{"echo @@", ""},
		{"echo @1abc@", ""},
		{"echo @Token_2@", "@Token_2@"},
		// custody single-quotes every expanded value: a quoted "@x@" is a
		// value (a path named mail@box@repo), never a token.
		{"echo '@Token_2@'", ""},
		{"ls '/srv/mail@box@repo' @left@", "@left@"},
		{"echo 'a' @b@ 'c'", "@b@"},
		{`mkdir '/srv/it'\''s' @left@`, "@left@"},
		{`echo \'@x@`, "@x@"},
	}
	for _, tt := range tests {
		if got := machine.Unexpanded(tt.cmd); got != tt.want {
			t.Errorf("Unexpanded(%q) = %q, want %q", tt.cmd, got, tt.want)
		}
	}
}

func TestNextResource(t *testing.T) {
	t.Parallel()
	later := testNow.Add(time.Minute)
	create := rsIntent(machine.IntentResourceCreate, rsCreate)
	destroy := rsIntent(machine.IntentResourceDestroy, rsDestroy)
	withIntent := func(s machine.State, in *machine.ResourceIntent) machine.Resource {
		r := rsResource(s)
		r.Intent = in
		r.Evidence = machine.ResourceEvidence{Outcome: "created", Attempts: 1}
		return r
	}
	ev := func(outcome string, code, attempts int) machine.ResourceEvidence {
		return machine.ResourceEvidence{Outcome: outcome, ExitCode: code, Attempts: attempts, Output: "out"}
	}
	tests := []struct {
		name string
		r    machine.Resource
		to   machine.State
		t    machine.Trigger
		f    machine.ResourceFiring
		want func(machine.Resource) machine.Resource
	}{
		{"declare", rsResource(machine.StateNone), machine.StateProvisioning, machine.TriggerDeclare,
			machine.ResourceFiring{Now: later, Intent: create},
			func(r machine.Resource) machine.Resource { r.CreatedAt = later; r.Intent = create; return r }},
		{"created", withIntent(machine.StateProvisioning, create), machine.StateActive, machine.TriggerCreated,
			machine.ResourceFiring{Now: later, Ran: true, Attempts: 1, Output: "out"},
			func(r machine.Resource) machine.Resource { r.Intent = nil; r.Evidence = ev("created", 0, 1); return r }},
		{"create-failed", withIntent(machine.StateProvisioning, create), machine.StateFinished, machine.TriggerCreateFailed,
			machine.ResourceFiring{Now: later, Ran: true, ExitCode: 1, Attempts: 3, Output: "out"},
			func(r machine.Resource) machine.Resource {
				r.Intent = nil
				r.Evidence = ev("create-failed", 1, 3)
				return r
			}},
		{"teardown keeps evidence", withIntent(machine.StateActive, nil), machine.StateRemoving, machine.TriggerTeardown,
			machine.ResourceFiring{Now: later, Intent: destroy},
			func(r machine.Resource) machine.Resource { r.Intent = destroy; return r }},
		{"destroyed", withIntent(machine.StateRemoving, destroy), machine.StateTombstoned, machine.TriggerDestroyed,
			machine.ResourceFiring{Now: later, Ran: true, Attempts: 1, Output: "out"},
			func(r machine.Resource) machine.Resource {
				r.Intent = nil
				r.Evidence = ev("destroyed", 0, 1)
				return r
			}},
		{"destroy-failed", withIntent(machine.StateRemoving, destroy), machine.StateFinished, machine.TriggerDestroyFailed,
			machine.ResourceFiring{Now: later, Ran: true, ExitCode: 2, Attempts: 1, Output: "out"},
			func(r machine.Resource) machine.Resource {
				r.Intent = nil
				r.Evidence = ev("destroy-failed", 2, 1)
				return r
			}},
		{"ensure", withIntent(machine.StateActive, nil), machine.StateActive, machine.TriggerEnsure,
			machine.ResourceFiring{Now: later, Ran: true, ExitCode: 7, Attempts: 2, Output: "out"},
			func(r machine.Resource) machine.Resource { r.Evidence = ev("ensure", 7, 2); return r }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.r
			got := machine.NextResource(tt.r, tt.to, tt.t, tt.f)
			want := tt.want(tt.r)
			want.State, want.Rev, want.UpdatedAt = tt.to, tt.r.Rev+1, later
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("NextResource (-want +got):\n%s", d)
			}
			if d := cmp.Diff(before, tt.r); d != "" {
				t.Errorf("NextResource changed its argument (-before +after):\n%s", d)
			}
			// The ledger's intent is a copy: the firing's cannot change it.
			if got.Intent != nil && tt.f.Intent != nil {
				if got.Intent == tt.f.Intent {
					t.Errorf("NextResource aliases the firing's intent")
				}
			}
		})
	}
	t.Run("undeclared-trigger-panics", func(t *testing.T) {
		defer func() {
			if recover() == nil {
				t.Errorf("NextResource with trigger finish did not panic")
			}
		}()
		machine.NextResource(rsResource(machine.StateActive), machine.StateFinished, machine.TriggerFinish, machine.ResourceFiring{Now: later})
	})
}

func TestResourceFingerprint(t *testing.T) {
	t.Parallel()
	base := rsResource(machine.StateActive)
	fp := machine.ResourceFingerprint(base)
	if !regexp.MustCompile(`^sha256:[0-9a-f]{64}$`).MatchString(fp) {
		t.Fatalf("fingerprint %q is not sha256:<64 hex>", fp)
	}
	if again := machine.ResourceFingerprint(rsResource(machine.StateActive)); again != fp {
		t.Errorf("fingerprint is not deterministic: %s then %s", fp, again)
	}
	changes := []struct {
		name   string
		mutate func(*machine.Resource)
	}{
		{"rev", func(r *machine.Resource) { r.Rev++ }},
		{"state", func(r *machine.Resource) { r.State = machine.StateFinished }},
		{"destroy", func(r *machine.Resource) { r.Destroy += " --force" }},
		{"handle", func(r *machine.Resource) { r.Handle += "x" }},
		{"admin-key", func(r *machine.Resource) { r.AdminKey += "1" }},
		{"path", func(r *machine.Resource) { r.Path += "x" }},
		{"id", func(r *machine.Resource) { r.ID += "x" }},
	}
	for _, c := range changes {
		r := rsResource(machine.StateActive)
		c.mutate(&r)
		if machine.ResourceFingerprint(r) == fp {
			t.Errorf("fingerprint does not change with %s", c.name)
		}
	}
	same := []struct {
		name   string
		mutate func(*machine.Resource)
	}{
		{"evidence", func(r *machine.Resource) { r.Evidence = machine.ResourceEvidence{Outcome: "ensure", Output: "x"} }},
		{"updated-at", func(r *machine.Resource) { r.UpdatedAt = testNow }},
	}
	for _, c := range same {
		r := rsResource(machine.StateActive)
		c.mutate(&r)
		if machine.ResourceFingerprint(r) != fp {
			t.Errorf("fingerprint changes with %s, which a plan does not review", c.name)
		}
	}
}

func TestResourceDecideGC(t *testing.T) {
	t.Parallel()
	orphan := machine.GCFacts{} // admin key absent, nothing live holds it
	tests := []struct {
		name  string
		r     func(*machine.Resource)
		f     machine.GCFacts
		code  machine.Code // "" = reclaim
		words []string
		retry string // "" = custody resource gc --dry-run
	}{
		{name: "reclaim/active", f: orphan},
		{name: "reclaim/finished", r: func(r *machine.Resource) { r.State = machine.StateFinished }, f: orphan},
		{name: "reclaim/provisioning", r: func(r *machine.Resource) { r.State = machine.StateProvisioning }, f: orphan},
		{name: "reclaim/removing-dead-holder", r: func(r *machine.Resource) {
			r.State = machine.StateRemoving
			r.Intent = rsIntent(machine.IntentResourceDestroy, rsDestroy)
		}, f: orphan},
		{name: "reclaim/create-token-irrelevant", r: func(r *machine.Resource) { r.Create = "mkdir @x@" }, f: orphan},
		{name: "tombstoned", r: func(r *machine.Resource) { r.State = machine.StateTombstoned }, f: orphan,
			code: machine.CodeWrongState, words: []string{rsID, "already destroyed"}},
		{name: "holder-alive", f: machine.GCFacts{HolderAlive: true}, code: machine.CodeInProgress, words: []string{rsID, "live custody process"}},
		{name: "gc-false", r: func(r *machine.Resource) { r.GC = false }, f: orphan, code: machine.CodeGCDisabled, words: []string{rsID, "gc = false"}},
		{name: "admin-unknown", f: machine.GCFacts{AdminUnknown: true}, code: machine.CodeObservationFailed, words: []string{rsID, "could not be observed"}},
		// Gone from disk, still registered: the retry removes that one of git's
		// registrations (a locked entry stays, and stays live).
		{name: "admin-present", f: machine.GCFacts{AdminPresent: true}, code: machine.CodeWorktreeLive, words: []string{rsID, testID, "gone from disk", "locked"},
			retry: machine.Command("git", "worktree", "remove", rsPath)},
		{name: "admin-present/tree-present", f: machine.GCFacts{AdminPresent: true, TreePresent: true}, code: machine.CodeWorktreeLive, words: []string{rsID, testID, "locked or unmounted"}},
		{name: "path-recycled", f: machine.GCFacts{PathLive: true}, code: machine.CodeWorktreeLive, words: []string{rsPath, "path recycled"}},
		{name: "handle-recycled", f: machine.GCFacts{HandleLive: true}, code: machine.CodeWorktreeLive, words: []string{rsHandle, "handle recycled"}},
		{name: "record-live", f: machine.GCFacts{RecordLive: true}, code: machine.CodeWorktreeLive, words: []string{rsID, "has not vanished", "pruned admin entry"},
			retry: "custody plan"},
		// A record whose tree vanished is no longer live (RecordLive false):
		// its resource goes unless an intent or a live lease holds it.
		{name: "record-busy", f: machine.GCFacts{RecordBusy: true}, code: machine.CodeInProgress, words: []string{rsID, "unfinished intent"},
			retry: "custody resume"},
		{name: "record-leased", f: machine.GCFacts{Lease: &machine.Lease{Record: testID, Holder: "agent-7", Expires: testNow}}, code: machine.CodeLeaseLive,
			words: []string{rsID, "agent-7", testNow.UTC().Format("2006-01-02T15:04:05Z")}, retry: "custody resource gc"},
		{name: "record-busy-before-gc-false", r: func(r *machine.Resource) { r.GC = false }, f: machine.GCFacts{RecordBusy: true}, code: machine.CodeInProgress,
			retry: "custody resume"},
		{name: "record-unknown", f: machine.GCFacts{RecordUnknown: true}, code: machine.CodeObservationFailed, words: []string{rsID, "could not be read"}},
		{name: "tree-present", f: machine.GCFacts{TreePresent: true}, code: machine.CodeWorktreeLive, words: []string{rsPath, "still present", "move away"},
			retry: "custody resource gc"},
		{name: "tree-unknown", f: machine.GCFacts{TreeUnknown: true}, code: machine.CodeObservationFailed, words: []string{rsPath, "could not be observed"}},
		{name: "record-live-before-gc-false", r: func(r *machine.Resource) { r.GC = false }, f: machine.GCFacts{RecordLive: true}, code: machine.CodeWorktreeLive, retry: "custody plan"},
		{name: "tree-present-before-token", r: func(r *machine.Resource) { r.Destroy = "rm @x@" }, f: machine.GCFacts{TreePresent: true}, code: machine.CodeWorktreeLive, retry: "custody resource gc"},
		{name: "record-unknown-before-live", f: machine.GCFacts{RecordUnknown: true, RecordLive: true}, code: machine.CodeObservationFailed},
		{name: "unexpanded-token", r: func(r *machine.Resource) { r.Destroy = "rm -rf @dir@/cache" }, f: orphan,
			code: machine.CodeUnexpandedToken, words: []string{rsID, "@dir@", "never half-run"}},
		// Precedence: the first reason that holds is the one reported.
		{name: "tombstoned-before-holder", r: func(r *machine.Resource) { r.State = machine.StateTombstoned },
			f: machine.GCFacts{HolderAlive: true, AdminPresent: true}, code: machine.CodeWrongState},
		{name: "holder-before-gc-false", r: func(r *machine.Resource) { r.GC = false }, f: machine.GCFacts{HolderAlive: true}, code: machine.CodeInProgress},
		{name: "admin-unknown-before-present", f: machine.GCFacts{AdminUnknown: true, AdminPresent: true}, code: machine.CodeObservationFailed},
		{name: "admin-before-path", f: machine.GCFacts{AdminPresent: true, PathLive: true, HandleLive: true}, code: machine.CodeWorktreeLive, words: []string{"admin key"},
			retry: machine.Command("git", "worktree", "remove", rsPath)},
		{name: "live-before-token", r: func(r *machine.Resource) { r.Destroy = "rm @x@" }, f: machine.GCFacts{PathLive: true}, code: machine.CodeWorktreeLive},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := rsResource(machine.StateActive)
			if tt.r != nil {
				tt.r(&r)
			}
			v := machine.DecideGC(r, tt.f)
			if tt.code == "" {
				if !v.Reclaim || v.Refusal != nil {
					t.Fatalf("DecideGC = %+v, want reclaim", v)
				}
				return
			}
			if v.Reclaim || v.Refusal == nil {
				t.Fatalf("DecideGC = %+v, want kept with %s", v, tt.code)
			}
			retry := tt.retry
			if retry == "" {
				retry = "custody resource gc --dry-run"
			}
			if d := cmp.Diff(machine.Refusal{Code: tt.code, Path: rsPath, Retry: retry},
				machine.Refusal{Code: v.Refusal.Code, Path: v.Refusal.Path, Retry: v.Refusal.Retry}); d != "" {
				t.Errorf("refusal (-want +got):\n%s", d)
			}
			for _, w := range tt.words {
				if !strings.Contains(v.Refusal.Message, w) {
					t.Errorf("message %q does not say %q", v.Refusal.Message, w)
				}
			}
		})
	}
}

var rsHandleRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

func TestResourceHandle(t *testing.T) {
	t.Parallel()
	tests := []struct{ slug, id, name, want string }{
		{"repo", "feat-a1b2c3", "db", "repo-feat-a1b2c3-db"},
		{"My Project", "x-000000", "dev_server", "my-project-x-000000-dev-server"},
		{"--a--", "b", "c", "a-b-c"},
		{"Ünïcode", "wt-abcdef", "emu", "n-code-wt-abcdef-emu"},
		{"a;rm -rf /", "$(id)", "`x`", "a-rm-rf-id-x"},
		{"quote'd", "i\"d", "n\nl", "quote-d-i-d-n-l"},
	}
	for _, tt := range tests {
		got := machine.Handle(tt.slug, tt.id, tt.name)
		if got != tt.want {
			t.Errorf("Handle(%q, %q, %q) = %q, want %q", tt.slug, tt.id, tt.name, got, tt.want)
		}
		if !rsHandleRE.MatchString(got) {
			t.Errorf("Handle(%q, %q, %q) = %q is not [a-z0-9-] without empty parts", tt.slug, tt.id, tt.name, got)
		}
	}
}

// TestResourceHandleUnique: realistic worktree ids (slug-6hex) of several
// projects and resources never share a handle, and every handle is
// shell- and DNS-safe.
func TestResourceHandleUnique(t *testing.T) {
	t.Parallel()
	slugs := []string{"repo", "shop", "billing-api", "web"}
	var ids []string
	for _, n := range []string{"feature", "Fix Login", "x", "feature"} {
		for _, rnd := range [][3]byte{{0, 0, 1}, {0xab, 0xcd, 0xef}} {
			ids = append(ids, machine.WorktreeID(n, rnd))
		}
	}
	names := []string{"db", "dev-server", "emulator", "cache1"}
	seen := map[string]string{}
	for _, s := range slugs {
		for _, id := range ids {
			for _, n := range names {
				h := machine.Handle(s, id, n)
				key := s + "|" + id + "|" + n
				if !rsHandleRE.MatchString(h) {
					t.Errorf("Handle(%s) = %q is not [a-z0-9-]", key, h)
				}
				if prev, ok := seen[h]; ok && prev != key {
					t.Errorf("Handle(%s) = Handle(%s) = %q", key, prev, h)
				}
				seen[h] = key
				ident := machine.Ident(h)
				if strings.Contains(ident, "-") || strings.ReplaceAll(ident, "_", "-") != h {
					t.Errorf("Ident(%q) = %q, want dashes as underscores", h, ident)
				}
			}
		}
	}
}

func TestResourceIdent(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"repo-feat-a1b2c3-db", "repo_feat_a1b2c3_db"},
		{"a", "a"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := machine.Ident(tt.in); got != tt.want {
			t.Errorf("Ident(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestResourceIdentSQLSafe: @resource_ident@ is documented as safe for an
// SQL identifier; an unquoted SQL identifier cannot start with a digit, and
// a project whose directory name starts with one (2024-app) is ordinary.
func TestResourceIdentSQLSafe(t *testing.T) {
	t.Parallel()
	sqlIdent := regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)
	for _, slug := range []string{"repo", "2024-app", "9"} {
		h := machine.Handle(machine.SanitizeSlug(slug), "x-a1b2c3", "db")
		if got := machine.Ident(h); !sqlIdent.MatchString(got) {
			t.Errorf("Ident(Handle(%q, x-a1b2c3, db)) = %q is not an unquoted SQL identifier", slug, got)
		}
	}
}

func TestResourceSanitizeSlug(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"repo", "repo"},
		{"My Repo", "my-repo"},
		{"my_repo.git", "my-repo-git"},
		{"--x--", "x"},
		{"a@b@c", "a-b-c"},
		{"", "project"},
		{"!!!", "project"},
		{"日本", "project"},
		{"CAPS123", "caps123"},
	}
	for _, tt := range tests {
		got := machine.SanitizeSlug(tt.in)
		if got != tt.want {
			t.Errorf("SanitizeSlug(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if !rsHandleRE.MatchString(got) {
			t.Errorf("SanitizeSlug(%q) = %q is not [a-z0-9-]", tt.in, got)
		}
	}
}

func TestResourceConfigLookup(t *testing.T) {
	t.Parallel()
	c := machine.Config{BranchPrefix: "wt/", Resources: []machine.ResourceSpec{{Name: "zz"}, {Name: "aa", Create: "x"}}}
	if r, ok := c.Resource("aa"); !ok || r.Create != "x" {
		t.Errorf("Resource(aa) = %+v, %v", r, ok)
	}
	if _, ok := c.Resource("db"); ok {
		t.Errorf("Resource(db) found in a config that does not declare it")
	}
	if p := c.Policy(); p.BranchPrefix != "wt/" {
		t.Errorf("Policy().BranchPrefix = %q, want wt/", p.BranchPrefix)
	}
	if p := (machine.Config{}).Policy(); p.BranchPrefix != machine.DefaultPolicy().BranchPrefix {
		t.Errorf("an empty branch_prefix changes the default: %q", p.BranchPrefix)
	}
}
