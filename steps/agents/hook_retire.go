package agents

import (
	"context"

	"github.com/custody-sh/custody/steps"
)

// RetireRequest names the tree an agent's WorktreeRemove hook retires and
// who asks.
type RetireRequest struct {
	// Dir is the tree, or a directory inside it.
	Dir string
	// Session is the agent's session, whose lease on the tree is released
	// first; one machine.ValidSession refuses releases nothing.
	Session string
	// Hook, Agent and Actor are journaled with the lease's release.
	Hook, Agent, Actor string
	// ExcuseRequesters says the processes that ran this hook (its shell
	// and the agent above it, observe.RequesterChain) asked for the
	// removal: where they stand inside the tree is not a use of it.
	ExcuseRequesters bool
}

// HookRetirement is what RetireHookTree did with the tree
// (steps.Retirement).
type HookRetirement = steps.Retirement

// RetireHookTree retires the tree containing req.Dir for a WorktreeRemove
// hook: it finds the tree's record (steps.CurrentID) and retires it by
// steps.Retire, the one-shot removal custody remove runs too: the
// session's lease released, the record finished, planned alone and
// applied, so the tree is removed only with a proof, and a tree that is
// kept is left in the state it had before the hook. No managed tree at
// req.Dir is a not-in-worktree refusal, returned as the error, naming no
// record.
func RetireHookTree(ctx context.Context, e *steps.Env, req RetireRequest) (HookRetirement, error) {
	id, err := steps.CurrentID(e, req.Dir)
	if err != nil {
		return HookRetirement{}, err
	}
	return steps.Retire(ctx, e, id, steps.RetireOptions{Session: req.Session, Hook: req.Hook, Agent: req.Agent,
		Actor: req.Actor, ExcuseRequesters: req.ExcuseRequesters})
}
