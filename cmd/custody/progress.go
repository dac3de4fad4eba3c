package main

import (
	"fmt"
	"io"
	"os"

	"github.com/custody-sh/custody/steps"
)

// termProgress prints progress on a terminal's stderr, overwriting one line.
type termProgress struct{ w io.Writer }

// Step shows done of total and what is being worked on; the line is
// cleared when the work ends (done == total) or the command ends
// (endProgress).
func (p termProgress) Step(done, total int, what string) {
	fmt.Fprintf(p.w, "\r\033[K%d/%d %s", done, total, what)
	if done == total {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// progress returns a progress printer only when stderr is a terminal and
// output is not JSON: never on a pipe, a file or /dev/null, so what scripts
// capture holds no progress.
func (a *App) progress() steps.Progress {
	if a.Globals.JSON {
		return nil
	}
	f, ok := a.Stderr.(*os.File)
	if !ok || !isTerminal(f) {
		return nil
	}
	return termProgress{w: a.Stderr}
}

// endProgress clears the progress line of p, if it printed one, before the
// command prints its result: a step may end before done reaches total
// (apply counts the plan's kept items in total but never steps over them).
func endProgress(p steps.Progress) {
	if t, ok := p.(termProgress); ok {
		fmt.Fprint(t.w, "\r\033[K")
	}
}
