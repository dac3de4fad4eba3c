package resource

import (
	"context"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
)

// Lifecycle is the resource feature as the worktree lifecycle asks for it
// (steps.Resources): custody.Register (steps/custody) registers it in
// steps.Env.Resources.
type Lifecycle struct{}

var _ steps.Resources = Lifecycle{}

// Provision creates rec's declared resources (provisionResources).
func (Lifecycle) Provision(ctx context.Context, e *steps.Env, rec machine.Record) ([]steps.ResourceOutcome, *machine.Refusal, error) {
	return provisionResources(ctx, e, rec)
}

// Teardown destroys worktree id's live resources (teardownResources).
func (Lifecycle) Teardown(ctx context.Context, e *steps.Env, id string) ([]steps.ResourceOutcome, error) {
	return teardownResources(ctx, e, id)
}

// PlanItems lists the orphaned ledger entries as plan items
// (resourceItems).
func (Lifecycle) PlanItems(ctx context.Context, e *steps.Env) ([]machine.PlanItem, error) {
	return resourceItems(ctx, e)
}

// Reclaim destroys one orphaned entry a plan reviewed (reclaim).
func (Lifecycle) Reclaim(ctx context.Context, e *steps.Env, id, fingerprint string) (machine.Outcome, *machine.Refusal, error) {
	return reclaim(ctx, e, id, fingerprint)
}

// Orphans returns every live ledger entry with its GC verdict (orphans).
func (Lifecycle) Orphans(ctx context.Context, e *steps.Env) ([]machine.Resource, []machine.GCVerdict, error) {
	return orphans(ctx, e)
}

// Workflow is the resource kind's part in the runner, for
// steps.Env.Workflows.
func Workflow() steps.Resumer { return resourceWorkflow().Resumer() }
