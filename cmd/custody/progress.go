package main

import (
	"fmt"
	"io"
	"os"

	"github.com/custody-sh/custody/steps"
)

// termProgress prints progress on a terminal's stderr, overwriting one line.
type termProgress struct{ w io.Writer }

func (p termProgress) Step(done, total int, what string) {
	fmt.Fprintf(p.w, "\r\033[K%d/%d %s", done, total, what)
	if done == total {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// progress returns a progress printer only when stderr is a terminal and
// output is not JSON.
func (a *App) progress() steps.Progress {
	if a.Globals.JSON {
		return nil
	}
	f, ok := a.Stderr.(*os.File)
	if !ok {
		return nil
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	return termProgress{w: a.Stderr}
}
