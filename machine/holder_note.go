package machine

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// maxHolderCommand bounds the command a holder note quotes.
const maxHolderCommand = 200

// HolderNote is the one line a lock's holder writes to say who it is:
// "pid N on HOST (ARGS) since TIME\n". Each argument is written with
// ShowName, so an argument holding a newline, a control character or a
// byte that is not UTF-8 (a path given on the command line) neither splits
// the note nor reads as another argument; the command is cut at a
// character boundary once it passes maxHolderCommand bytes.
func HolderNote(pid int, host string, args []string, since time.Time) string {
	return fmt.Sprintf("pid %d on %s (%s) since %s\n", pid, ShowName(host), HolderCommand(args), since.UTC().Format(time.RFC3339))
}

// HolderCommand is args as a holder note quotes them: each argument shown
// with ShowName, joined by spaces, cut at a character boundary once it
// passes maxHolderCommand bytes.
func HolderCommand(args []string) string {
	words := make([]string, len(args))
	for i, a := range args {
		words[i] = ShowName(a)
	}
	cmd := strings.Join(words, " ")
	if len(cmd) > maxHolderCommand {
		cut := maxHolderCommand
		for cut > 0 && !utf8.RuneStart(cmd[cut]) {
			cut--
		}
		cmd = cmd[:cut] + "…"
	}
	return cmd
}
