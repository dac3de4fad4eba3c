//go:build unix

package steps_test

// A throwaway fourth kind, "widget", defined here and nowhere else: one
// spec, one resume decision, one continuation table, one bucket
// registration and one migration. Nothing in the shared commit path, the
// runner or the output code knows it; the test drives it through create →
// intent → a real crash (SIGKILL) → resume, and through --take-over.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/qmuntal/stateless"
	bolt "go.etcd.io/bbolt"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/store"
)

const kindWidget machine.Kind = "widget"

// widget is the kind's record: a file it makes at Path.
type widget struct {
	ID        string        `json:"id"`
	State     machine.State `json:"state"`
	Rev       uint64        `json:"rev"`
	Path      string        `json:"path"`
	Intent    *widgetIntent `json:"intent,omitempty"`
	Outcome   string        `json:"outcome,omitempty"`
	UpdatedAt time.Time     `json:"updated_at"`
}

type widgetIntent struct {
	Kind   machine.IntentKind `json:"kind"`
	Holder machine.Holder     `json:"holder"`
}

func (w widget) RowKind() machine.Kind   { return kindWidget }
func (w widget) RowID() string           { return w.ID }
func (w widget) RowState() machine.State { return w.State }
func (w widget) RowRev() uint64          { return w.Rev }
func (w widget) RowPath() string         { return w.Path }
func (w widget) RowIntent() (machine.IntentKind, machine.Holder, bool) {
	if w.Intent == nil {
		return "", machine.Holder{}, false
	}
	return w.Intent.Kind, w.Intent.Holder, true
}

// RowIntentAt is zero: a widget's intent says no time.
func (w widget) RowIntentAt() time.Time { return time.Time{} }

// widgetFiring is the argument of every widget trigger.
type widgetFiring struct {
	W      widget
	Made   bool
	Intent *widgetIntent
}

func widgetArg(args []any) widgetFiring { f, _ := args[0].(widgetFiring); return f }

func widgetIntentGiven(_ context.Context, args ...any) bool { return widgetArg(args).Intent != nil }
func widgetMade(_ context.Context, args ...any) bool        { return widgetArg(args).Made }
func widgetNotMade(_ context.Context, args ...any) bool     { return !widgetArg(args).Made }
func widgetHeld(_ context.Context, args ...any) bool {
	f := widgetArg(args)
	return f.W.Intent != nil && f.Intent != nil && f.Intent.Kind == f.W.Intent.Kind
}

// 1. The spec.
func widgetSpec() machine.Spec[widget] {
	return machine.Spec[widget]{
		Kind: kindWidget,
		Configure: func(sm *stateless.StateMachine) {
			sm.Configure(machine.StateNone).Permit(machine.TriggerCreate, machine.StateProvisioning, widgetIntentGiven)
			sm.Configure(machine.StateProvisioning).
				Permit(machine.TriggerCreated, machine.StateActive, widgetMade).
				Permit(machine.TriggerDiscard, machine.StateTombstoned, widgetNotMade).
				PermitReentry(machine.TriggerTakeOver, widgetHeld)
			sm.Configure(machine.StateActive)
			sm.Configure(machine.StateTombstoned)
		},
		Noun:  "widget ",
		Retry: func(w widget) string { return "custody resume" },
	}
}

func widgetNext(w widget, now time.Time) func(machine.State, machine.Trigger, widgetFiring) widget {
	return func(to machine.State, t machine.Trigger, f widgetFiring) widget {
		n := w
		n.State, n.Rev, n.UpdatedAt = to, w.Rev+1, now
		switch t {
		case machine.TriggerCreate, machine.TriggerTakeOver:
			n.Intent = f.Intent
		default:
			n.Intent, n.Outcome = nil, string(t)
		}
		return n
	}
}

