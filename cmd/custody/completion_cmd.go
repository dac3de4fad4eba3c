package main

import (
	"fmt"
	"io"
)

// CompleteCmd prints a shell completion script.
type CompleteCmd struct {
	Shell string `arg:"" enum:"bash,zsh,fish" help:"The shell: bash, zsh or fish."`
}

// Help is the long help of completion.
func (CompleteCmd) Help() string {
	return `Prints a completion script for the shell, drawn from the command line itself:
every command and subcommand, every flag, the values of flags and arguments
that take one of a few, and, asked of custody as you type, the ids of trees,
local branches (new --from) and archive names. Load it with, for example:

    bash:  source <(custody completion bash)
    zsh:   source <(custody completion zsh)
    fish:  custody completion fish | source

EXIT STATUS: 0 printed, 1 error.`
}

// Run prints the script.
func (c *CompleteCmd) Run(a *App) error {
	doc, err := wholeCLI()
	if err != nil {
		return err
	}
	gen, ok := completionScripts()[c.Shell]
	if !ok {
		// kong's enum check makes this unreachable; say so plainly if not.
		return &usageError{fmt.Errorf("completion: no script for shell %q (bash, zsh or fish)", c.Shell)}
	}
	script := gen(doc)
	a.done(textResult{Text: script}, func(w io.Writer) { fmt.Fprint(w, script) })
	return nil
}
