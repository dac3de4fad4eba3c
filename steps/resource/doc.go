// Package resource keeps the external resources bound to a worktree: each
// declared resource is a ledger entry with its frozen create and destroy
// commands, provisioned with the tree, ensured, torn down before the tree
// is removed, and reclaimed by orphan GC once its tree is gone. It is a
// feature of package steps: it imports the steps core, never another
// feature; custody.Register (steps/custody) registers it (Lifecycle in steps.Env.Resources,
// Workflow in steps.Env.Workflows).
package resource
