package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/custody-sh/custody/steps"
)

// termProgress prints progress on a terminal's stderr, overwriting one
// line: with the escape sequence that erases it where escapes are allowed
// (escapesAllowed), else by writing spaces over what it showed.
type termProgress struct {
	w       io.Writer
	escapes bool
	// shown is how many columns the line shows now, to blank without
	// escapes.
	shown int
}

// Step shows done of total and what is being worked on; the line is
// cleared when the work ends (done == total) or the command ends
// (endProgress).
func (p *termProgress) Step(done, total int, what string) {
	p.clear()
	line := fmt.Sprintf("%d/%d %s", done, total, what)
	fmt.Fprint(p.w, line)
	p.shown = utf8.RuneCountInString(line)
	if done == total {
		p.clear()
	}
}

// clear erases the progress line and leaves the cursor at its start.
func (p *termProgress) clear() {
	if p.escapes {
		fmt.Fprint(p.w, "\r\033[K")
		return
	}
	if p.shown > 0 {
		fmt.Fprint(p.w, "\r"+strings.Repeat(" ", p.shown)+"\r")
	}
	p.shown = 0
}

// progress returns a progress printer only when stderr is a terminal and
// output is not JSON: never on a pipe, a file or /dev/null, so what scripts
// capture holds no progress. It writes escape sequences only where
// escapesAllowed says a terminal takes them.
func (a *App) progress() steps.Progress {
	if a.Globals.JSON {
		return nil
	}
	f, ok := a.Stderr.(*os.File)
	if !ok || !isTerminal(f) {
		return nil
	}
	return &termProgress{w: a.Stderr, escapes: escapesAllowed(true, a.getenv)}
}

// endProgress clears the progress line of p, if it printed one, before the
// command prints its result: a step may end before done reaches total
// (apply counts the plan's kept items in total but never steps over them).
func endProgress(p steps.Progress) {
	if t, ok := p.(*termProgress); ok {
		t.clear()
	}
}
