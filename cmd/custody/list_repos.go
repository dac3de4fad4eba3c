package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/custody-sh/custody/cmd/custody/internal/output"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/steps/custody"
	"github.com/custody-sh/custody/store"
)

// The outcomes of one repository in list --all-repos.
const (
	repoListed  = "listed"
	repoMissing = "missing"
	repoError   = "error"
)

// runAllRepos lists every repository the user-level index holds, one line
// each: its trees counted by state and by list's word, each repository
// read as list reads it (read-only, its state file opened shared).
func (c *ListCmd) runAllRepos(a *App) error {
	path, _, err := steps.RepositoryIndexPath(a.getenv)
	if errors.Is(err, steps.ErrNoStateHome) {
		return &machine.Refusal{Code: machine.CodeUsage, Retry: "custody list",
			Message: err.Error() + ", so there is nothing for --all-repos to list: set one, and custody init records each repository in it from then on"}
	}
	if err != nil {
		return err
	}
	x, err := steps.ReadRepositoryIndex(path)
	if err != nil {
		return err
	}
	res := output.RepositoriesResult{Index: path, Repositories: []output.RepositorySummary{}}
	for _, r := range x.Repositories {
		res.Repositories = append(res.Repositories, a.summarizeRepository(c.All, r))
	}
	cwd, err := os.Getwd()
	if err != nil {
		cwd = ""
	} else if real, err := filepath.EvalSymlinks(cwd); err == nil {
		cwd = real
	}
	a.done(res, func(w io.Writer) {
		if len(res.Repositories) == 0 {
			sayf(w, "no repositories in %s; custody init records each one\n", path)
			return
		}
		width := a.listWidth()
		if c.Wide {
			width = 0
		}
		writeRepositories(w, cwd, width, res.Repositories)
	})
	return nil
}

// summarizeRepository reads one indexed repository: missing when its
// common dir is gone (or now belongs to another checkout), an error when
// it cannot be read, else its trees counted.
func (a *App) summarizeRepository(all bool, r machine.IndexedRepository) output.RepositorySummary {
	s := output.RepositorySummary{CommonDir: r.CommonDir, MainCheckout: r.MainCheckout,
		States: map[machine.State]int{}, Statuses: map[machine.TreeStatus]int{}}
	if hostio.Lstat(r.CommonDir).State == machine.PathAbsent || hostio.Lstat(r.MainCheckout).State == machine.PathAbsent {
		s.Outcome = repoMissing
		return s
	}
	g := a.git()
	repo, err := gitfiles.Discover(a.Ctx, g, r.MainCheckout)
	if err == nil && repo.CommonDir != r.CommonDir {
		s.Outcome = repoMissing // the checkout is another repository's now
		return s
	}
	var rows []steps.ListRow
	if err == nil {
		var st *store.Store
		st, err = store.OpenWith(a.Ctx, steps.StatePath(repo), store.Options{Timeout: a.Globals.LockTimeout, ReadOnly: true})
		if err == nil {
			// Another repository's configuration is not read: listing
			// its records needs none, and one broken there fails
			// nothing here.
			e := custody.NewEnv(custody.Site{Repo: repo}, st, custody.Wiring{Git: g, Clock: custody.ClockFunc(clock()), Getenv: a.getenv})
			rows, err = steps.List(a.Ctx, e, steps.ListOptions{All: all})
		}
	}
	if err != nil {
		s.Outcome, s.Error = repoError, describe(err).Message
		return s
	}
	s.Outcome = repoListed
	for _, row := range rows {
		s.Trees++
		s.States[row.Record.State]++
		s.Statuses[row.Verdict.Status]++
	}
	return s
}

// listWidth is the width list's tables fit on this stdout: COLUMNS or the
// terminal's on a terminal, else 80.
func (a *App) listWidth() int {
	return a.listView(false, "", clock()()).width
}

// writeRepositories writes list --all-repos' table: each repository's
// main checkout (relative to the current directory when below it, elided
// in the middle when the line would not fit width; 0 is no limit), its
// trees, and its counts by state and by word.
func writeRepositories(w io.Writer, cwd string, width int, repos []output.RepositorySummary) {
	type line struct{ path, trees, states, words string }
	lines := []line{{"REPOSITORY", "TREES", "STATES", "STATUS"}}
	for _, r := range repos {
		l := line{path: belowOrWhole(cwd, r.MainCheckout), trees: "-", states: "-"}
		switch r.Outcome {
		case repoMissing:
			l.words = "missing"
		case repoError:
			l.words = "error: " + machine.EscapeControl(hostio.FirstLine(r.Error))
		default:
			l.trees = strconv.Itoa(r.Trees)
			var states []string
			for _, st := range []machine.State{machine.StateProvisioning, machine.StateActive, machine.StateFinished,
				machine.StateRelocating, machine.StateRemoving, machine.StateTombstoned} {
				if n := r.States[st]; n > 0 {
					states = append(states, fmt.Sprintf("%d %s", n, st))
				}
			}
			l.states = strings.Join(states, ", ")
			if l.states == "" {
				l.states = "-"
			}
			l.words = countWords(r.Statuses)
		}
		lines = append(lines, l)
	}
	var pw, tw, sw int
	for _, l := range lines {
		pw = max(pw, utf8.RuneCountInString(l.path))
		tw = max(tw, utf8.RuneCountInString(l.trees))
		sw = max(sw, utf8.RuneCountInString(l.states))
	}
	longest := 0
	for _, l := range lines {
		longest = max(longest, utf8.RuneCountInString(l.words))
	}
	if over := pw + tw + sw + longest + 6 - width; width > 0 && over > 0 {
		pw = max(12, pw-over)
	}
	for _, l := range lines {
		p := machine.ElideMiddle(l.path, pw)
		fmt.Fprintf(w, "%s%s  %s%s  %s%s  %s\n",
			p, strings.Repeat(" ", pw-utf8.RuneCountInString(p)),
			strings.Repeat(" ", tw-utf8.RuneCountInString(l.trees)), l.trees,
			l.states, strings.Repeat(" ", sw-utf8.RuneCountInString(l.states)),
			l.words)
	}
}

// belowOrWhole is p relative to cwd when p is cwd or below it, else p
// itself, escaped to stay on its line: a repository elsewhere is named in
// full, never by a climb of "..".
func belowOrWhole(cwd, p string) string {
	if cwd != "" && isWithin(p, cwd) {
		if rel, err := filepath.Rel(cwd, p); err == nil {
			return machine.EscapeControl(rel)
		}
	}
	return machine.EscapeControl(p)
}
