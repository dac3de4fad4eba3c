package main

import (
	"io"

	"github.com/custody-sh/custody/cmd/custody/internal/output"
	"github.com/custody-sh/custody/steps"
)

// PathCmd prints one tree's path.
type PathCmd struct {
	ID string `arg:"" name:"id" complete:"trees" help:"The worktree: an id, a unique id prefix, the tree's directory name or its path."`
}

// Help is the long help of path.
func (PathCmd) Help() string {
	return `Prints the tree's path: exactly the bytes custody recorded, then a newline,
and nothing else, so cd "$(custody path ID)" works for a path holding spaces
or quotes. With --json the result is {"id", "path"}. The tree is named by its
id, a unique id prefix, its directory name or its path (a tombstoned record
only when no live one fits). To change the shell's directory in one step, see
custody switch.

EXIT STATUS: 0 printed, 1 error (an unknown or ambiguous tree).`
}

// treePathResult is path's and switch's result.
type treePathResult = output.TreePathResult

// Run prints the path.
func (c *PathCmd) Run(a *App) error {
	e, err := a.env(false)
	if err != nil {
		return err
	}
	rec, err := steps.Tree(e, a.Dir, c.ID, "custody list --all")
	if err != nil {
		return err
	}
	a.done(treePathResult{ID: rec.ID, Path: rec.Path}, func(w io.Writer) { printPath(w, rec.Path) })
	return nil
}

// printPath writes path's bytes as they are and a newline: no escaping,
// so a shell reading the line (the trailing newline removed) has the path.
func printPath(w io.Writer, path string) {
	_, _ = io.WriteString(w, path+"\n")
}
