package steps

import (
	"context"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/store"
)

// Transition is what one kind supplies to fire a trigger: the record after
// it (the kind's pure Next) and the journal fields of the change.
type Transition[R machine.Row, F any] struct {
	Spec machine.Spec[R]
	// Next returns the record after the trigger takes it to `to`.
	Next func(to machine.State, t machine.Trigger, f F) R
	// Fill completes the change: its observation, proof and side writes.
	// It may be nil.
	Fill func(c *store.Change[R], t machine.Trigger, f F)
}

// Fire takes trigger t on r through its kind's machine over f and commits
// the result through the store's one commit path, with outcome as the
// journal entry's outcome. It returns the record as committed; on a
// refusal or a conflict, r unchanged and the error.
func Fire[R machine.Row, F any](ctx context.Context, e *Env, tr Transition[R, F], r R, t machine.Trigger, f F, outcome string) (R, error) {
	var out R
	m := machine.NewMachine(tr.Spec, r, func(_ context.Context, _, to machine.State, trig machine.Trigger, f F) error {
		next := tr.Next(to, trig, f)
		c := store.Change[R]{Before: r, After: next, Trigger: trig, Outcome: outcome, Actor: e.Actor}
		if tr.Fill != nil {
			tr.Fill(&c, trig, f)
		}
		if err := store.CommitChange(e.Store, c); err != nil {
			return err
		}
		out = next
		return nil
	})
	if err := m.Fire(ctx, t, f); err != nil {
		return r, err
	}
	return out, nil
}

// fire takes trigger t on a worktree record.
func (e *Env) fire(ctx context.Context, rec machine.Record, t machine.Trigger, f machine.Firing, outcome string) (machine.Record, error) {
	f.Record = rec
	f.Now = e.Now().UTC()
	f.Policy = e.Policy
	return Fire(ctx, e, Transition[machine.Record, machine.Firing]{
		Spec: machine.WorktreeSpec(),
		Next: func(to machine.State, t machine.Trigger, f machine.Firing) machine.Record {
			return machine.Next(rec, to, t, f)
		},
		Fill: func(c *store.Change[machine.Record], t machine.Trigger, f machine.Firing) {
			c.Observation = machine.Fingerprint(f.Obs)
			c.Proof = f.Obs.Proof
			if f.Intent != nil && f.Intent.Proof != nil {
				c.Proof = f.Intent.Proof
			}
			if (t == machine.TriggerRemoved || t == machine.TriggerSettled) && rec.Intent != nil {
				c.Proof = rec.Intent.Proof
			}
			if t == machine.TriggerSettle {
				// A settlement's proof is only what it proved (none when
				// nothing was): never a proof the observation holds of
				// another commit.
				c.Proof = nil
				if f.Intent != nil {
					c.Proof = f.Intent.Proof
				}
			}
			if rec.State == machine.StateNone && c.After.Port != 0 {
				c.Side = append(c.Side, store.ClaimPort(c.After.ID, c.After.Port))
			}
		},
	}, rec, t, f, outcome)
}
