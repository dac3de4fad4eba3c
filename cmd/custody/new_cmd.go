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
	Name     string `arg:"" help:"A name for the worktree; its id is slug(NAME)-<6 hex>."`
	From     string `name:"from" placeholder:"REV" xor:"from" complete:"branches" help:"Start from REV, resolved to a full commit first as git resolves it where custody runs (HEAD inside a linked worktree is that tree's HEAD; default: the main checkout's HEAD)."`
	Branch   string `name:"branch" placeholder:"BRANCH" xor:"branch" help:"Create the tree on a new branch named BRANCH instead of custody/<id>; it must not exist yet. custody created it, so a proven removal deletes it."`
	Checkout string `name:"checkout" placeholder:"BRANCH" xor:"branch,from" complete:"branches" help:"Make the tree on the existing local branch BRANCH, at its tip; no other worktree may have it checked out. custody did not create it and never deletes it."`
}

// Help is the long help of new.
func (NewCmd) Help() string {
	return `Creates <root>/<id> on a new branch custody/<id> at the resolved commit, after
committing a create intent. Prints the new worktree's path on stdout.

--branch BRANCH names the new branch instead; it is refused when BRANCH exists
(branch-exists) or is no valid branch name (branch-invalid, as git
check-ref-format --branch says). --checkout BRANCH makes the tree on an existing
local branch at its tip; it is refused when there is no such branch
(branch-missing) or another worktree has it checked out (branch-checked-out).
Nothing is made when one is refused.

The branch custody created (custody/<id>, or --branch) is deleted after a
proven removal, by compare-and-swap on the commit the removal proved; a branch
it did not create (--checkout) is never deleted, and plan says so.

A NAME that a live tree already goes by (its id is slug(NAME)-<6 hex>) still
makes a tree with an id of its own; custody warns on stderr, naming each such
tree by id and path (the "warning" member with --json).

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
	req := steps.NewRequest{Name: c.Name, From: c.From, Dir: a.Dir, Branch: c.Branch, Checkout: c.Checkout}
	// A name or branch nothing can be made of is refused before anything
	// is opened.
	if err := steps.CheckNewRequest(req); err != nil {
		return err
	}
	e, err := a.mutatingEnv()
	if err != nil {
		return err
	}
	res, err := steps.NewFor(a.Ctx, e, req)
	if err != nil {
		return err
	}
	a.done(res, func(w io.Writer) {
		if res.Warning != nil {
			fmt.Fprintf(a.Stderr, "custody new: warning: %s\n", machine.EscapeControl(res.Warning.Message))
		}
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
