package resource

import (
	"context"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
)

// TeardownResult is what `custody teardown` did with one tree's resources.
type TeardownResult struct {
	ID        string                  `json:"id"`
	Path      string                  `json:"path"`
	Resources []steps.ResourceOutcome `json:"resources"`
}

// Pending reports whether a destroy failed or was refused: the ledger
// keeps what is left for custody resource gc.
func (r TeardownResult) Pending() bool { return resourcesPending(r.Resources) }

// Teardown destroys every live resource of the managed worktree that holds
// dir (the tree is found from the directory alone: no id, no stdin), in
// reverse creation order, each under its own destroy intent committed
// before its frozen destroy command runs. The tree itself and its record
// are left as they are. A tree with no live resources is done with
// nothing to do; dir outside every managed worktree is CodeNotInWorktree.
// It is idempotent: run again, it finds nothing left to destroy. A
// destroy that failed is refused with a retry of teardown for this tree
// (the ledger keeps the entry; orphan GC takes it once the tree is gone).
func Teardown(ctx context.Context, e *steps.Env, dir string) (TeardownResult, error) {
	id, err := steps.CurrentID(e, dir)
	if err != nil {
		return TeardownResult{}, err
	}
	rec, err := e.Store.Get(id)
	if err != nil {
		return TeardownResult{}, err
	}
	outs, err := teardownResources(ctx, e, id)
	if outs == nil {
		outs = []steps.ResourceOutcome{}
	}
	// While the tree exists, orphan GC would call its resources live: the
	// retry is teardown of this very tree, from wherever it is pasted.
	for i, o := range outs {
		if o.Refusal != nil && o.Refusal.Code == machine.CodeResourceFailed {
			r := *o.Refusal
			r.Retry = machine.TeardownRetry(rec.Path)
			outs[i].Refusal = &r
		}
	}
	return TeardownResult{ID: id, Path: rec.Path, Resources: outs}, err
}
