package main

import (
	"github.com/custody-sh/custody/machine"
)

// reportKinds is every kind's part in the auditor's report, in the order
// its groups are shown: the report counts and groups records by asking
// these, never by a switch on kind names (decision 0254). A kind
// registered in custody.Register (steps/custody) adds its
// machine.ReportKind here.
func reportKinds() []machine.ReportKind {
	return []machine.ReportKind{machine.WorktreeReport(), machine.ResourceReport(), machine.ArchiveReport()}
}
