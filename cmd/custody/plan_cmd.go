package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
)

// PlanCmd assesses every finished worktree.
type PlanCmd struct {
	Out      string `short:"o" name:"out" placeholder:"FILE" help:"Write the plan (custody.plan/1 JSON) to FILE for custody apply."`
	Detailed bool   `name:"detailed-exitcode" help:"Exit 0 when nothing is to be removed, 2 when removals are planned."`
}

// Help is the long help of plan.
func (PlanCmd) Help() string {
	return `Assesses every record: finished (or lease-expired) worktrees are observed fresh
(registration, status including ignored files, lock, ownership) and proven against
what every remote advertises now. Writes nothing but the optional plan file.

EXIT STATUS: 0 done, 1 error, 3 a finished worktree is kept or an interrupted
intent waits for custody resume.
With --detailed-exitcode: 0 nothing to remove, 1 error, 2 removals planned.`
}

// Run makes the plan.
func (c *PlanCmd) Run(a *App) error {
	e, err := a.env(false)
	if err != nil {
		return err
	}
	plan, err := steps.Plan(a.Ctx, e)
	if err != nil {
		return err
	}
	if c.Out != "" {
		if err := writePlan(a.path(c.Out), plan); err != nil {
			return err
		}
	}
	remove, _ := plan.Counts()
	a.done(plan, func(w io.Writer) { renderPlan(w, plan, c.Out) })
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
	case out != "":
		fmt.Fprintf(w, "next: custody apply %s\n", machine.QuoteArg(out))
	default:
		fmt.Fprintln(w, "next: custody plan -o plan.json, review it, then: custody apply plan.json")
	}
}

// writePlan writes the plan atomically (temp file, fsync, rename).
func writePlan(path string, plan machine.Plan) error {
	b, err := json.MarshalIndent(plan, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".custody-plan-*")
	if err != nil {
		return fmt.Errorf("write the plan to %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("write the plan to %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
