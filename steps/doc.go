// Package steps runs custody's workflows: observe → decide (machine) →
// commit intent (store) → act → observe again → verify → complete.
//
// Every destructive or creating act happens only after machine.Worktree.Fire
// returned nil, which means the intent is committed. Every workflow is
// idempotent: running it again after an interruption converges on the same
// outcome (Resume drives leftover intents first).
package steps
