package main

import (
	"fmt"
	"io"

	"github.com/custody-sh/custody/machine"
)

// writeRefusal is the one way every command prints a refusal, the go
// command's way: the fact on one line, then the command that retries on an
// indented line.
//
//	kept x-1a2b3c [untracked-files]: .worktrees/x-1a2b3c has 2 untracked files
//		to retry: custody plan
//
// subject says what the refusal is about ("kept x-1a2b3c", "custody plan");
// it may be empty. The subject and the message are one line each: a
// control character or a byte that is not UTF-8 in them (from a name) is
// escaped. The retry is a command line already quoted for pasting.
func writeRefusal(w io.Writer, subject string, r *machine.Refusal) {
	writeRefusalAs(w, "", subject, r)
}

// writeRefusalAs is writeRefusal of a subject that begins with word, a
// verdict custody wrote (coloured, so it is not escaped): "kept", "stale".
func writeRefusalAs(w io.Writer, word, subject string, r *machine.Refusal) {
	if subject != "" {
		subject = machine.EscapeControl(subject) + " "
	}
	if word != "" {
		subject = word + " " + subject
	}
	fmt.Fprintf(w, "%s[%s]: %s\n\tto retry: %s\n", subject, r.Code, machine.EscapeControl(r.Message), retryOf(r))
}

// retryOf is r's retry command. A refusal made without one still gets a
// command that shows what custody knows, so no refusal leaves a person
// without a next step.
func retryOf(r *machine.Refusal) string {
	if r.Retry != "" {
		return r.Retry
	}
	return "custody doctor"
}
