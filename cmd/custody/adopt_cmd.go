package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/custody-sh/custody/steps"
)

// AdoptCmd enrolls an existing linked worktree.
type AdoptCmd struct {
	Path string `arg:"" help:"The exact path of a linked worktree of this repository."`
}

// Help is the long help of adopt.
func (AdoptCmd) Help() string {
	return `Puts an existing linked worktree (made with plain git worktree add, or by another
tool) in custody, recorded as adopted under git's admin key. A reviewed plan may
then remove it like any finished tree, but custody never deletes its branch.

EXIT STATUS: 0 adopted, 1 error.`
}

// Run adopts the worktree.
func (c *AdoptCmd) Run(a *App) error {
	e, err := a.mutatingEnv()
	if err != nil {
		return err
	}
	path := c.Path
	if !filepath.IsAbs(path) {
		path = filepath.Join(a.Dir, path)
	}
	res, err := steps.Adopt(a.Ctx, e, path)
	if err != nil {
		return err
	}
	a.done(res, func(w io.Writer) {
		fmt.Fprintf(w, "adopted %s as %s\nnext: custody finish %s when its work is done\n", res.Path, res.ID, res.ID)
	})
	return nil
}
