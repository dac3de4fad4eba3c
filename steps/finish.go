package steps

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/store"
)

// Outcome is the result of a command on one record.
type Outcome struct {
	ID      string           `json:"id"`
	Outcome machine.Outcome  `json:"outcome"`
	State   machine.State    `json:"state,omitempty"`
	Refusal *machine.Refusal `json:"refusal,omitempty"`
	// Resources are the worktree's resources torn down with it.
	Resources []ResourceOutcome `json:"resources,omitempty"`
	// Branch is what a removal did with the tree's branch.
	Branch *BranchResult `json:"branch,omitempty"`
	// Recovered are the recovery refs this removal wrote for commits that
	// would otherwise have died with the tree.
	Recovered []RecoveredRef `json:"recovered,omitempty"`
	// Commit is, for an abandonment, the commit acknowledged lost, whole
	// (however the person named it).
	Commit string `json:"commit,omitempty"`
}

// Pending reports whether the record, or one of its resources, was left
// refused or unfinished (machine.ItemPending).
func (o Outcome) Pending() bool {
	if machine.ItemPending(o.Outcome, o.Refusal) {
		return true
	}
	for _, r := range o.Resources {
		if r.Refusal != nil {
			return true
		}
	}
	return false
}

// Outcomes is the result of a command over several records.
type Outcomes struct {
	Items []Outcome `json:"items"`
}

// Pending reports whether any record was left refused or unfinished.
func (r Outcomes) Pending() bool {
	for _, o := range r.Items {
		if o.Pending() {
			return true
		}
	}
	return false
}

// Finish finishes each active record: it records the final HEAD, guarded by
// no live lease. An already finished record reports already-done.
func Finish(ctx context.Context, e *Env, ids []string) ([]Outcome, error) {
	return each(ctx, e, ids, machine.TriggerFinish, machine.StateFinished)
}

// Reopen takes each finished record back to active.
func Reopen(ctx context.Context, e *Env, ids []string) ([]Outcome, error) {
	return each(ctx, e, ids, machine.TriggerReopen, machine.StateActive)
}

func each(ctx context.Context, e *Env, ids []string, t machine.Trigger, target machine.State) ([]Outcome, error) {
	var out []Outcome
	for _, id := range ids {
		rec, err := e.Store.Get(id)
		if errors.Is(err, store.ErrNotFound) {
			out = append(out, Outcome{ID: id, Outcome: machine.OutcomeRefused, Refusal: machine.NoRecordRefusal(id)})
			continue
		}
		if err != nil {
			return out, err
		}
		if rec.State == target {
			out = append(out, Outcome{ID: id, Outcome: machine.OutcomeAlreadyDone, State: rec.State})
			continue
		}
		obs, _, err := e.ObserveRecord(ctx, rec, observe.Scope{})
		if err != nil {
			return out, err
		}
		next, err := e.fire(ctx, rec, t, machine.Firing{Obs: obs}, string(t))
		var r *machine.Refusal
		if errors.As(err, &r) {
			if t == machine.TriggerFinish && obs.Lease.Live(e.Now()) {
				r = machine.LeasedRefusal(id, rec.Path, *obs.Lease)
			}
			out = append(out, Outcome{ID: id, Outcome: machine.OutcomeRefused, State: rec.State, Refusal: r})
			continue
		}
		if err != nil {
			return out, err
		}
		out = append(out, Outcome{ID: id, Outcome: machine.Outcome(string(t) + "ed"), State: next.State})
	}
	return out, nil
}

// CurrentID returns the id of the managed worktree containing dir, for
// commands that default to "this worktree".
func CurrentID(e *Env, dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	recs, err := e.Store.List()
	if err != nil {
		return "", err
	}
	for _, r := range recs {
		if r.State != machine.StateTombstoned && (abs == r.Path || strings.HasPrefix(abs, r.Path+string(os.PathSeparator))) {
			return r.ID, nil
		}
	}
	return "", machine.NotInManagedWorktreeRefusal(abs)
}