func fireWidget(ctx context.Context, e *steps.Env, w widget, t machine.Trigger, f widgetFiring) (widget, error) {
	f.W = w
	return steps.Fire(ctx, e, steps.Transition[widget, widgetFiring]{Spec: widgetSpec(), Next: widgetNext(w, e.Now())}, w, t, f, string(t))
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

// 2. The resume decision: pure, over what was observed.
func decideWidget(w widget, made bool) (string, *machine.Refusal) {
	if w.State == machine.StateProvisioning && w.Intent != nil {
		if made {
			return "activate", nil
		}
		return "discard", nil
	}
	return "", &machine.Refusal{Code: machine.CodeResumeUnmatched, Path: w.Path, Retry: "custody resume",
		Message: fmt.Sprintf("widget %s is %s; no rule fits", w.ID, w.State)}
}

// 3. The continuation table, as one Workflow.
func widgetWorkflow() steps.Workflow[widget] {
	done := func(t machine.Trigger, o machine.Outcome) func(context.Context, *steps.Env, widget) ([]steps.ResumeItem, error) {
		return func(ctx context.Context, e *steps.Env, w widget) ([]steps.ResumeItem, error) {
			if _, err := fireWidget(ctx, e, w, t, widgetFiring{Made: exists(w.Path)}); err != nil {
				return nil, err
			}
			return []steps.ResumeItem{{ID: w.ID, Outcome: o}}, nil
		}
	}
	return steps.Workflow[widget]{
		Kind: kindWidget,
		TakeOver: func(ctx context.Context, e *steps.Env, w widget) (widget, error) {
			in := *w.Intent
			in.Holder = e.Holder
			return fireWidget(ctx, e, w, machine.TriggerTakeOver, widgetFiring{Intent: &in})
		},
		Decide: func(_ context.Context, _ *steps.Env, w widget) (string, *machine.Refusal, error) {
			a, r := decideWidget(w, exists(w.Path))
			return a, r, nil
		},
		Continue: map[string]func(context.Context, *steps.Env, widget) ([]steps.ResumeItem, error){
			"activate": done(machine.TriggerCreated, machine.OutcomeActivated),
			"discard":  done(machine.TriggerDiscard, machine.OutcomeDiscarded),
		},
	}
}

// 4 and 5. The bucket registration and its migration.
func widgetSchema() store.Schema {
	base := store.DefaultSchema()
	return base.With(store.Bucket{Name: "widgets", Kind: kindWidget}, store.Migration{
		To: base.Version() + 1, Name: "add the widgets bucket",
		Up: func(m *store.Migrator) error { return m.CreateBucket("widgets") },
	})
}

func openWidgets(t testing.TB, path string) *store.Store {
	t.Helper()
	schema := widgetSchema()
	s, err := store.OpenWith(context.Background(), path, store.Options{Timeout: 5 * time.Second, Create: true, Schema: &schema})
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	return s
}

func widgetEnv(s *store.Store) *steps.Env {
	return &steps.Env{Store: s, Now: time.Now, Actor: "test", Holder: steps.Self(),
		Workflows: append(steps.DefaultWorkflows(), widgetWorkflow().Resumer())}
}

// TestWidgetChild is the process that crashes: it is run by the tests
// below as a child (WIDGET_STATE set) and does nothing otherwise.
func TestWidgetChild(t *testing.T) {
	state, mode := os.Getenv("WIDGET_STATE"), os.Getenv("WIDGET_MODE")
	if state == "" {
		t.Skip("run as the child of TestNewKindResumesAfterACrash")
	}
	e := widgetEnv(openWidgets(t, state))
	w := widget{ID: "w-1", Path: os.Getenv("WIDGET_PATH")}
	in := &widgetIntent{Kind: machine.IntentCreate, Holder: e.Holder}
	if _, err := fireWidget(context.Background(), e, w, machine.TriggerCreate, widgetFiring{Intent: in}); err != nil {
		t.Fatalf("create: %v", err)
	}
	if mode == "after-act" || mode == "hold" {
		if err := os.WriteFile(w.Path, []byte("made\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if mode == "hold" {
		_ = os.WriteFile(state+".holding", nil, 0o644)
		time.Sleep(time.Minute)
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}

// widgetChild runs TestWidgetChild in a new process.
func widgetChild(t *testing.T, state, path, mode string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestWidgetChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "WIDGET_STATE="+state, "WIDGET_PATH="+path, "WIDGET_MODE="+mode)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

func TestNewKindResumesAfterACrash(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		mode    string
		outcome machine.Outcome
		state   machine.State
	}{
		{"after-intent", machine.OutcomeDiscarded, machine.StateTombstoned},
		{"after-act", machine.OutcomeActivated, machine.StateActive},
	} {
		t.Run(tt.mode, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			state, path := filepath.Join(dir, "state.db"), filepath.Join(dir, "widget")
			// A store of custody's own schema gains the kind by migration.
			if _, err := store.OpenWith(context.Background(), state, store.Options{Timeout: time.Second, Create: true}); err != nil {
				t.Fatal(err)
			}
			s := openWidgets(t, state)
			if up := s.Upgraded(); up == nil || up.To != widgetSchema().Version() || !exists(up.Backup) {
				t.Fatalf("opening with the widget schema: upgrade %+v, want one to schema %d with a backup", up, widgetSchema().Version())
			}

			// create → intent → SIGKILL
			err := widgetChild(t, state, path, tt.mode).Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("the child was not killed: %v", err)
			}
			w, err := store.Load[widget](s, kindWidget, "w-1")
			if err != nil || w.State != machine.StateProvisioning || w.Intent == nil {
				t.Fatalf("after the crash: %+v, %v; want provisioning with an intent", w, err)
			}

			// resume, through the shared runner
			e := widgetEnv(s)
			res, err := steps.Resume(context.Background(), e)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Items) != 1 || res.Items[0].ID != "w-1" || res.Items[0].Kind != kindWidget ||
				res.Items[0].Outcome != tt.outcome || res.Items[0].Refusal != nil || res.Pending() {
				t.Fatalf("resume = %+v, want w-1 %s", res.Items, tt.outcome)
			}
			w, err = store.Load[widget](s, kindWidget, "w-1")
			if err != nil || w.State != tt.state || w.Intent != nil {
				t.Fatalf("after resume: %+v, %v; want %s without an intent", w, err, tt.state)
			}
			var trail []string
			err = s.Journal("w-1", func(_ []byte, en store.Entry) error {
				trail = append(trail, en.Kind+":"+en.From+">"+en.To+":"+en.Trigger)
				return nil
			})
			want := []string{"widget:none>provisioning:create", "widget:provisioning>provisioning:take-over",
				"widget:provisioning>" + string(tt.state) + ":" + map[machine.State]string{machine.StateActive: "created", machine.StateTombstoned: "discard"}[tt.state]}
			if err != nil || strings.Join(trail, " ") != strings.Join(want, " ") {
				t.Errorf("journal of w-1 = %q, %v; want %q", trail, err, want)
			}
			if ps, err := s.Check(); err != nil || len(ps) != 0 {
				t.Errorf("Check after resume: %v, %v", ps, err)
			}
			// Resume again: nothing to do.
			if res, err := steps.Resume(context.Background(), e); err != nil || len(res.Items) != 0 {
				t.Errorf("second resume = %+v, %v; want nothing", res.Items, err)
			}
		})
	}
}

