package main

import (
	"fmt"
	"io"

	"github.com/custody-sh/custody/steps"
)

// FinishCmd marks worktrees finished.
type FinishCmd struct {
	IDs []string `sep:"none" arg:"" optional:"" name:"id" complete:"trees" help:"Worktrees: an id, a unique id prefix, the tree's directory name or its path (default: the managed worktree containing the current directory)."`
	// Archive also captures each finished tree (archive_cmd.go).
	Archive bool `name:"archive" help:"Also archive each finished tree's unpublished work (custody archive create)."`
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
	if c.Archive {
		return a.archiveFinished(e, out)
	}
	a.outcomes(out, "custody plan")
	return nil
}

// ReopenCmd takes a finished worktree back to active.
type ReopenCmd struct {
	IDs []string `sep:"none" arg:"" name:"id" complete:"trees" help:"Worktrees: an id, a unique id prefix, the tree's directory name or its path."`
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

// AbandonCmd ends the record of a tree whose work is lost.
type AbandonCmd struct {
	ID     string `arg:"" name:"id" complete:"trees" help:"The worktree: an id, a unique id prefix, the tree's directory name or its path."`
	Commit string `name:"acknowledge-unrecoverable" required:"" placeholder:"COMMIT" help:"The record's last commit, acknowledged as lost: its full id, or a prefix of at least 7 hex digits that names nothing else git holds (as custody prints it)."`
}

// Help is the long help of abandon.
func (AbandonCmd) Help() string {
	return `Tombstones the record of a tree that is gone and whose last commit nothing
holds any more, on your word: --acknowledge-unrecoverable must name that
commit (whole, or by a prefix of at least 7 hex digits, as custody prints it,
that names no other object git holds; the output names it whole), and git
must confirm that no ref here contains it and that no remote (every one must
answer) advertises a ref that does. Nothing is deleted; the journal records
the abandonment as the one outcome without a proof. A tree still on disk, or
a commit something holds, is refused.

EXIT STATUS: 0 abandoned (or already tombstoned), 1 error, 3 refused.`
}

// Run abandons.
func (c *AbandonCmd) Run(a *App) error {
	e, err := a.mutatingEnv()
	if err != nil {
		return err
	}
	ids, err := steps.ResolveRecords(e, a.Dir, []string{c.ID}, "custody list --all")
	if err != nil {
		return err
	}
	o, err := steps.Abandon(a.Ctx, e, ids[0], c.Commit)
	if err != nil {
		return err
	}
	a.outcomes([]steps.Outcome{o}, "")
	if human := a.human; o.Commit != "" {
		// The commit whole, however it was named: what was acknowledged.
		a.human = func(w io.Writer) {
			human(w)
			fmt.Fprintf(w, "acknowledged lost: %s\n", o.Commit)
		}
	}
	return nil
}
