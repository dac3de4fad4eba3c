package main

// exitCodeDoc is one exit code and what it means, for docs/exit-codes.md,
// the skill and the man page. exitCodeDocs is the one place these facts
// are written; the constants in output.go are the codes themselves.
type exitCodeDoc struct {
	Code    int
	Meaning string
}

// exitCodeDocs lists every exit code custody uses, in order.
func exitCodeDocs() []exitCodeDoc {
	return []exitCodeDoc{
		{exitOK, "done. For `plan`: a plan was made, whatever it keeps"},
		{exitError, "error, including usage and bad input, an unknown tree reference (`unknown-record`) and one that names several trees (`ambiguous-reference`); nothing was changed. With `--json`, one error envelope on stderr and nothing on stdout"},
		{exitPlanned, "only `plan --detailed-exitcode`: removals are planned"},
		{exitPending, "done, but something was refused or is pending (a stale or refused item in apply, a refusal in finish/reopen/resume, problems in doctor, a `journal report` written of a journal that does not verify)"},
		{exitHangup, "interrupted by SIGHUP (the terminal closed); as 130"},
		{exitInterrupt, "interrupted by SIGINT (Ctrl-C): stdout holds what the command did before it stopped (its result, or its envelope with `--json`, when it returned one), and stderr one line: what it finished, what it left midway (`custody resume` settles it) and what it did not start. A hook keeps its own exit codes"},
		{exitTerminated, "interrupted by SIGTERM; as 130"},
	}
}

// exitCodeNotes are the paragraphs that follow the exit code table.
func exitCodeNotes() []string {
	return []string{
		"Decided in one place (`exitCode` in `cmd/custody/output.go`) from the result's `Pending()`, which folds `machine.ItemPending` over its items; `plan` sets its own (below).",
		"`plan` exits 0 whenever it produced a plan: a kept tree is the plan's result, not a failure, so `custody plan -o p.json && custody apply p.json` chains (docs/decisions/0040-plan-exits-zero.md). With `plan --detailed-exitcode`, 0 means nothing is to be removed and 2 that removals are planned; kept trees change neither.",
		"An interrupt (SIGINT, SIGTERM, SIGHUP) decides the exit code whatever the command did: 128 plus the signal's number, as a shell reports a process the signal ended. The command stops starting work, lets what runs end within seconds, and leaves every intent it committed to `custody resume` (docs/decisions/0245-output-that-fits-a-terminal.md).",
		"Commands that name trees (`finish`, `reopen`, `show`, `resume --take-over`, `apply --only`, `resource identity --id`, `resource ensure`) take an exact id, a unique id prefix, the tree's directory name or its path. A reference that fits no tree, or several, is exit 1 before anything is done; the error lists the candidates of an ambiguous one.",
	}
}
