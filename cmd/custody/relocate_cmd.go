package main

import (
	"fmt"
	"io"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
)

// RelocateCmd moves a worktree under a relocation intent.
type RelocateCmd struct {
	ID string `arg:"" name:"id" complete:"trees" help:"The worktree: an id, a unique id prefix, the tree's directory name or its path."`
	To string `name:"to" placeholder:"DIR" help:"Where to move it (a path where nothing is yet; default: <managed root>/<id>)."`
}

// Help is the long help of relocate.
func (RelocateCmd) Help() string {
	return `Moves an active worktree to DIR (by default into the managed root, as
<root>/<id>) with git worktree move, never forced. The tree must be clean,
unlocked, unleased, used by no process, hold no submodules and have no
resources (their commands were frozen with its path); DIR must not exist,
must not lie under a symlink and must not be inside another worktree (the
managed root is the one place inside the main checkout a tree may go).
A relocation intent naming the source, the destination and HEAD is
committed first; the record takes the new path only once git registers
exactly DIR under the same admin key, nothing is left at the source, and
DIR holds the same tree (HEAD unchanged, or the very directory that was
moved). A run killed in between is settled by custody resume: only DIR
registered completes, only the source steps back, both is
ambiguous-relocation; a tree moved by hand meanwhile is refused with the
git command that puts it where resume can settle it. A record already at
DIR is already-done.

EXIT STATUS: 0 relocated (or already there), 1 error, 3 refused.`
}

// Run relocates.
func (c *RelocateCmd) Run(a *App) error {
	e, err := a.mutatingEnv()
	if err != nil {
		return err
	}
	ids, err := steps.ResolveRecords(e, a.Dir, []string{c.ID}, "custody list")
	if err != nil {
		return err
	}
	res, err := steps.Relocate(a.Ctx, e, ids[0], a.path(c.To))
	if err != nil {
		return err
	}
	a.done(res, func(w io.Writer) {
		switch res.Outcome {
		case machine.OutcomeRelocated:
			fmt.Fprintf(w, "%s relocated: %s -> %s\n", res.ID, machine.EscapeControl(res.From), machine.EscapeControl(res.To))
		case machine.OutcomeAlreadyDone:
			fmt.Fprintf(w, "%s already-done: it is at %s\n", res.ID, machine.EscapeControl(res.To))
		default:
			sayf(w, "%s %s\n", res.ID, res.Outcome)
		}
		if res.Refusal != nil {
			writeRefusal(w, res.ID, res.Refusal)
		}
	})
	return nil
}
