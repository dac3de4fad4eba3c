package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/custody-sh/custody/machine"
	json "github.com/custody-sh/custody/machine/bytejson"
	"github.com/custody-sh/custody/observe/writable"
	"github.com/custody-sh/custody/steps"
)

// PlanCmd assesses every finished worktree.
type PlanCmd struct {
	Out      string `short:"o" name:"out" placeholder:"FILE" help:"Write the plan (custody.plan/1 JSON) to FILE for custody apply; - prints it on stdout (the summary goes to stderr)."`
	Detailed bool   `name:"detailed-exitcode" help:"Exit 0 when nothing is to be removed, 2 when removals are planned."`
	Verbose  bool   `short:"v" name:"verbose" help:"List every item and every reason it is kept, instead of the kept trees grouped by reason."`
}

// Help is the long help of plan.
func (PlanCmd) Help() string {
	return `Assesses every record: finished (or lease-expired) worktrees are observed fresh
(registration, status including ignored files, lock, ownership) and proven against
what every remote advertises now. Writes nothing but the optional plan file.

-o FILE replaces FILE atomically and durably (a regular file or nothing is
there; a symlink, directory, FIFO or device is refused and left alone).
-o - prints the plan on stdout, exactly the bytes a file would hold, and the
summary on stderr; it cannot go with --json, whose envelope owns stdout.

The summary is one line (how many trees go, how many are kept and why, how
many are active or not custody's), then the removals, then the kept trees
grouped by reason, each group with its retry (or each tree's own retry on
the line under it), within 80 columns; --verbose lists every item and every
reason, one line each.
Paths are relative to the current directory (the one custody was started
in, also with -C), and so are the paths in the commands it prints to
paste; with -C DIR those commands carry -C DIR. On a terminal a plan longer
than the screen is shown through $CUSTODY_PAGER, else $PAGER, else less
(LESS=FRX when LESS is unset); an empty value or cat shows it directly.

EXIT STATUS: 0 a plan was made (whatever it keeps: a kept tree is the plan's
result, not a failure, so custody plan -o p.json && custody apply p.json
chains), 1 error, 130 (143 SIGTERM, 129 SIGHUP) interrupted (no plan is written).
With --detailed-exitcode: 0 nothing to remove, 1 error, 2 removals planned.`
}

// Run makes the plan.
func (c *PlanCmd) Run(a *App) error {
	toStdout := c.Out == stdoutPath
	if toStdout && a.Globals.JSON {
		return &usageError{errors.New("plan -o - prints the plan itself on stdout, where --json prints its one envelope: use -o FILE with --json, or -o - without --json")}
	}
	e, err := a.env(false)
	if err != nil {
		return err
	}
	plan, err := steps.Plan(a.Ctx, e)
	endProgress(e.Progress)
	if err != nil {
		return err
	}
	b, err := planBytes(plan)
	if err != nil {
		return err
	}
	outPath := ""
	switch {
	case toStdout:
		if _, err := a.Stdout.Write(b); err != nil {
			return fmt.Errorf("print the plan on stdout: %w", err)
		}
	case c.Out != "":
		outPath = a.path(c.Out)
		if err := steps.WriteFile(outPath, b, 0o600); err != nil {
			return outputError(err, outPath, "custody plan -o NEW-FILE")
		}
	}
	remove, _ := plan.Counts()
	view := a.pathView(e.Repo.MainCheckout, e.Root)
	next := planNext(c.Out, resolvedPath(outPath), view)
	if toStdout {
		// stdout holds exactly the plan; the summary goes to stderr, in
		// full, never paged.
		a.done(plan, func(io.Writer) { renderPlan(a.Stderr, plan, next, view, palette{}, c.Verbose) })
	} else {
		a.donePaged(plan, func(w io.Writer) { renderPlan(w, plan, next, view, a.palette(), c.Verbose) })
	}
	// A plan is plan's result whatever it keeps (docs/decisions
	// 0040-plan-exits-zero.md): only --detailed-exitcode says more.
	code := exitOK
	if c.Detailed && remove > 0 {
		code = exitPlanned
	}
	a.exit(code)
	return nil
}

// stdoutPath is the -o value that means standard output.
const stdoutPath = "-"

// planBytes is the plan file's content: indented custody.plan/1 JSON and a
// final newline, the same on stdout and in a file.
func planBytes(plan machine.Plan) ([]byte, error) {
	b, err := json.MarshalIndent(plan, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode the plan: %w", err)
	}
	return append(b, '\n'), nil
}

// outputError turns an -o target that is not a regular file
// (steps.ErrNotRegularFile) into an unsafe-target refusal naming path, with
// retry as the command to run instead; other errors pass through. plan and
// journal export share it.
func outputError(err error, path, retry string) error {
	if w, ok := writable.Classify(err); ok {
		at := *w
		at.Path = path // the file asked for, not the temporary file beside it
		w = &at
		code := machine.CodeReadOnlyFileSystem
		if !w.ReadOnly {
			code = machine.CodeNotWritable
		}
		return &machine.Refusal{Code: code, Path: path, Retry: retry,
			Message: fmt.Sprintf("%v, so nothing was written there; write it where it can be written", w)}
	}
	if errors.Is(err, steps.ErrNotRegularFile) {
		return &machine.Refusal{Code: machine.CodeUnsafeTarget, Path: path, Message: err.Error(), Retry: retry}
	}
	return err
}
