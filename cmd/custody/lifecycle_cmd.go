package main

import (
	"fmt"
	"io"

	"github.com/custody-sh/custody/steps"
)

// FinishCmd marks worktrees finished.
type FinishCmd struct {
	IDs []string `arg:"" optional:"" name:"id" help:"Worktrees: an id, a unique id prefix, the tree's directory name or its path (default: the managed worktree containing the current directory)."`
}

// Help is the long help of finish.
func (FinishCmd) Help() string {
	return `Records each worktree's final HEAD and marks it finished, so custody plan
assesses it. A live lease refuses. Each tree is named by its id, a unique id
prefix, its directory name or its path; a name that fits several trees is
refused with the candidates and nothing is done.

EXIT STATUS: 0 done, 1 error (an unknown or ambiguous tree: nothing done), 3 some were refused.`
}

// Run finishes.
func (c *FinishCmd) Run(a *App) error {
	e, err := a.mutatingEnv()
	if err != nil {
		return err
	}
	ids := c.IDs
	if len(ids) == 0 {
		id, err := steps.CurrentID(e, a.Dir)
		if err != nil {
			return err
		}
		ids = []string{id}
	} else if ids, err = steps.ResolveRecords(e, a.Dir, ids, "custody list"); err != nil {
		return err
	}
	out, err := steps.Finish(a.Ctx, e, ids)
	if err != nil {
		return err
	}
	a.outcomes(out, "custody plan")
	return nil
}

// ReopenCmd takes a finished worktree back to active.
type ReopenCmd struct {
	IDs []string `arg:"" name:"id" help:"Worktrees: an id, a unique id prefix, the tree's directory name or its path."`
}

// Help is the long help of reopen.
func (ReopenCmd) Help() string {
	return `Takes finished worktrees back to active; plan no longer assesses them.
Each tree is named by its id, a unique id prefix, its directory name or its
path; a name that fits several trees is refused with the candidates.

EXIT STATUS: 0 done, 1 error (an unknown or ambiguous tree: nothing done), 3 some were refused.`
}

// Run reopens.
func (c *ReopenCmd) Run(a *App) error {
	e, err := a.mutatingEnv()
	if err != nil {
		return err
	}
	ids, err := steps.ResolveRecords(e, a.Dir, c.IDs, "custody list")
	if err != nil {
		return err
	}
	out, err := steps.Reopen(a.Ctx, e, ids)
	if err != nil {
		return err
	}
	a.outcomes(out, "")
	return nil
}

// outcomes reports per-record outcomes; any refusal makes the exit 3.
func (a *App) outcomes(out []steps.Outcome, next string) {
	res := steps.Outcomes{Items: out}
	a.done(res, func(w io.Writer) {
		rows := [][]string{}
		for _, o := range out {
			rows = append(rows, []string{o.ID, string(o.Outcome)})
		}
		table(w, rows)
		for _, o := range out {
			if o.Refusal != nil {
				writeRefusal(w, o.ID, o.Refusal)
			}
		}
		if next != "" && !res.Pending() {
			fmt.Fprintf(w, "next: %s\n", next)
		}
	})
}
