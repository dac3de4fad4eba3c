package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
)

// PlanCmd assesses every finished worktree.
type PlanCmd struct {
	Out      string `short:"o" name:"out" placeholder:"FILE" help:"Write the plan (custody.plan/1 JSON) to FILE for custody apply; - prints it on stdout (the summary goes to stderr)."`
	Detailed bool   `name:"detailed-exitcode" help:"Exit 0 when nothing is to be removed, 2 when removals are planned."`
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

EXIT STATUS: 0 done, 1 error, 3 a finished worktree is kept or an interrupted
intent waits for custody resume.
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
	if err != nil {
		return err
	}
	b, err := planBytes(plan)
	if err != nil {
		return err
	}
	summary := a.Stdout
	switch {
	case toStdout:
		if _, err := a.Stdout.Write(b); err != nil {
			return fmt.Errorf("print the plan on stdout: %w", err)
		}
		summary = a.Stderr // stdout holds exactly the plan
	case c.Out != "":
		path := a.path(c.Out)
		if err := steps.WriteFile(path, b, 0o600); err != nil {
			return outputError(err, path, "custody plan -o NEW-FILE")
		}
	}
	remove, _ := plan.Counts()
	a.done(plan, func(io.Writer) { renderPlan(summary, plan, c.Out) })
	if c.Detailed {
		if remove > 0 {
			a.exit(exitPlanned)
		} else {
			a.exit(exitOK)
		}
	}
	return nil
}

func renderPlan(w io.Writer, plan machine.Plan, out string) {
	if len(plan.Items) == 0 {
		fmt.Fprintln(w, "no worktrees to assess")
		return
	}
	rows := [][]string{}
	for _, it := range plan.Items {
		why := ""
		if it.Action == machine.ActionDestroy {
			why = "orphaned resource: its worktree is gone"
		} else if it.Proof != nil {
			why = fmt.Sprintf("%s: %s on %s %s", it.Proof.Kind, short(it.Proof.Head), it.Proof.Remote, it.Proof.Ref)
		} else if it.Refusal != nil {
			why = "[" + string(it.Refusal.Code) + "]"
		}
		rows = append(rows, []string{string(it.Action), it.ID, why})
	}
	table(w, rows)
	for _, it := range plan.Items {
		for _, r := range it.Refusals {
			writeRefusal(w, "kept "+it.ID, &r)
		}
	}
	remove, keep := plan.Counts()
	fmt.Fprintf(w, "%d to remove or destroy, %d kept\n", remove, keep)
	switch {
	case remove == 0:
	case out == stdoutPath:
		fmt.Fprintln(w, "next: save the plan printed on stdout to a file, review it, then: custody apply FILE")
	case out != "":
		fmt.Fprintf(w, "next: custody apply %s\n", machine.QuoteArg(out))
	default:
		fmt.Fprintln(w, "next: custody plan -o plan.json, review it, then: custody apply plan.json")
	}
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
	if errors.Is(err, steps.ErrNotRegularFile) {
		return &machine.Refusal{Code: machine.CodeUnsafeTarget, Path: path, Message: err.Error(), Retry: retry}
	}
	return err
}
