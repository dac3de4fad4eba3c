package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/steps/agents"
)

// IntegrateCodexCmd co-manages the Codex app's environment.toml.
type IntegrateCodexCmd struct {
	Check bool `name:"check" help:"Write nothing; fail when the file lacks what custody would write."`
}

// Help is the long help of integrate codex.
func (IntegrateCodexCmd) Help() string {
	return `Edits .codex/environments/environment.toml in the main checkout (the file the
Codex app generates and rewrites) so that the app runs custody in the worktrees it
makes and removes:

    [setup]   script = "` + agents.CodexSetupScript + `"
    [cleanup] script = "` + agents.CodexCleanupScript + `"

The setup script puts the app's tree in custody (adopt --if-needed: the app
makes plain git worktrees) and creates or ensures its resources. Only those two
keys are edited, and only where absent, empty, or exactly a script an earlier
custody wrote (` + "`" + agents.CodexEarlierSetupScript + "`" + `, upgraded in place): a script of your
own is kept byte for byte, as are comments, the app's [[actions]] and every
other key. version and name (the app requires both) are added only where
absent. The file is replaced atomically, and only when its bytes change, so
running this again (after the app rewrote the file) is safe and a run that
finds the file current writes nothing. A file that is not TOML, or gives
[setup] or [cleanup] a shape custody does not edit, is refused and left as it is.

EXIT STATUS: 0 done (or, with --check, the file is current), 1 error (a file
custody cannot edit, or with --check one that lacks custody's keys: nothing
written).`
}

// Run integrates.
func (c *IntegrateCodexCmd) Run(a *App) error {
	repo, err := gitfiles.Discover(a.Ctx, a.git(), a.Dir)
	if err != nil {
		return err
	}
	if !c.Check {
		if err := a.refuseUnwritable(filepath.Join(repo.MainCheckout, ".codex")); err != nil {
			return err
		}
	}
	res, err := agents.IntegrateCodex(repo, c.Check)
	if err != nil {
		return err
	}
	a.done(res, func(w io.Writer) {
		for _, k := range res.Keys {
			fmt.Fprintf(w, "%-8s %s\n", k.Outcome, k.Key)
		}
		switch {
		case res.Written:
			fmt.Fprintf(w, "wrote %s\n", res.Path)
		default:
			fmt.Fprintf(w, "%s is current; nothing written\n", res.Path)
		}
	})
	return nil
}
