package main

import (
	"fmt"
	"io"
)

// ShellInitCmd prints the shell function behind custody switch.
type ShellInitCmd struct {
	Shell string `arg:"" enum:"bash,zsh,fish" help:"The shell: bash, zsh or fish."`
}

// Help is the long help of shell-init.
func (ShellInitCmd) Help() string {
	return `Prints a shell function named custody that runs the custody binary (command
custody) and, for custody switch ID and custody new NAME, also changes the
shell's directory into the tree. Every other command line runs the binary
unchanged, with its output and exit status. Paths with spaces, quotes,
newlines or bytes that are not UTF-8 are passed whole. Load it from your
shell's rc file:

    bash, in ~/.bashrc:  eval "$(custody shell-init bash)"
    zsh, in ~/.zshrc:    eval "$(custody shell-init zsh)"
    fish, in ~/.config/fish/config.fish:
                         custody shell-init fish | source

EXIT STATUS: 0 printed, 1 error.`
}

// Run prints the function.
func (c *ShellInitCmd) Run(a *App) error {
	doc, err := wholeCLI()
	if err != nil {
		return err
	}
	gen, ok := shellInits()[c.Shell]
	if !ok {
		// kong's enum check makes this unreachable; say so plainly if not.
		return &usageError{fmt.Errorf("shell-init: no function for shell %q (bash, zsh or fish)", c.Shell)}
	}
	text := gen(doc)
	a.done(textResult{Text: text}, func(w io.Writer) { fmt.Fprint(w, text) })
	return nil
}
