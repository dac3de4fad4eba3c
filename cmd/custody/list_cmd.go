package main

import (
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/custody-sh/custody/cmd/custody/internal/output"
	"github.com/custody-sh/custody/steps"
)

// ListCmd lists worktree records with a glance at each tree.
type ListCmd struct {
	All      bool `name:"all" help:"Include tombstoned records."`
	Wide     bool `name:"wide" help:"Show every column and each path in full, whatever the terminal's width."`
	AllRepos bool `name:"all-repos" help:"List every repository custody init ran in (the index in $XDG_STATE_HOME/custody), one line each with its counts."`
}

// Help is the long help of list.
func (ListCmd) Help() string {
	return `Lists worktree records, tombstoned ones only with --all: for each, its id,
branch, state, one word on the tree and its age (since its record was made),
with its path relative to the current directory. The table fits the
terminal's width (COLUMNS, else the terminal's own; 80 off a terminal),
eliding the middle of long paths and branches; --wide shows every column and
full paths, --json everything.

The word is the first of these that holds: pending (an intent custody resume
settles), missing (nothing at the path), leased (a live session holds it),
unknown (the tree could not be read), dirty (git status reports changes or
untracked files), diverged, unpushed N (commits its upstream, or without one
every remote-tracking ref, lacks), behind N (its upstream's commits it lacks),
would-go (a finished tree git's files show clean, whose HEAD a remote-tracking
ref holds: plan would likely remove it; plan alone decides), clean.

list reads git's own files first: a tree whose index stat data shows it clean
costs no git process; any other tree costs one (git status, or git rev-list to
count its commits). On a terminal rows appear as their trees are read.

On a terminal each row is printed as its tree is read; a list longer than the
screen goes through the pager instead, as plan's does (CUSTODY_PAGER, else
PAGER, else less with LESS=FRX; cat or empty for none).

Each git command list runs may take 10s unless --observe-timeout says
otherwise: a tree whose git status takes longer (a filter that hangs) is
shown with its status unknown; custody show and plan observe it fully.

--all-repos lists every repository custody init ran in, from the index
custody keeps in $XDG_STATE_HOME/custody/repositories.json (by default
~/.local/state/custody/): one line each, with its trees counted by state and
by word; a repository that is gone is shown missing.

EXIT STATUS: 0 done, 1 error.`
}

// listObserveTimeout bounds each git command list runs, unless
// --observe-timeout says otherwise: list is a glance, so a tree whose git
// status takes longer (a clean filter that hangs) is shown with its status
// unknown instead of holding every row for the observation timeout plan
// and apply wait (five minutes); show and plan observe it fully.
const listObserveTimeout = 10 * time.Second

// observeTimeoutGiven reports whether the command line set
// --observe-timeout.
func (a *App) observeTimeoutGiven() bool {
	for _, arg := range a.args {
		if arg == "--" {
			break
		}
		if arg == "--observe-timeout" || strings.HasPrefix(arg, "--observe-timeout=") {
			return true
		}
	}
	return false
}

// listOutgrowsScreen reports whether a list of n rows (with its header and
// summary) needs more lines than the terminal on stdout shows, and the
// person has a pager (pagerCommand) to show it through.
func (a *App) listOutgrowsScreen(n int) bool {
	f, pager, _ := a.terminalPager(a.Stdout)
	if pager == "" {
		return false
	}
	_, rows, ok := terminalSize(f)
	return ok && n+3 > rows
}

// listEntry is one record in list's result.
type listEntry = output.ListEntry

// Run lists records, or with --all-repos the repositories.
func (c *ListCmd) Run(a *App) error {
	if c.AllRepos {
		return c.runAllRepos(a)
	}
	e, err := a.env(false)
	if err != nil {
		return err
	}
	if !a.observeTimeoutGiven() {
		e.Git.ObserveTimeout = min(e.Git.ObserveTimeout, listObserveTimeout)
	}
	v := a.listView(c.Wide, e.Repo.MainCheckout, e.Now())
	opt := steps.ListOptions{All: c.All}
	var shown *listTable
	paged := false
	if v.progressive {
		// On a terminal each row is printed as its tree is read, in order,
		// under a header sized from the records; a list longer than the
		// screen, when the person has a pager, is shown through it once
		// every tree is read instead (as plan is).
		opt.Start = func(rows []steps.ListRow) {
			if paged = a.listOutgrowsScreen(len(rows)); paged || len(rows) == 0 {
				return
			}
			shown = v.table(rows, true)
			shown.header(a.Stdout)
		}
		opt.Row = func(_ int, r steps.ListRow) {
			if shown != nil {
				shown.row(a.Stdout, r)
			}
		}
	}
	rows, err := steps.List(a.Ctx, e, opt)
	if err != nil {
		return err
	}
	out := make([]listEntry, 0, len(rows))
	for _, r := range rows {
		out = append(out, listEntryOf(r))
	}
	done := a.done
	if paged {
		done = a.donePaged
	}
	done(output.ListResult{Records: out}, func(w io.Writer) {
		if len(rows) == 0 {
			io.WriteString(w, "no worktrees; make one with: custody new NAME\n")
			return
		}
		if shown == nil {
			t := v.table(rows, false)
			t.header(w)
			for _, r := range rows {
				t.row(w, r)
			}
		}
		v.summary(w, rows)
	})
	return nil
}

// listEntryOf is a row as list --json gives it.
func listEntryOf(r steps.ListRow) listEntry {
	rec := r.Record
	e := listEntry{ID: rec.ID, Kind: rec.Kind, State: rec.State, Path: rec.Path, Branch: rec.Branch, Intent: rec.Intent,
		Status: r.Verdict.Status, CreatedAt: rec.CreatedAt, Lease: r.Lease, Glance: r.Glance}
	if r.Verdict.Counted {
		n := r.Verdict.N
		e.StatusCount = &n
	}
	return e
}

// listView is how list prints its table here: the width it fits, whether
// it colours the words and prints rows as they come, and how it shows
// paths.
type listView struct {
	// width is the columns the table fits; 0 for --wide (no limit).
	width int
	wide  bool
	// colour says escapes are allowed on stdout (escapesAllowed).
	colour bool
	// progressive says rows are printed as their trees are read: stdout
	// is a terminal and the output is not JSON.
	progressive bool
	paths       pathView
	// now is the time ages are counted to.
	now time.Time
}

// listView decides how list prints on this stdout.
func (a *App) listView(wide bool, mainCheckout string, now time.Time) listView {
	v := listView{wide: wide, width: 80, paths: a.pathView(mainCheckout), now: now}
	f, ok := a.Stdout.(*os.File)
	tty := ok && isTerminal(f)
	if tty {
		if n := columnsFromEnv(a.getenv); n > 0 {
			v.width = n
		} else if n := terminalColumns(f); n > 0 {
			v.width = n
		}
	}
	if wide {
		v.width = 0
	}
	v.colour = escapesAllowed(tty, a.getenv)
	v.progressive = tty && !a.Globals.JSON
	return v
}

// columnsFromEnv is COLUMNS when it is a positive number (0 otherwise):
// the width a person set for programs that ask.
func columnsFromEnv(getenv func(string) string) int {
	if getenv == nil {
		getenv = os.Getenv
	}
	n, err := strconv.Atoi(getenv("COLUMNS"))
	if err != nil || n <= 0 {
		return 0
	}
	return n
}
