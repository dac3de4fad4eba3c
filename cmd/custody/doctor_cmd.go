package main

import (
	"fmt"
	"io"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/store"
)

// DoctorCmd checks the state file.
type DoctorCmd struct{}

// Help is the long help of doctor.
func (DoctorCmd) Help() string {
	return `Checks custody.toml, the state file (schema; every bucket: worktree records
and resource ledger entries, the intent index, leases, plans, meta and the
journal's hash chain), records whose interrupted intents wait for custody
resume, and resource ledger entries that cannot be reclaimed or whose destroy
failed. Prints one problem per line, then "N problems found" or "OK". When
opening the state file upgraded its schema, it first says so and names the
copy of the file as it was.

EXIT STATUS: 0 OK, 1 error, 3 problems found.`
}

// Run checks.
func (c *DoctorCmd) Run(a *App) error {
	a.tolerateConfig = true
	e, err := a.env(false)
	if err != nil {
		return err
	}
	problems, err := steps.Doctor(a.Ctx, e)
	if err != nil {
		return err
	}
	if a.configErr != nil {
		problems = append([]store.Problem{{Where: machine.ConfigFile, What: a.configErr.Error(), Fix: "edit custody.toml, then: custody doctor"}}, problems...)
	}
	if problems == nil {
		problems = []store.Problem{}
	}
	up := e.Store.Upgraded()
	a.done(doctorResult{State: e.Store.Path(), Problems: problems, Upgraded: up}, func(w io.Writer) {
		if up != nil {
			fmt.Fprintf(w, "upgraded %s from schema %d to %d; the file as it was is kept at %s\n", e.Store.Path(), up.From, up.To, up.Backup)
		}
		for _, p := range problems {
			fmt.Fprintf(w, "%s: %s\n", p.Where, p.What)
			if p.Fix != "" {
				fmt.Fprintf(w, "\tto fix: %s\n", p.Fix)
			}
		}
		if len(problems) == 0 {
			fmt.Fprintln(w, "OK")
		} else {
			fmt.Fprintf(w, "%d problems found\n", len(problems))
		}
	})
	return nil
}

// doctorResult is what doctor found.
type doctorResult struct {
	State    string          `json:"state"`
	Problems []store.Problem `json:"problems"`
	// Upgraded is the schema upgrade opening the state file ran, if any.
	Upgraded *store.Upgrade `json:"upgraded,omitempty"`
}

// Pending reports whether doctor found a problem (exit 3).
func (r doctorResult) Pending() bool { return len(r.Problems) > 0 }