// TestNewKindTakeOver: a widget whose intent another live process on this
// host holds is that process's work in progress for resume (named by its
// pid, nothing to retry or take over, not pending), and resume
// --take-over still hands it over.
func TestNewKindTakeOver(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	state, path := filepath.Join(dir, "state.db"), filepath.Join(dir, "widget")
	s := openWidgets(t, state)
	child := widgetChild(t, state, path, "hold")
	defer func() { _ = child.Process.Kill(); _ = child.Wait() }()
	for deadline := time.Now().Add(30 * time.Second); !exists(state + ".holding"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the child never took its intent")
		}
	}
	e := widgetEnv(s)
	res, err := steps.Resume(context.Background(), e)
	if err != nil || len(res.Items) != 1 || res.Items[0].Outcome != machine.OutcomeInProgress ||
		res.Items[0].Refusal != nil || res.Items[0].Progress == nil || res.Items[0].Progress.PID != child.Process.Pid {
		t.Fatalf("resume with a live holder = %+v, %v; want w-1 in progress under pid %d, refusing nothing", res.Items, err, child.Process.Pid)
	}
	if res.LeftForUs() || res.Pending() {
		t.Errorf("another process's live work is pending for resume or left for a command that resumes first")
	}
	res, err = steps.ResumeTakingOver(context.Background(), e, []string{"w-1"})
	if err != nil || len(res.Items) != 1 || res.Items[0].Outcome != machine.OutcomeActivated {
		t.Fatalf("resume --take-over w-1 = %+v, %v; want activated", res.Items, err)
	}
	if w, err := store.Load[widget](s, kindWidget, "w-1"); err != nil || w.State != machine.StateActive || w.Intent != nil {
		t.Errorf("after take-over: %+v, %v", w, err)
	}
}

