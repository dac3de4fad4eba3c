package main

import (
	"errors"
	"fmt"
	"io"
	"os/user"
	"sort"
	"time"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/store"
)

// DoctorCmd checks the state file.
type DoctorCmd struct {
	Salvage bool `name:"salvage" help:"Write a new state file from everything the damaged one still holds; the damaged file is kept beside it."`
}

// Help is the long help of doctor.
func (DoctorCmd) Help() string {
	return `Checks custody.toml, the state file (schema; every bucket: worktree records
and resource ledger entries, the intent index, leases, plans, meta and the
journal's hash chain), records whose interrupted intents wait for custody
resume, and resource ledger entries that cannot be reclaimed or whose destroy
failed. It also lists every record that can never progress on its own, with
the command that settles it: one whose interrupted intent resume refuses (an
ambiguous relocation, an observation no rule fits), and one whose tree is
gone and whose last commit no ref here holds (custody abandon ID
--acknowledge-unrecoverable COMMIT). Prints one problem per line, then "N
problems found" or "OK"; --json lists the stuck records under "stuck". When
opening the state file upgraded its schema, it first says so and names the
copy of the file as it was.

A state file too damaged for bbolt to open safely is read page by page
instead: doctor names every damaged page and bucket, and how many entries
each bucket still holds. --salvage then writes a new state file from every
record, ledger entry, lease, plan and journal entry that can be read, moves
the damaged file to state.db.damaged-<time> (never deleted) and puts the new
one in its place; the journal keeps the readable entries verbatim and ends
with a "salvage" event naming what was lost.

EXIT STATUS: 0 OK, 1 error, 3 problems found (or, with --salvage, something
was lost).`
}

// Run checks.
func (c *DoctorCmd) Run(a *App) error {
	a.tolerateConfig = true
	if c.Salvage {
		return c.salvage(a)
	}
	e, err := a.env(false)
	if err != nil {
		if errors.Is(err, store.ErrCorrupt) && a.statePath != "" {
			return c.damaged(a, err)
		}
		return err
	}
	problems, err := steps.Doctor(a.Ctx, e)
	if err != nil {
		return err
	}
	stuck, err := steps.Stuck(a.Ctx, e)
	if err != nil {
		return err
	}
	problems = withStuck(problems, stuck)
	if stuck == nil {
		stuck = []steps.StuckRecord{}
	}
	if a.configErr != nil {
		problems = append([]store.Problem{{Where: machine.ConfigFile, What: a.configErr.Error(), Fix: "edit custody.toml, then: custody doctor"}}, problems...)
	}
	if problems == nil {
		problems = []store.Problem{}
	}
	up := e.Store.Upgraded()
	a.done(doctorResult{State: e.Store.Path(), Problems: problems, Stuck: stuck, Upgraded: up}, func(w io.Writer) {
		if up != nil {
			fmt.Fprintf(w, "upgraded %s from schema %d to %d; the file as it was is kept at %s\n", e.Store.Path(), up.From, up.To, up.Backup)
		}
		printProblems(w, problems)
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
	// Stuck are the records that can never progress on their own, each
	// with the command that settles it (each is a problem too).
	Stuck []steps.StuckRecord `json:"stuck"`
	// Upgraded is the schema upgrade opening the state file ran, if any.
	Upgraded *store.Upgrade `json:"upgraded,omitempty"`
	// Readable counts, for a state file too damaged to open, the entries
	// each bucket still holds.
	Readable map[string]int `json:"readable,omitempty"`
}

// Pending reports whether doctor found a problem (exit 3).
func (r doctorResult) Pending() bool { return len(r.Problems) > 0 || len(r.Stuck) > 0 }

// withStuck adds one problem for each stuck record, fixed by the command
// that settles it, in place of the state check's "custody resume" for its
// unfinished intent (resume refuses it): the problem whose Intent names
// that record.
func withStuck(problems []store.Problem, stuck []steps.StuckRecord) []store.Problem {
	type key struct {
		kind machine.Kind
		id   string
	}
	held := map[key]bool{}
	for _, s := range stuck {
		held[key{s.Kind, s.ID}] = true
	}
	out := []store.Problem{}
	for _, p := range problems {
		if in := p.Intent; in != nil && held[key{in.Kind, in.Record}] {
			continue
		}
		out = append(out, p)
	}
	for _, s := range stuck {
		out = append(out, store.Problem{Where: string(s.Kind) + " " + s.ID, What: "can never progress on its own: " + s.Why, Fix: s.Settle})
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// damaged reports a state file bbolt cannot open safely: every damaged
// part the page-by-page scan finds, and what each bucket still holds.
func (c *DoctorCmd) damaged(a *App, openErr error) error {
	d, err := store.Scan(a.statePath)
	if err != nil {
		return openErr
	}
	fix := "custody doctor --salvage"
	problems := []store.Problem{{Where: "state file", What: openErr.Error(), Fix: fix}}
	for _, l := range d.Lost {
		problems = append(problems, store.Problem{Where: "state file", What: l, Fix: fix})
	}
	a.done(doctorResult{State: a.statePath, Problems: problems, Readable: d.Buckets}, func(w io.Writer) {
		printProblems(w, problems)
		names := make([]string, 0, len(d.Buckets))
		for n := range d.Buckets {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(w, "bucket %s: %d entries can still be read\n", n, d.Buckets[n])
		}
		fmt.Fprintf(w, "%d problems found\n", len(problems))
	})
	return nil
}

// salvage runs store.Salvage on the state file, whatever state it is in.
func (c *DoctorCmd) salvage(a *App) error {
	if _, err := a.env(false); err != nil {
		var refused *refusedUnwritable
		if a.statePath == "" || errors.As(err, &refused) {
			return err
		}
	}
	actor := "custody"
	if u, err := user.Current(); err == nil {
		actor = u.Username
	}
	rep, err := store.Salvage(a.statePath, time.Now(), actor)
	if err != nil {
		return err
	}
	a.done(salvageResult(rep), func(w io.Writer) {
		fmt.Fprintf(w, "salvaged %s; the damaged file is kept at %s\n", rep.Path, rep.Damaged)
		names := make([]string, 0, len(rep.Kept))
		for n := range rep.Kept {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(w, "kept %d entries of bucket %s\n", rep.Kept[n], n)
		}
		for _, l := range rep.Lost {
			fmt.Fprintf(w, "lost: %s\n", l)
		}
		if len(rep.LostJournal) > 0 {
			fmt.Fprintf(w, "lost journal entries: %v\n", rep.LostJournal)
		}
		if len(rep.Lost) == 0 && len(rep.LostJournal) == 0 {
			fmt.Fprintln(w, "nothing was lost")
		}
	})
	return nil
}

// salvageResult is what doctor --salvage kept and lost.
type salvageResult store.SalvageReport

// Pending reports whether something was lost (exit 3).
func (r salvageResult) Pending() bool { return len(r.Lost) > 0 || len(r.LostJournal) > 0 }

// printProblems prints problems one per line, each fix on an indented line.
func printProblems(w io.Writer, problems []store.Problem) {
	for _, p := range problems {
		fmt.Fprintf(w, "%s: %s\n", p.Where, p.What)
		if p.Fix != "" {
			fmt.Fprintf(w, "\tto fix: %s\n", p.Fix)
		}
	}
}
