package main

import "os"

// escapesAllowed reports whether custody may write terminal escape
// sequences (erasing a line, colour) on a stream: only when it is a
// terminal (tty), NO_COLOR is unset or empty (no-color.org), and TERM names
// a terminal other than "dumb" (unset, as git reads it, is dumb too).
// getenv reads the environment; nil is os.Getenv. Every escape custody
// prints asks it first.
func escapesAllowed(tty bool, getenv func(string) string) bool {
	if getenv == nil {
		getenv = os.Getenv
	}
	if !tty || getenv("NO_COLOR") != "" {
		return false
	}
	term := getenv("TERM")
	return term != "" && term != "dumb"
}
