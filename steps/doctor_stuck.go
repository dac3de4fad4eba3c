package steps

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/store"
)

// StuckRecord is a record that can never progress on its own, and the
// command that settles it.
type StuckRecord struct {
	ID    string        `json:"id"`
	Kind  machine.Kind  `json:"kind"`
	State machine.State `json:"state"`
	// Why says what holds it.
	Why string `json:"why"`
	// Settle is the command (or the first command) that settles it.
	Settle string `json:"settle"`
	// Refusal is the refusal resume gives it, when that is what holds it.
	Refusal *machine.Refusal `json:"refusal,omitempty"`
}

// Stuck lists every record that can never progress on its own, each with
// the command that settles it: a record of any kind whose intent resume
// refuses (its holder gone: an ambiguous relocation, an observation no
// rule fits), and a worktree record without an intent whose tree is gone
// and whose last commit no ref here holds, which no proof can settle
// (`custody abandon ID --acknowledge-unrecoverable COMMIT`, which asks the
// remotes too). It only observes; an intent a live process holds is that
// process's and is not listed.
func Stuck(ctx context.Context, e *Env) ([]StuckRecord, error) {
	var out []StuckRecord
	for _, w := range e.workflows() {
		s, err := w.stuck(ctx, e)
		if err != nil {
			return out, fmt.Errorf("doctor: %s records: %w", w.kind(), err)
		}
		out = append(out, s...)
	}
	lost, err := lostTrees(ctx, e)
	return append(out, lost...), err
}

// stuck lists the kind's records whose intent resume would refuse.
func (w Workflow[R]) stuck(ctx context.Context, e *Env) ([]StuckRecord, error) {
	rs, err := w.pending(ctx, e)
	if err != nil {
		return nil, err
	}
	var out []StuckRecord
	for _, r := range rs {
		_, holder, ok := r.RowIntent()
		if !ok || r.RowState() == machine.StateTombstoned || HolderAlive(holder, e.Holder) {
			continue
		}
		if w.Skip != nil {
			if skip, err := w.Skip(ctx, e, r); err != nil || skip {
				continue
			}
		}
		_, ref, err := w.Decide(ctx, e, r)
		if err != nil {
			ref = machine.StuckUnobservedRefusal(r, err)
		}
		if ref == nil {
			continue // resume settles it
		}
		out = append(out, StuckRecord{ID: r.RowID(), Kind: w.Kind, State: r.RowState(), Refusal: ref, Settle: ref.Retry,
			Why: "resume refuses its " + intentName(r) + " intent: " + ref.Message})
	}
	return out, nil
}

// pending lists the kind's records that carry an intent (Pending, or
// every record of the kind the store finds carrying one).
func (w Workflow[R]) pending(ctx context.Context, e *Env) ([]R, error) {
	if w.Pending != nil {
		return w.Pending(ctx, e)
	}
	// Nothing carries an intent: read once per version of the state file
	// (store.IntentsQuiet), not by reading every record every time.
	if quiet, err := e.Store.IntentsQuiet(); err != nil || quiet {
		return nil, err
	}
	return store.CarryingIntents[R](e.Store, w.Kind)
}

func intentName(r machine.Row) string {
	k, _, _ := r.RowIntent()
	return string(k)
}

// lostTrees lists the worktree records without an intent whose tree is
// gone (nothing at the path, nothing registered) and whose last known
// commit no ref of this repository holds, or git no longer has.
func lostTrees(ctx context.Context, e *Env) ([]StuckRecord, error) {
	recs, err := e.Store.List()
	if err != nil {
		return nil, err
	}
	var out []StuckRecord
	for _, rec := range recs {
		if rec.State == machine.StateTombstoned || rec.Intent != nil {
			continue
		}
		if _, err := os.Lstat(rec.Path); !errors.Is(err, os.ErrNotExist) {
			continue
		}
		head := rec.EffectiveHead()
		if !machine.IsFullCommit(head) {
			continue
		}
		obs, _, err := e.ObserveRecord(ctx, rec, observe.Scope{})
		if err != nil {
			return out, err
		}
		if obs.PathState != machine.PathAbsent || obs.Registered || obs.AdminPresent || obs.MovedTo != "" {
			continue
		}
		held := ""
		_, gone := e.Git.Observe(ctx, e.Repo.MainCheckout, "cat-file", "-e", head+"^{commit}")
		if gone == nil {
			refs, err := e.Git.Observe(ctx, e.Repo.MainCheckout, "for-each-ref", "--contains", head, "--format=%(refname)")
			if err != nil {
				return out, fmt.Errorf("check which refs hold %s: %w", head, err)
			}
			held = strings.TrimSpace(string(refs))
		}
		if held != "" {
			continue // plan settles it once that ref is published
		}
		s := StuckRecord{ID: rec.ID, Kind: machine.KindWorktree, State: rec.State,
			Settle: machine.CommandOn([]string{"custody", "abandon", "--acknowledge-unrecoverable", head}, rec.ID),
			Why: fmt.Sprintf("its tree %s is gone and no ref here holds its last commit %s, so no proof can ever settle it (unless a remote holds that commit: then custody plan does)",
				machine.EscapeControl(rec.Path), head)}
		if gone == nil && obs.BranchTip == "" && rec.Branch != "" {
			// git still has the commit, which nothing references until gc
			// prunes it: its branch back on it keeps it, and plan settles
			// the record keeping the branch (as plan's own advice says).
			s.Settle = machine.Command("git", "branch", rec.Branch, head)
			s.Why += "; git still has that commit, unreferenced until gc prunes it: put the tree's branch back on it, then custody plan settles the record keeping the branch"
		}
		out = append(out, s)
	}
	return out, nil
}
