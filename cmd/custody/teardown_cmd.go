package main

import (
	"io"

	"github.com/custody-sh/custody/steps/resource"
)

// TeardownCmd destroys the resources of the managed worktree it runs in.
type TeardownCmd struct{}

// Help is the long help of teardown.
func (TeardownCmd) Help() string {
	return `Destroys the resources of the managed worktree holding the current directory
(or -C DIR), found from the directory alone: it takes no id and reads no stdin,
so a tool that runs a bare command in the tree (the Codex app's [cleanup]
script) can call it. Each resource is destroyed under its own destroy intent,
in reverse creation order; a destroy that fails stays in the ledger for
custody resource gc. The tree and its record are left as they are.

EXIT STATUS: 0 done (also when the tree has no resources), 1 error (outside every
managed worktree: nothing done), 3 a destroy failed.`
}

// Run tears down.
func (c *TeardownCmd) Run(a *App) error {
	e, err := a.mutatingEnv()
	if err != nil {
		return err
	}
	res, err := resource.Teardown(a.Ctx, e, a.Dir)
	if err != nil {
		return err
	}
	a.done(res, func(w io.Writer) {
		if len(res.Resources) == 0 {
			sayf(w, "%s has no resources to destroy\n", res.ID)
			return
		}
		for _, o := range res.Resources {
			sayf(w, "%s %s (exit %d)\n", o.Outcome, o.Handle, o.ExitCode)
			if o.Refusal != nil {
				writeRefusal(w, string(o.Outcome)+" "+o.ID, o.Refusal)
			}
		}
	})
	return nil
}
