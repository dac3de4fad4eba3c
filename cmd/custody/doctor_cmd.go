package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"sort"
	"time"

	"github.com/custody-sh/custody/cmd/custody/internal/output"
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
		if a.statePath != "" {
			return c.openFailed(a, err)
		}
		return err
	}
	problems, err := steps.Doctor(a.Ctx, e)
	if isDamage(err) {
		// A value the check read but a later reader cannot (a record that
		// is not JSON): the damage is the report.
		problems = append(problems, store.Problem{Where: "state file", What: err.Error(), Fix: salvageFix})
	} else if err != nil {
		return err
	}
	stuck, err := steps.Stuck(a.Ctx, e)
	if isDamage(err) {
		problems = append(problems, store.Problem{Where: "state file", What: "the records that cannot progress could not be listed: " + err.Error(), Fix: salvageFix})
		stuck = nil
	} else if err != nil {
		return err
	}
	problems = withStuck(problems, stuck)
	live, err := steps.LiveIntents(a.Ctx, e)
	if isDamage(err) {
		live = nil // the damage is reported above
	} else if err != nil {
		return err
	}
	problems = withoutLive(problems, live)
	for i := range problems {
		if problems[i].Fix == "" {
			// A problem in the file's content without a fix of its own
			// (a broken hash chain, a record that does not parse, an index
			// entry for a record that is gone) is settled by salvage.
			problems[i].Fix = salvageFix
		}
	}
	if stuck == nil {
		stuck = []steps.StuckRecord{}
	}
	if live == nil {
		live = []steps.LiveIntent{}
	}
	if a.configErr != nil {
		problems = append([]store.Problem{{Where: machine.ConfigFile, What: a.configErr.Error(), Fix: "edit custody.toml, then: custody doctor"}}, problems...)
	}
	if problems == nil {
		problems = []store.Problem{}
	}
	up := e.Store.Upgraded()
	a.done(doctorResult{State: e.Store.Path(), Problems: problems, Stuck: stuck, InProgress: live, Upgraded: up}, func(w io.Writer) {
		if up != nil {
			fmt.Fprintf(w, "upgraded %s from schema %d to %d; the file as it was is kept at %s\n", e.Store.Path(), up.From, up.To, up.Backup)
		}
		for _, l := range live {
			fmt.Fprintf(w, "%s %s: %s %s\n", l.Kind, machine.EscapeControl(l.ID), l.Progress.Intent, machine.EscapeControl(l.Progress.String()))
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
type doctorResult = output.DoctorResult

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

// withoutLive drops the state check's "carries an unfinished intent"
// problem of each record whose intent another live custody on this host
// is carrying out (live): that is its work in progress, which doctor
// reports as such and does not count.
func withoutLive(problems []store.Problem, live []steps.LiveIntent) []store.Problem {
	if len(live) == 0 {
		return problems
	}
	type key struct {
		kind machine.Kind
		id   string
	}
	busy := map[key]bool{}
	for _, l := range live {
		busy[key{l.Kind, l.ID}] = true
	}
	var out []store.Problem
	for _, p := range problems {
		if in := p.Intent; in != nil && busy[key{in.Kind, in.Record}] {
			continue
		}
		out = append(out, p)
	}
	return out
}

// salvageFix is the next step for a state file whose content is damaged:
// a new file of everything still readable, the damaged one kept.
const salvageFix = "custody doctor --salvage"

// isDamage reports whether err says the state file's content is damaged.
func isDamage(err error) bool {
	return errors.Is(err, store.ErrCorrupt) || errors.Is(err, store.ErrJournalBroken)
}

// openFailed reports why the state file could not be opened as one
// problem (or, for a file bbolt cannot open safely, every damaged part the
// page-by-page scan finds), with the step that settles it, and exits 3:
// damage is what doctor is for, never a bare error. An error that is not
// about the state file stands (exit 1).
func (c *DoctorCmd) openFailed(a *App, err error) error {
	path := a.statePath
	aside := machine.Command("mv", "-n", "--", path, path+".corrupt") + " && custody init"
	var fix string
	switch {
	case errors.Is(err, store.ErrCorrupt):
		if d, serr := store.Scan(path); serr == nil {
			return c.damaged(a, err, d)
		}
		// Nothing in it can be read (no valid meta page, not a regular
		// file): it is moved aside, kept for inspection.
		fix = aside
	case errors.Is(err, store.ErrUnreadable):
		fix = machine.CommandAgain(a.args)
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			if to, rerr := os.Readlink(path); rerr == nil {
				fix = machine.Command("rm", "--", path) + " && " + machine.Command("cp", "-p", "--", to, path) + " && custody doctor"
			}
		} else if lerr == nil && fi.Mode().IsRegular() {
			fix = machine.Command("chmod", "u+rw", "--", path) + " && custody doctor"
		}
	case errors.Is(err, store.ErrSchemaNewer):
		fix = "custody --version"
		err = fmt.Errorf("%w; a newer custody wrote it: run that custody, or upgrade this one", err)
	case errors.Is(err, store.ErrLockTimeout):
		fix = machine.CommandAgain(a.args, "--lock-timeout", "60s")
		if s := lockHolderSaying(err); s != "" {
			err = fmt.Errorf("%w. %s", err, s)
		}
	case errors.Is(err, store.ErrMigrationFailed):
		fix = "custody doctor"
		err = fmt.Errorf("%w; keep the file and the copy, and report what failed", err)
	default:
		return err
	}
	problems := []store.Problem{{Where: "state file", What: err.Error(), Fix: fix}}
	a.done(doctorResult{State: path, Problems: problems, Stuck: []steps.StuckRecord{}, InProgress: []steps.LiveIntent{}}, func(w io.Writer) {
		printProblems(w, problems)
		fmt.Fprintf(w, "%d problems found\n", len(problems))
	})
	return nil
}

// damaged reports a state file bbolt cannot open safely: every damaged
// part the page-by-page scan d finds, and what each bucket still holds.
func (c *DoctorCmd) damaged(a *App, openErr error, d store.Damage) error {
	fix := salvageFix
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
