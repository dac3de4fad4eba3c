package steps

import (
	"context"
	"errors"
	"fmt"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/store"
)

// ResumeItem is what resume did with one record that carried an intent.
type ResumeItem struct {
	ID      string           `json:"id"`
	Kind    machine.Kind     `json:"kind,omitempty"`
	Action  string           `json:"action,omitempty"`
	Outcome machine.Outcome  `json:"outcome"`
	Refusal *machine.Refusal `json:"refusal,omitempty"`
	// Progress is, for an intent another live process on this host is
	// carrying out (outcome in-progress), who and since when: its work,
	// not this command's, and nothing to retry.
	Progress *machine.LiveWork `json:"progress,omitempty"`
}

// ResumeResult is everything one resume did, kind by kind.
type ResumeResult struct {
	Items []ResumeItem `json:"items"`
}

// Pending reports whether resume left something refused or held by a
// process on another host (exit 3). Another custody's live work on this
// host is in progress, not pending: it is that process's to finish.
func (r ResumeResult) Pending() bool {
	for _, it := range r.Items {
		if it.Progress == nil && machine.ItemPending(it.Outcome, it.Refusal) {
			return true
		}
	}
	return false
}

// LeftForUs reports whether resume left something refused that is not held
// by another live process: what makes a mutating command, which resumes
// first, exit 3. An intent another invocation is carrying out is that
// invocation's to report.
func (r ResumeResult) LeftForUs() bool {
	for _, it := range r.Items {
		// In progress here or elsewhere: another process's.
		if it.Outcome != machine.OutcomeInProgress && machine.ItemPending(it.Outcome, it.Refusal) {
			return true
		}
	}
	return false
}

// Workflow is one kind's part in the runner: how to find its records that
// carry an intent, how to take one over, the pure decision for one, and the
// continuation table that carries each decision out. Adding a kind means
// writing one Workflow; the runner itself does not change.
type Workflow[R machine.Row] struct {
	Kind machine.Kind
	// Pending lists the kind's records with an intent; nil means every
	// record of the kind that carries one (store.CarryingIntents).
	Pending func(ctx context.Context, e *Env) ([]R, error)
	// Skip reports a record the runner leaves alone this time (its
	// resume belongs to another record's); it may be nil.
	Skip func(ctx context.Context, e *Env, r R) (bool, error)
	// TakeOver commits r's intent under e.Holder (a reentry by
	// compare-and-swap); store.ErrConflict means another process won.
	TakeOver func(ctx context.Context, e *Env, r R) (R, error)
	// Decide observes r fresh and picks its one resume rule (a pure
	// machine decision), or refuses.
	Decide func(ctx context.Context, e *Env, r R) (string, *machine.Refusal, error)
	// Continue maps each decision to the step that carries it out.
	Continue map[string]func(ctx context.Context, e *Env, r R) ([]ResumeItem, error)
}

// Resumer is a Workflow with its record type erased, as the runner holds
// every kind in one list.
type Resumer interface {
	kind() machine.Kind
	resume(ctx context.Context, e *Env, forced map[string]bool) ([]ResumeItem, error)
	stuck(ctx context.Context, e *Env) ([]StuckRecord, error)
	interrupted(ctx context.Context, e *Env) ([]InterruptedIntent, error)
	live(ctx context.Context, e *Env) ([]LiveIntent, error)
}

// Resumer returns w for the runner.
func (w Workflow[R]) Resumer() Resumer { return w }

func (w Workflow[R]) kind() machine.Kind { return w.Kind }

// DefaultWorkflows is the core's own kinds: worktrees. The features' kinds
// (the resource ledger, archives) are registered by cmd/custody in
// Env.Workflows, after the worktrees: a worktree's own resume re-drives a
// provisioning tree's resources.
func DefaultWorkflows() []Resumer {
	return []Resumer{WorktreeWorkflow()}
}

// WorktreeWorkflow is the worktree kind's part in the runner.
func WorktreeWorkflow() Resumer { return worktreeWorkflow().Resumer() }

func (e *Env) workflows() []Resumer {
	if e.Workflows != nil {
		return e.Workflows
	}
	return DefaultWorkflows()
}

// Resume drives every record of every kind that carries an intent to
// exactly one outcome (DESIGN §4). A record whose intent another live
// process holds is left alone and reported in-progress; an observation
// that fits no rule is a refusal naming what was seen. Resume is
// idempotent.
func Resume(ctx context.Context, e *Env) (ResumeResult, error) {
	return ResumeTakingOver(ctx, e, nil)
}

// ResumeTakingOver is Resume that also takes over the intents of the
// records named in takeOver (of any kind) whatever their holder: an
// operator's word that the holder (on another host, or in a container that
// is gone) is dead, since custody can observe liveness only on its own host.
func ResumeTakingOver(ctx context.Context, e *Env, takeOver []string) (ResumeResult, error) {
	forced := map[string]bool{}
	for _, id := range takeOver {
		forced[id] = true
	}
	res := ResumeResult{Items: []ResumeItem{}}
	// Nothing carries an intent and the index is empty: nothing to do,
	// and nothing to take over. The answer is read once per version of
	// the state file (store.IntentsQuiet).
	quiet, err := e.Store.IntentsQuiet()
	if err != nil {
		return res, fmt.Errorf("resume: look for intents: %w", err)
	}
	if quiet {
		return res, nil
	}
	// The records are the truth; the index is rebuilt from them when it
	// disagrees (an older custody may have written an intent after the file
	// was upgraded).
	if _, err := e.Store.ReindexIntents(); err != nil {
		return res, fmt.Errorf("resume: rebuild the intent index: %w", err)
	}
	for _, w := range e.workflows() {
		items, err := w.resume(ctx, e, forced)
		res.Items = append(res.Items, items...)
		if err != nil {
			return res, fmt.Errorf("resume %s records: %w", w.kind(), err)
		}
	}
	return res, nil
}

