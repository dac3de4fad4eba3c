package machine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/qmuntal/stateless"
)

// Row is what the shared commit path, the workflow runner and the renderer
// need of a record of any kind. A kind's record type implements it; the
// store keeps such a record as a JSON object carrying "id", "state", "rev"
// and "intent".
type Row interface {
	// RowKind is the record's kind.
	RowKind() Kind
	// RowID is the record's id, unique within its kind.
	RowID() string
	// RowState is the stored state; StateNone for a record not yet made.
	RowState() State
	// RowRev is the stored revision; 0 for a record not yet made.
	RowRev() uint64
	// RowPath is the path a refusal about the record names.
	RowPath() string
	// RowIntent returns the kind and holder of the record's intent, and
	// false when it carries none.
	RowIntent() (IntentKind, Holder, bool)
	// RowIntentAt is when the record's intent was committed: since when
	// its holder works on it (zero when it carries none).
	RowIntentAt() time.Time
}

// Spec declares one kind's state machine: its transitions, once, and how a
// refusal of it reads. Adding a kind means writing one Spec.
type Spec[R Row] struct {
	Kind Kind
	// Configure declares every transition with its named guards.
	Configure func(sm *stateless.StateMachine)
	// Noun prefixes the record's id in refusal messages ("resource "), or
	// is empty.
	Noun string
	// Retry is the command a refusal about r offers.
	Retry func(r R) string
}

// CommitFunc persists one transition (the commit point): the record moves
// from `from` to `to` by trigger, carrying f. It must write the new state,
// the intent and the journal entry in one transaction and return an error
// if it did not. Nothing destructive may happen inside it.
type CommitFunc[F any] func(ctx context.Context, from, to State, trigger Trigger, f F) error

// Machine is the state machine of one record of any kind, for one command,
// on one goroutine. The record in the store is the source of truth; the
// machine only carries its state between the accessor and the commit.
type Machine[R Row, F any] struct {
	sm      *stateless.StateMachine
	state   State
	trigger Trigger
	commit  CommitFunc[F]
}

// NewMachine returns the machine of rec under spec. Pass a record whose
// RowState is StateNone to fire a creating trigger.
func NewMachine[R Row, F any](spec Spec[R], rec R, commit CommitFunc[F]) *Machine[R, F] {
	m := &Machine[R, F]{state: rec.RowState(), commit: commit}
	m.sm = stateless.NewStateMachineWithExternalStorageAndArgs(
		func(context.Context) (stateless.State, []any, error) { return m.state, nil, nil },
		m.mutate,
		stateless.FiringImmediate,
	)
	spec.Configure(m.sm)
	m.sm.OnUnhandledTrigger(func(_ context.Context, s stateless.State, t stateless.Trigger, unmet []string) error {
		retry := ""
		if spec.Retry != nil {
			retry = spec.Retry(rec)
		}
		if len(unmet) > 0 {
			return &Refusal{Code: CodeGuardFailed, Path: rec.RowPath(), Retry: retry,
				Message: fmt.Sprintf("cannot %s %s%s from %s: %s did not hold", t, spec.Noun, rec.RowID(), s, strings.Join(unmet, ", "))}
		}
		return &Refusal{Code: CodeWrongState, Path: rec.RowPath(), Retry: retry,
			Message: fmt.Sprintf("cannot %s %s%s: it is %s", t, spec.Noun, rec.RowID(), s)}
	})
	return m
}

func (m *Machine[R, F]) mutate(ctx context.Context, s stateless.State, args ...any) error {
	to := s.(State)
	var f F
	ok := len(args) == 1
	if ok {
		f, ok = args[0].(F)
	}
	if !ok {
		panic(fmt.Sprintf("machine: transition [%s -> %s] fired without its %T", m.state, to, f))
	}
	if err := m.commit(ctx, m.state, to, m.trigger, f); err != nil {
		return err
	}
	m.state = to
	return nil
}

// Fire takes trigger t over f. It returns a *Refusal when the trigger is not
// permitted or a guard does not hold, the commit's error when persisting
// failed, and nil once the transition is committed.
func (m *Machine[R, F]) Fire(ctx context.Context, t Trigger, f F) error {
	m.trigger = t
	return m.sm.FireCtx(ctx, t, f)
}

// State returns the machine's current state.
func (m *Machine[R, F]) State() State { return m.state }

// Permitted returns the triggers whose guards hold over f, sorted.
func (m *Machine[R, F]) Permitted(ctx context.Context, f F) []Trigger {
	ts, err := m.sm.PermittedTriggersCtx(ctx, f)
	if err != nil {
		return nil
	}
	out := make([]Trigger, 0, len(ts))
	for _, t := range ts {
		out = append(out, t.(Trigger))
	}
	slices.Sort(out)
	return out
}

// Graph returns spec's machine as a DOT graph, for docs/.
func Graph[R Row](spec Spec[R]) string {
	var zero R
	m := NewMachine(spec, zero, func(context.Context, State, State, Trigger, any) error { return nil })
	return m.sm.ToGraph()
}
