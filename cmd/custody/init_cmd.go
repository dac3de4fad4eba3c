package main

import (
	"fmt"
	"io"
)

// InitCmd prepares a repository for custody.
type InitCmd struct{}

// Help is the long help of init.
func (InitCmd) Help() string {
	return `Creates the state file <git-common-dir>/custody/state.db and the managed root
<main-checkout>/.worktrees/, and adds the root to .git/info/exclude (never to a
tracked file), and records the repository in the index custody list
--all-repos reads ($XDG_STATE_HOME/custody/repositories.json, by default
~/.local/state/custody/; with neither XDG_STATE_HOME nor HOME set it says so
and records nothing). Running it again changes nothing.

EXIT STATUS: 0 done, 1 error.`
}

type initResult struct {
	RepositoryID string `json:"repository_id"`
	State        string `json:"state"`
	Root         string `json:"root"`
	Excluded     bool   `json:"excluded"`
}

// Run initializes the repository.
func (c *InitCmd) Run(a *App) error {
	e, err := a.env(true)
	if err != nil {
		return err
	}
	if err := e.EnsureRoot(); err != nil {
		return err
	}
	id, err := e.Store.RepositoryID()
	if err != nil {
		return err
	}
	added, err := e.ExcludeRoot()
	if err != nil {
		return err
	}
	// Recorded (once) for list --all-repos, which reads every repository
	// custody init ran in.
	a.rememberRepository(e.Repo, true)
	res := initResult{RepositoryID: id, State: e.Store.Path(), Root: e.Root, Excluded: true}
	a.done(res, func(w io.Writer) {
		sayf(w, "custody is ready in %s\n", e.Repo.MainCheckout)
		sayf(w, "  state  %s\n  root   %s", res.State, res.Root)
		if added {
			fmt.Fprint(w, " (added to .git/info/exclude)")
		}
		fmt.Fprintln(w, "\nnext: custody new NAME")
	})
	return nil
}