// resume is the one loop every kind shares: list → skip → live holder? →
// take over → decide → continue.
func (w Workflow[R]) resume(ctx context.Context, e *Env, forced map[string]bool) ([]ResumeItem, error) {
	rs, err := w.pending(ctx, e)
	if err != nil {
		return nil, err
	}
	var out []ResumeItem
	for _, r := range rs {
		// Read it again: an earlier continuation (a teardown) or another
		// process may have settled or moved it since the list was read.
		r, err := store.Load[R](e.Store, w.Kind, r.RowID())
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return out, err
		}
		items, err := w.resumeOne(ctx, e, r, forced[r.RowID()])
		out = append(out, items...)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// resumeOne drives one record that carries an intent: skip → live holder?
// → take over → decide → continue. force takes the intent over whatever
// its holder.
func (w Workflow[R]) resumeOne(ctx context.Context, e *Env, r R, force bool) ([]ResumeItem, error) {
	item := ResumeItem{ID: r.RowID(), Kind: w.Kind}
	_, holder, ok := r.RowIntent()
	if !ok || r.RowState() == machine.StateTombstoned {
		return nil, nil
	}
	if w.Skip != nil {
		skip, err := w.Skip(ctx, e, r)
		if err != nil || skip {
			return nil, err
		}
	}
	if live := Liveness(holder, e.Holder); !force && live != machine.HolderGone {
		return []ResumeItem{inProgress(item, r, live)}, nil
	}
	if holder != e.Holder {
		// Take the intent over first: of two processes resuming it, only
		// the one whose compare-and-swap wins goes on.
		taken, err := w.TakeOver(ctx, e, r)
		if errors.Is(err, store.ErrConflict) {
			return []ResumeItem{w.lostTakeOver(e, item)}, nil
		}
		if err != nil {
			return []ResumeItem{refusedItem(item, r, err)}, nil
		}
		r = taken
	}
	action, ref, err := w.Decide(ctx, e, r)
	if err != nil {
		return []ResumeItem{refusedItem(item, r, err)}, nil
	}
	item.Action = action
	if ref != nil {
		item.Outcome, item.Refusal = machine.OutcomeRefused, ref
		return []ResumeItem{item}, nil
	}
	step, ok := w.Continue[action]
	if !ok {
		// A decision without a continuation is a bug in the kind's
		// workflow; it must not make every mutating command fail.
		item.Outcome = machine.OutcomeRefused
		item.Refusal = machine.NoContinuationRefusal(w.Kind, action, r)
		return []ResumeItem{item}, nil
	}
	items, err := step(ctx, e, r)
	if err != nil {
		return []ResumeItem{refusedItem(item, r, err)}, nil
	}
	for i := range items {
		if items[i].Kind == "" {
			items[i].Kind = w.Kind
		}
		if items[i].ID == r.RowID() && items[i].Action == "" {
			items[i].Action = action
		}
	}
	return items, nil
}

// lostTakeOver reports a record whose take-over another process won: it
// reads the record again and says what it is now, already-done when the
// winner settled it, in-progress (naming the holder now) while it acts.
func (w Workflow[R]) lostTakeOver(e *Env, item ResumeItem) ResumeItem {
	now, err := store.Load[R](e.Store, w.Kind, item.ID)
	if err != nil {
		return refusedItem(item, now, err)
	}
	if _, _, ok := now.RowIntent(); !ok {
		item.Outcome = machine.OutcomeAlreadyDone
		return item
	}
	_, holder, _ := now.RowIntent()
	return inProgress(item, now, Liveness(holder, e.Holder))
}

// inProgress reports r, whose intent a live process holds (live is
// HolderHere or HolderElsewhere): another custody's work on this host is
// reported in progress (Progress), with nothing to retry or take over; a
// holder elsewhere is refused, naming how to take its intent over once it
// is surely gone.
func inProgress(item ResumeItem, r machine.Row, live machine.HolderLiveness) ResumeItem {
	item.Outcome = machine.OutcomeInProgress
	if live == machine.HolderHere {
		w := machine.LiveWorkOf(r)
		item.Progress = &w
		return item
	}
	item.Refusal = machine.InProgressRefusal(r, live)
	return item
}

// refusedItem reports err, which stopped the resume of r, as a refusal.
func refusedItem(item ResumeItem, r machine.Row, err error) ResumeItem {
	item.Outcome = machine.OutcomeRefused
	var ref *machine.Refusal
	if errors.As(err, &ref) {
		item.Refusal = ref
	} else {
		item.Refusal = machine.ResumeFailedRefusal(r, err)
	}
	return item
}