// dropIndex deletes key from the state file's intent index behind the
// store's back, as an older custody writing into an upgraded file would
// leave it.
func dropIndex(t *testing.T, state, key string) {
	t.Helper()
	db, err := bolt.Open(state, 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(func(tx *bolt.Tx) error { return tx.Bucket([]byte("intents")).Delete([]byte(key)) }); err != nil {
		t.Fatal(err)
	}
}

// TestNewKindResumeReadsTheRecords: an intent the index lacks is still
// resumed (the records are the truth), and resume rebuilds the index.
func TestNewKindResumeReadsTheRecords(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	state, path := filepath.Join(dir, "state.db"), filepath.Join(dir, "widget")
	s := openWidgets(t, state)
	e := widgetEnv(s)
	in := &widgetIntent{Kind: machine.IntentCreate, Holder: machine.Holder{PID: 1 << 30, Host: e.Holder.Host}}
	if _, err := fireWidget(context.Background(), e, widget{ID: "w-1", Path: path}, machine.TriggerCreate, widgetFiring{Intent: in}); err != nil {
		t.Fatal(err)
	}
	dropIndex(t, state, "widget/w-1")
	if ps, _ := s.Check(); !strings.Contains(fmt.Sprint(ps), "intent index disagrees") {
		t.Fatalf("Check does not see the lost index entry: %v", ps)
	}
	res, err := steps.Resume(context.Background(), e)
	if err != nil || len(res.Items) != 1 || res.Items[0].ID != "w-1" || res.Items[0].Outcome != machine.OutcomeDiscarded {
		t.Fatalf("resume with the index entry lost = %+v, %v; want w-1 discarded", res.Items, err)
	}
	if ps, err := s.Check(); err != nil || len(ps) != 0 {
		t.Errorf("Check after resume: %v %v", ps, err)
	}
}

// TestRunnerEdgeCases drives the runner with workflows that misbehave or
// race: a take-over another process won and settled is already-done, not
// in-progress; a continuation that settles two records reports each once;
// a decision without a continuation is a refusal, never a panic.
func TestRunnerEdgeCases(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	setup := func(t *testing.T, ids ...string) (*steps.Env, string) {
		dir := t.TempDir()
		s := openWidgets(t, filepath.Join(dir, "state.db"))
		e := widgetEnv(s)
		for _, id := range ids {
			in := &widgetIntent{Kind: machine.IntentCreate, Holder: machine.Holder{PID: 1 << 30, Host: e.Holder.Host}}
			if _, err := fireWidget(ctx, e, widget{ID: id, Path: filepath.Join(dir, id)}, machine.TriggerCreate, widgetFiring{Intent: in}); err != nil {
				t.Fatal(err)
			}
		}
		return e, dir
	}
	run := func(t *testing.T, e *steps.Env, w steps.Workflow[widget]) steps.ResumeResult {
		e.Workflows = []steps.Resumer{w.Resumer()}
		res, err := steps.Resume(ctx, e)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}

	t.Run("take-over-lost-to-a-process-that-settled-it", func(t *testing.T) {
		e, _ := setup(t, "w-1")
		w := widgetWorkflow()
		w.TakeOver = func(ctx context.Context, e *steps.Env, x widget) (widget, error) {
			// The other process wins the take-over and finishes first.
			in := *x.Intent
			in.Holder = machine.Holder{PID: 1 << 29, Host: "elsewhere"}
			taken, err := fireWidget(ctx, e, x, machine.TriggerTakeOver, widgetFiring{Intent: &in})
			if err != nil {
				return x, err
			}
			if _, err := fireWidget(ctx, e, taken, machine.TriggerDiscard, widgetFiring{}); err != nil {
				return x, err
			}
			return x, fmt.Errorf("take over %s: %w", x.ID, store.ErrConflict)
		}
		res := run(t, e, w)
		if len(res.Items) != 1 || res.Items[0].Outcome != machine.OutcomeAlreadyDone || res.Items[0].Refusal != nil || res.Pending() {
			t.Errorf("resume = %+v; want w-1 already-done", res.Items)
		}
	})

	t.Run("take-over-lost-to-a-live-process", func(t *testing.T) {
		e, _ := setup(t, "w-1")
		w := widgetWorkflow()
		w.TakeOver = func(ctx context.Context, e *steps.Env, x widget) (widget, error) {
			in := *x.Intent
			in.Holder = machine.Holder{PID: 7, Host: "elsewhere"}
			if _, err := fireWidget(ctx, e, x, machine.TriggerTakeOver, widgetFiring{Intent: &in}); err != nil {
				return x, err
			}
			return x, fmt.Errorf("take over %s: %w", x.ID, store.ErrConflict)
		}
		res := run(t, e, w)
		if len(res.Items) != 1 || res.Items[0].Outcome != machine.OutcomeInProgress || res.Items[0].Refusal == nil ||
			!strings.Contains(res.Items[0].Refusal.Message, "process 7 on elsewhere") {
			t.Errorf("resume = %+v; want w-1 in-progress naming the winner, process 7 on elsewhere", res.Items)
		}
	})

	t.Run("a-continuation-settles-two", func(t *testing.T) {
		e, _ := setup(t, "w-1", "w-2")
		w := widgetWorkflow()
		w.Continue = map[string]func(context.Context, *steps.Env, widget) ([]steps.ResumeItem, error){
			"discard": func(ctx context.Context, e *steps.Env, x widget) ([]steps.ResumeItem, error) {
				var out []steps.ResumeItem
				for _, id := range []string{"w-1", "w-2"} {
					cur, err := store.Load[widget](e.Store, kindWidget, id)
					if err != nil {
						return nil, err
					}
					if cur.Holder() != e.Holder {
						in := *cur.Intent
						in.Holder = e.Holder
						if cur, err = fireWidget(ctx, e, cur, machine.TriggerTakeOver, widgetFiring{Intent: &in}); err != nil {
							return nil, err
						}
					}
					if _, err := fireWidget(ctx, e, cur, machine.TriggerDiscard, widgetFiring{}); err != nil {
						return nil, err
					}
					out = append(out, steps.ResumeItem{ID: id, Outcome: machine.OutcomeDiscarded})
				}
				return out, nil
			},
		}
		res := run(t, e, w)
		var ids []string
		for _, it := range res.Items {
			ids = append(ids, it.ID+" "+string(it.Outcome))
		}
		if strings.Join(ids, ", ") != "w-1 discarded, w-2 discarded" || res.Pending() {
			t.Errorf("resume = %q; want each widget once, discarded", ids)
		}
	})

	t.Run("a-decision-without-a-continuation", func(t *testing.T) {
		e, _ := setup(t, "w-1")
		w := widgetWorkflow()
		w.Decide = func(context.Context, *steps.Env, widget) (string, *machine.Refusal, error) { return "bogus", nil, nil }
		res := run(t, e, w)
		if len(res.Items) != 1 || res.Items[0].Refusal == nil || res.Items[0].Refusal.Code != machine.CodeResumeUnmatched ||
			!strings.Contains(res.Items[0].Refusal.Message, `"bogus"`) || res.Items[0].Refusal.Retry == "" {
			t.Errorf("resume = %+v; want a resume-unmatched refusal naming the decision", res.Items)
		}
	})
}

// Holder is the holder of the widget's intent (zero when none).
func (w widget) Holder() machine.Holder {
	_, h, _ := w.RowIntent()
	return h
}
