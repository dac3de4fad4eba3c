package main

import (
	"fmt"
	"strings"
)

// interruptNote is what custody says, in one line on stderr, about a
// command an interrupt stopped: what it finished, what it left midway for
// custody resume, and what it did not start.
type interruptNote struct {
	// Command is the command's name ("apply", "journal export").
	Command string
	// Signal is the signal's name ("SIGINT").
	Signal string
	// Reads is a command that only reads the repository: it changed
	// nothing, so nothing is left.
	Reads bool
	// Finished says what the command finished before it stopped ("after
	// 1 of 3 actions (1 removed)"); "" when it keeps no count of its own,
	// and Committed says it.
	Finished string
	// Committed counts the changes the command committed to the state
	// file.
	Committed int64
	// Midway are the records whose intent the command left, each with the
	// intent ("p1-a17804 (removal)"). MidwayKnown is false when the state
	// file could not be read after the interrupt.
	Midway      []string
	MidwayKnown bool
	// NotStarted are the items the command did not begin, and Again the
	// command that does them.
	NotStarted []string
	Again      string
}

// noteListed is how many names a list in the line spells out; the rest
// are counted.
const noteListed = 3

// line is the note as one line, without its newline.
func (n interruptNote) line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "custody %s: interrupted by %s", n.Command, n.Signal)
	if n.Reads {
		b.WriteString(" before it finished; it only reads, so nothing was changed and nothing is left to settle")
		return b.String()
	}
	switch {
	case n.Finished != "":
		b.WriteString(" " + n.Finished)
	case n.Committed > 0:
		fmt.Fprintf(&b, " after committing %d change(s) to the state file", n.Committed)
	case !n.MidwayKnown || len(n.Midway) > 0:
		b.WriteString(" before it finished")
	default:
		b.WriteString(" before it changed anything")
	}
	switch {
	case !n.MidwayKnown:
		b.WriteString("; custody resume settles whatever it left midway")
	case len(n.Midway) == 1:
		b.WriteString("; left midway: " + n.Midway[0] + ", which custody resume settles")
	case len(n.Midway) > 1:
		b.WriteString("; left midway: " + listed(n.Midway) + ", which custody resume settles")
	default:
		b.WriteString("; nothing is left midway")
	}
	if len(n.NotStarted) > 0 {
		b.WriteString("; not started: " + listed(n.NotStarted))
		if n.Again != "" {
			b.WriteString(" (" + n.Again + " does them)")
		}
	}
	return b.String()
}

// listed spells out the first noteListed names and counts the rest.
func listed(names []string) string {
	if len(names) <= noteListed {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:noteListed], ", "), len(names)-noteListed)
}
