package main

import (
	"fmt"
	"io"
)

// ManCmd prints the man page.
type ManCmd struct{}

// Help is the long help of man.
func (ManCmd) Help() string {
	return `Prints custody(1) in roff, drawn from the command line itself, so it lists
exactly the commands and flags this custody takes. Install it with, for
example: custody man > ~/.local/share/man/man1/custody.1

EXIT STATUS: 0 printed, 1 error.`
}

// Run prints the page.
func (c *ManCmd) Run(a *App) error {
	doc, err := wholeCLI()
	if err != nil {
		return err
	}
	page := manPage(doc)
	a.done(textResult{Text: page}, func(w io.Writer) { fmt.Fprint(w, page) })
	return nil
}

// textResult is a generated text as a --json result.
type textResult struct {
	Text string `json:"text"`
}
