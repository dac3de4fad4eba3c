package main

import (
	"io"

	"github.com/custody-sh/custody/cmd/custody/internal/output"
	"github.com/custody-sh/custody/machine"
)

// ListCmd lists worktree records.
type ListCmd struct {
	All bool `name:"all" help:"Include tombstoned records."`
}

// Help is the long help of list.
func (ListCmd) Help() string {
	return `Lists worktree records with their state; tombstoned ones only with --all.

EXIT STATUS: 0 done, 1 error.`
}

// listEntry is one record in list's result.
type listEntry = output.ListEntry

// Run lists records.
func (c *ListCmd) Run(a *App) error {
	e, err := a.env(false)
	if err != nil {
		return err
	}
	list := e.Store.ListLive // tombstoned records are not read unless asked for
	if c.All {
		list = e.Store.List
	}
	recs, err := list()
	if err != nil {
		return err
	}
	out := []listEntry{}
	for _, r := range recs {
		if r.State == machine.StateTombstoned && !c.All {
			continue
		}
		out = append(out, listEntry{ID: r.ID, Kind: r.Kind, State: r.State, Path: r.Path, Branch: r.Branch, Intent: r.Intent})
	}
	a.done(map[string]any{"records": out}, func(w io.Writer) {
		if len(out) == 0 {
			io.WriteString(w, "no worktrees; make one with: custody new NAME\n")
			return
		}
		rows := [][]string{{"ID", "STATE", "INTENT", "PATH"}}
		for _, r := range out {
			in := "-"
			if r.Intent != nil {
				in = string(r.Intent.Kind)
			}
			rows = append(rows, []string{r.ID, string(r.State), in, r.Path})
		}
		table(w, rows)
	})
	return nil
}
