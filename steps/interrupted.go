package steps

import (
	"context"
	"fmt"

	"github.com/custody-sh/custody/machine"
)

// InterruptedIntent is a record whose intent its holder left behind: the
// process that committed it is gone, and custody resume (or any command
// that writes, which resumes first) settles it.
type InterruptedIntent struct {
	ID     string       `json:"id"`
	Kind   machine.Kind `json:"kind"`
	Intent string       `json:"intent"`
}

// Interrupted lists, kind by kind, the records that carry an intent whose
// holder is gone. It only reads the store: it is what a command that only
// reads says instead of resuming. An intent a live process holds is that
// process's, and is not listed.
func Interrupted(ctx context.Context, e *Env) ([]InterruptedIntent, error) {
	var out []InterruptedIntent
	for _, w := range e.workflows() {
		got, err := w.interrupted(ctx, e)
		if err != nil {
			return out, fmt.Errorf("%s records: %w", w.kind(), err)
		}
		out = append(out, got...)
	}
	return out, nil
}

// interrupted lists the kind's records whose intent's holder is gone.
func (w Workflow[R]) interrupted(ctx context.Context, e *Env) ([]InterruptedIntent, error) {
	rs, err := w.pending(ctx, e)
	if err != nil {
		return nil, err
	}
	var out []InterruptedIntent
	for _, r := range rs {
		kind, holder, ok := r.RowIntent()
		if !ok || r.RowState() == machine.StateTombstoned || HolderAlive(holder, e.Holder) {
			continue
		}
		out = append(out, InterruptedIntent{ID: r.RowID(), Kind: w.Kind, Intent: string(kind)})
	}
	return out, nil
}

// LiveIntent is a record whose intent another live custody on this host
// is carrying out at this moment: its work in progress, not a problem.
type LiveIntent struct {
	ID       string           `json:"id"`
	Kind     machine.Kind     `json:"kind"`
	Progress machine.LiveWork `json:"progress"`
}

// LiveIntents lists, kind by kind, the records whose intent's holder is
// another live process on this host (machine.HolderHere). It only reads
// the store: doctor reports them in progress instead of as unfinished.
func LiveIntents(ctx context.Context, e *Env) ([]LiveIntent, error) {
	var out []LiveIntent
	for _, w := range e.workflows() {
		got, err := w.live(ctx, e)
		if err != nil {
			return out, fmt.Errorf("%s records: %w", w.kind(), err)
		}
		out = append(out, got...)
	}
	return out, nil
}

// live lists the kind's records whose intent another live process on this
// host holds.
func (w Workflow[R]) live(ctx context.Context, e *Env) ([]LiveIntent, error) {
	rs, err := w.pending(ctx, e)
	if err != nil {
		return nil, err
	}
	var out []LiveIntent
	for _, r := range rs {
		_, holder, ok := r.RowIntent()
		if !ok || r.RowState() == machine.StateTombstoned || Liveness(holder, e.Holder) != machine.HolderHere {
			continue
		}
		out = append(out, LiveIntent{ID: r.RowID(), Kind: w.Kind, Progress: machine.LiveWorkOf(r)})
	}
	return out, nil
}
