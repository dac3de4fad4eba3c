package main

import (
	"bytes"
	"io"
	"os"
	"strings"

	"github.com/custody-sh/custody/observe/hostio"
)

// donePaged is done for a command whose human output can run longer than
// a screen (plan, list): on a terminal it is shown through the pager
// (page), as git shows its log. The result, the exit code and --json are
// as done has them.
func (a *App) donePaged(result any, human func(w io.Writer)) {
	a.done(result, func(w io.Writer) { a.page(w, human) })
}

// page writes what render prints to w, through the person's pager when w
// is a terminal, a pager is asked for (pagerCommand) and the output is
// longer than the screen (the terminal's rows, long lines counted as the
// terminal folds them; when the terminal does not say its size, the pager
// decides, as less -F does). The pager runs through the shell (sh -c, as
// git runs it) on custody's terminal, with LESS=FRX and LV=-c unless they
// are set: less then quits at once on a screenful, passes colour through
// and leaves the screen as it was. A pager that cannot be started, or
// that the shell could not run (exit 126 or 127), is passed over: the
// output is written to w directly. A person who quits the pager before
// the end is no error: the exit code is the command's. Nothing is paged
// with --json (its envelope never comes here) or off a terminal.
func (a *App) page(w io.Writer, render func(io.Writer)) {
	f, pager, lookup := a.terminalPager(w)
	if pager == "" {
		render(w)
		return
	}
	var buf bytes.Buffer
	render(&buf)
	if cols, rows, ok := terminalSize(f); ok && screenRows(buf.Bytes(), cols) < rows {
		_, _ = f.Write(buf.Bytes())
		return
	}
	if !a.runPager(f, pager, pagerEnv(lookup), buf.Bytes()) {
		_, _ = f.Write(buf.Bytes())
	}
}

// terminalPager is the pager (pagerCommand) for output to w and the
// terminal w is, when w is a terminal and the person has a pager; pager
// is "" otherwise. lookup is how the environment was read.
func (a *App) terminalPager(w io.Writer) (f *os.File, pager string, lookup func(string) (string, bool)) {
	f, ok := w.(*os.File)
	if !ok || !isTerminal(f) {
		return nil, "", nil
	}
	lookup = a.lookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	return f, pagerCommand(lookup), lookup
}

// runPager shows out through the shell command pager on the terminal f,
// and reports whether the pager ran (false: nothing was shown, so the
// caller writes out itself).
func (a *App) runPager(f *os.File, pager string, env []string, out []byte) bool {
	runner := &hostio.Runner{}
	if a.Globals.Debug {
		runner.Trace = a.Stderr
	}
	p, err := runner.StartAttached(hostio.Cmd{Args: []string{"sh", "-c", pager}, Env: env}, f, a.Stderr)
	if err != nil {
		return false
	}
	// A write error is the pager having quit (EPIPE): the person read what
	// they wanted.
	_, _ = p.Write(out)
	code, err := p.Wait()
	return err != nil || code != 126 && code != 127
}

// pagerCommand is the pager the person asked for, as git chooses one:
// $CUSTODY_PAGER, else $PAGER, else less. A chosen value that is empty
// (or only spaces) or cat means no pager: "" is returned.
func pagerCommand(lookup func(string) (string, bool)) string {
	for _, name := range []string{"CUSTODY_PAGER", "PAGER"} {
		if v, ok := lookup(name); ok {
			if v = strings.TrimSpace(v); v == "cat" {
				return ""
			}
			return v
		}
	}
	return "less"
}

// pagerEnv is what the pager's environment adds, as git adds it: LESS=FRX
// (quit on a screenful, colour passed through, the screen left as it was)
// and LV=-c (lv shows colour) where the person set neither.
func pagerEnv(lookup func(string) (string, bool)) []string {
	var env []string
	if _, ok := lookup("LESS"); !ok {
		env = append(env, "LESS=FRX")
	}
	if _, ok := lookup("LV"); !ok {
		env = append(env, "LV=-c")
	}
	return env
}
