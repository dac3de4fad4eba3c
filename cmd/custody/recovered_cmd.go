package main

import (
	"fmt"
	"io"
	"time"

	"github.com/custody-sh/custody/steps"
)

// RecoverCmd groups the commands over what custody kept from removed
// trees.
type RecoverCmd struct {
	List  RecoveredListCmd  `cmd:"" default:"withargs" help:"List recovery refs and files (the default)."`
	Prune RecoveredPruneCmd `cmd:"" help:"Delete recoveries older than a duration."`
}

// RecoveredListCmd lists recoveries.
type RecoveredListCmd struct{}

// Help is the long help of recovered list.
func (RecoveredListCmd) Help() string {
	return `Lists what custody kept from removed trees so that nothing died with them:
commits only their reflogs held, objects only a pseudoref of the tree's admin
entry named (ORIG_HEAD, FETCH_HEAD, AUTO_MERGE, ...), and the tip of every
branch deleted after a patch-equivalent or squash-merged proof, under
refs/custody/recovered/<id>/<object>; per-worktree config, sparse-checkout
patterns and unused messages under <git-common-dir>/custody/recovered/<id>/.
Restore a commit with: git branch NAME <commit>.

EXIT STATUS: 0 done, 1 error.`
}

// Run lists.
func (c *RecoveredListCmd) Run(a *App) error {
	e, err := a.env(false)
	if err != nil {
		return err
	}
	list, err := steps.ListRecovered(a.Ctx, e)
	if err != nil {
		return err
	}
	a.done(list, func(w io.Writer) { writeRecovered(w, list, "nothing recovered") })
	return nil
}

// RecoveredPruneCmd prunes recoveries.
type RecoveredPruneCmd struct {
	OlderThan time.Duration `name:"older-than" required:"" placeholder:"DURATION" help:"Delete recoveries made longer ago than this (e.g. 720h)."`
}

// Help is the long help of recovered prune.
func (RecoveredPruneCmd) Help() string {
	return `Deletes the recovery refs (by compare-and-swap) and files made longer ago
than --older-than, and journals what it deleted. Nothing else ever deletes them.

EXIT STATUS: 0 done, 1 error.`
}

// Run prunes.
func (c *RecoveredPruneCmd) Run(a *App) error {
	if c.OlderThan <= 0 {
		return &usageError{fmt.Errorf("recovered prune --older-than must be a positive duration, not %s", c.OlderThan)}
	}
	e, err := a.mutatingEnv()
	if err != nil {
		return err
	}
	list, err := steps.PruneRecovered(a.Ctx, e, c.OlderThan)
	if err != nil {
		return err
	}
	a.done(list, func(w io.Writer) { writeRecovered(w, list, "nothing to prune") })
	return nil
}

func writeRecovered(w io.Writer, list []steps.Recovered, none string) {
	if len(list) == 0 {
		fmt.Fprintln(w, none)
		return
	}
	rows := [][]string{}
	for _, r := range list {
		what := r.Ref + " " + r.Commit
		if r.File != "" {
			what = r.File
		}
		rows = append(rows, []string{r.Record, r.At.Format(time.RFC3339), what})
	}
	table(w, rows)
}
