package main

import (
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/steps/archive"
	"github.com/custody-sh/custody/steps/resource"
)

// register gives e the features the steps core does not import (decision
// 0230): each kind's workflow, in the order resume settles them (worktrees
// first: a worktree's own resume re-drives a provisioning tree's
// resources; then the resource ledger; then archives), and the feature
// implementations of the interfaces the core declares.
func register(e *steps.Env) {
	e.Workflows = []steps.Resumer{steps.WorktreeWorkflow(), resource.Workflow(), archive.Workflow()}
	e.Resources = resource.Lifecycle{}
	e.Archives = archive.Removal{}
}

// reportKinds is every kind's part in the auditor's report, in the order
// its groups are shown: the report counts and groups records by asking
// these, never by a switch on kind names (decision 0254). A kind
// registered in register adds its machine.ReportKind here.
func reportKinds() []machine.ReportKind {
	return []machine.ReportKind{machine.WorktreeReport(), machine.ResourceReport(), machine.ArchiveReport()}
}
