package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/custody-sh/custody/steps"
)

// SwitchCmd prints the path of the tree a shell changes into.
type SwitchCmd struct {
	ID string `arg:"" name:"id" complete:"trees" help:"The worktree: an id, a unique id prefix, the tree's directory name or its path."`
}

// Help is the long help of switch.
func (SwitchCmd) Help() string {
	return `Changes the shell's directory to the tree, through the shell function that
custody shell-init prints (load it once from your shell's rc file):

    bash:  eval "$(custody shell-init bash)"
    zsh:   eval "$(custody shell-init zsh)"
    fish:  custody shell-init fish | source

A program cannot change its shell's directory, so without the function custody
switch prints the tree's path, as custody path does, and says on stderr how
to load the function. A tombstoned record, or a path where no directory is
now, is refused and the shell stays where it is.

EXIT STATUS: 0 done, 1 error (an unknown or ambiguous tree, or no directory there).`
}

// shellFunctionEnv is set, to the shell's name, by the function custody
// shell-init prints when it runs custody switch or custody new: the
// function changes the directory itself, so switch says nothing more.
const shellFunctionEnv = "CUSTODY_SHELL_FUNCTION"

// Run prints the path, and how to load the function when it is not loaded.
func (c *SwitchCmd) Run(a *App) error {
	e, err := a.env(false)
	if err != nil {
		return err
	}
	rec, err := steps.SwitchTree(e, a.Dir, c.ID)
	if err != nil {
		return err
	}
	a.done(treePathResult{ID: rec.ID, Path: rec.Path}, func(w io.Writer) {
		printPath(w, rec.Path)
		if os.Getenv(shellFunctionEnv) == "" {
			fmt.Fprint(a.Stderr, switchNote(os.Getenv("SHELL")))
		}
	})
	return nil
}

// switchNote is what switch says on stderr when the shell function is not
// loaded: the line that loads it, for the shell $SHELL names (bash when
// it names none custody has a function for).
func switchNote(shell string) string {
	switch filepath.Base(shell) {
	case "zsh":
		return "custody switch: printed the path; to change directory, add this line to ~/.zshrc:\n\teval \"$(custody shell-init zsh)\"\n"
	case "fish":
		return "custody switch: printed the path; to change directory, add this line to ~/.config/fish/config.fish:\n\tcustody shell-init fish | source\n"
	}
	return "custody switch: printed the path; to change directory, add this line to ~/.bashrc:\n\teval \"$(custody shell-init bash)\"\n"
}
