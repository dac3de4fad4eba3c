package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
)

// ApplyCmd carries out a reviewed plan.
type ApplyCmd struct {
	Plan string   `arg:"" name:"planfile" help:"A plan file written by custody plan -o."`
	Only []string `sep:"none" name:"only" placeholder:"ID" complete:"trees" help:"Apply only these items of the plan (an id, a unique id prefix, the tree's directory name or its path)."`
	// AllowExternalRetirement confirms removing adopted trees outside the
	// managed root.
	AllowExternalRetirement bool `name:"allow-external-retirement" help:"Also remove adopted trees outside the managed root (refused without it)."`
}

// Help is the long help of apply.
func (ApplyCmd) Help() string {
	return `Runs only the plan's remove, settle and destroy actions, item by item:
re-observe, require the observation plan reviewed (else the item is stale and
the next goes on), commit a removal intent, observe again, move the tree into
a quarantine beside it, delete there only what HEAD's manifest names (anything
else moves it back), verify the path is gone and unregistered, delete the owned
branch by compare-and-swap. A tree that vanished is settled in the journal.
A plan for another repository is refused whole. An adopted tree outside the
managed root is removed only with --allow-external-retirement. Applying again
reports already-done. Orphaned resources the plan lists are destroyed with
their frozen commands after the same re-check orphan GC makes.

Prints each tree removed, each branch deleted with the commit it pointed at
("deleted branch custody/x-1a2b3c (was 4f2e1d0)": git branch custody/x-1a2b3c
4f2e1d0 makes it again) and each recovery ref written
(refs/custody/recovered/...), then one line of counts.

EXIT STATUS: 0 all done, 1 error (nothing done), 3 something was stale, refused or
failed, 130 (143 SIGTERM, 129 SIGHUP) interrupted: one line on stderr says what
was done, what custody resume settles and what applying again does.`
}

// Run applies the plan.
func (c *ApplyCmd) Run(a *App) error {
	b, err := readPlanFile(a.path(c.Plan))
	if err != nil {
		return err
	}
	plan, err := machine.ParsePlan(b)
	if err != nil {
		return fmt.Errorf("%s: %w", c.Plan, err)
	}
	// Resolved before anything is changed: an ambiguous name does nothing.
	only, err := steps.ResolvePlanItems(plan, a.Dir, c.Only, "custody list")
	if err != nil {
		return err
	}
	e, err := a.mutatingEnv()
	if err != nil {
		return err
	}
	res, err := steps.ApplyWith(a.Ctx, e, plan, steps.ApplyOptions{Only: only, AllowExternalRetirement: c.AllowExternalRetirement, PlanFile: c.Plan})
	endProgress(e.Progress)
	if err != nil {
		return err
	}
	view := a.pathView(e.Repo.MainCheckout, e.Root)
	a.done(res, func(w io.Writer) { renderApply(w, res, plan, view, a.palette()) })
	return nil
}

func readPlanFile(path string) ([]byte, error) {
	// Never blocks: a FIFO with no writer, a device or a directory is
	// refused before anything is read (planfile.go).
	f, err := os.OpenFile(path, planOpenFlags, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: cannot read %s: %v", machine.ErrPlanInvalid, path, errors.Unwrap(err))
	}
	defer f.Close()
	if err := mustBeRegular(f); err != nil {
		return nil, fmt.Errorf("%w: cannot read %s: %v", machine.ErrPlanInvalid, path, errors.Unwrap(err))
	}
	b, err := io.ReadAll(io.LimitReader(f, machine.MaxPlanBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w: cannot read %s: %v", machine.ErrPlanInvalid, path, err)
	}
	return b, nil
}
