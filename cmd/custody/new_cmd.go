package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
)

// NewCmd creates a managed worktree.
type NewCmd struct {
	Name string `arg:"" help:"A name for the worktree; its id is slug(NAME)-<6 hex>."`
	From string `name:"from" placeholder:"REV" complete:"branches" help:"Start from REV, resolved to a full commit first as git resolves it where custody runs (HEAD inside a linked worktree is that tree's HEAD; default: the main checkout's HEAD)."`
}

// Help is the long help of new.
func (NewCmd) Help() string {
	return `Creates <root>/<id> on a new branch custody/<id> at the resolved commit, after
committing a create intent. Prints the new worktree's path on stdout.

A post-checkout hook that fails after git made the tree does not undo it: the
tree is created and active, and custody prints the hook's exit status and
output on stderr (in the "hook" member with --json).

NAME must hold a letter a-z or a digit: an empty name, or one of only spaces or
punctuation, is refused (empty-name) and nothing is made.

EXIT STATUS: 0 created (also when a post-checkout hook failed), 1 error (nothing
is left half made: resume settles it), 130 (143 SIGTERM, 129 SIGHUP)
interrupted (custody resume finishes or undoes what git began).`
}

// Run creates the worktree.
func (c *NewCmd) Run(a *App) error {
	// A name nothing can be made of is refused before anything is opened.
	if r := machine.CheckWorktreeName(c.Name); r != nil {
		return r
	}
	e, err := a.mutatingEnv()
	if err != nil {
		return err
	}
	res, err := steps.New(a.Ctx, e, c.Name, c.From, a.Dir)
	if err != nil {
		return err
	}
	a.done(res, func(w io.Writer) {
		if res.Interrupted != "" {
			// No tree to print: the interrupt's one line on stderr says
			// what is left (interruptNote).
			return
		}
		if res.Hook != "" {
			fmt.Fprintf(a.Stderr, "custody new: %s is created and active at %s, but %s\n", res.ID, machine.QuoteArg(res.Path), strings.ReplaceAll(res.Hook, "\n", "\n\t"))
		}
		fmt.Fprintln(w, res.Path)
	})
	return nil
}
