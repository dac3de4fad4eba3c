package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
)

// AdoptCmd enrolls an existing linked worktree.
type AdoptCmd struct {
	Path     string `arg:"" optional:"" help:"The exact path of a linked worktree of this repository (default: the linked worktree holding the current directory)."`
	IfNeeded bool   `name:"if-needed" help:"Succeed, changing nothing, when the tree is in custody already (adopted, or made by custody new)."`
}

// Help is the long help of adopt.
func (AdoptCmd) Help() string {
	return `Puts an existing linked worktree (made with plain git worktree add, or by another
tool) in custody, recorded as adopted under git's admin key. A reviewed plan may
then remove it like any finished tree, but custody never deletes its branch.
Without a path, it adopts the linked worktree holding the current directory.

With --if-needed it can run again and again (as the Codex app's setup script
does): a tree already in custody is reported already-done and nothing changes.
Everything else adopt refuses stays refused.

EXIT STATUS: 0 adopted (or, with --if-needed, already in custody), 1 error.`
}

// Run adopts the worktree.
func (c *AdoptCmd) Run(a *App) error {
	e, err := a.mutatingEnv()
	if err != nil {
		return err
	}
	path := c.Path
	switch {
	case path == "":
		if path, err = steps.TreeAt(a.Ctx, e, a.Dir); err != nil {
			return err
		}
	case !filepath.IsAbs(path):
		path = filepath.Join(a.Dir, path)
	}
	res, err := steps.Adopt(a.Ctx, e, path, c.IfNeeded)
	if err != nil {
		return err
	}
	a.done(res, func(w io.Writer) {
		if res.Outcome == steps.AdoptAlreadyDone {
			sayf(w, "already-done: %s is in custody as %s\n", res.Path, res.ID)
			return
		}
		sayf(w, "adopted %s as %s\n", res.Path, res.ID)
		fmt.Fprintf(w, "next: %s when its work is done\n", machine.CommandOn([]string{"custody", "finish"}, res.ID))
	})
	return nil
}
