package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/steps/agents"
)

// IntegrateCodexCmd co-manages the Codex app's environment.toml.
type IntegrateCodexCmd struct {
	Check  bool `name:"check" help:"Write nothing; fail when a table the app runs lacks custody's line, naming it."`
	Merge  bool `name:"merge" xor:"mode" help:"Also put custody's line into your own scripts (first, every byte of yours kept)."`
	Remove bool `name:"remove" xor:"mode" help:"Take custody's lines out of every table again, giving back your bytes."`
}

// Help is the long help of integrate codex.
func (IntegrateCodexCmd) Help() string {
	return `Edits .codex/environments/environment.toml in the main checkout (the file the
Codex app generates and rewrites) so that the app runs custody in the worktrees it
makes and removes:

    [setup]   script = "` + agents.CodexSetupScript + `"
    [cleanup] script = "` + agents.CodexCleanupScript + `"

The setup script puts the app's tree in custody (adopt --if-needed: the app
makes plain git worktrees) and creates or ensures its resources.

Every table the app runs is co-managed: [setup] and [cleanup], and each
[setup.darwin], [setup.linux], [cleanup.darwin] or [cleanup.linux] override
that exists (an override replaces the base script on its platform). A table
without a script, or with an empty one, gets custody's; a script exactly as an
earlier custody wrote it (` + "`" + agents.CodexEarlierSetupScript + "`" + `) is upgraded in place; a
script that already runs custody's line (on a line of its own, anywhere) is
current. A script of your own is left as it is: integrate names its table, says
what the app's trees miss there, prints the merged script and exits 3. With
--merge custody's line goes into it, first (after a #! line), by inserting
bytes only: a line end in a multi-line string, "; " in a one-line string.
[setup.win32] and [cleanup.win32] are never edited: custody does not run on
Windows. version and name (the app requires both) are added only where absent.
Comments, quoting, the app's [[actions]] and every other byte are kept.

--remove takes custody's lines out of every co-managed table: a table or key
custody added whole comes out whole, a merged line comes out of your script,
and your bytes are as they were (version and name stay).

The file is replaced atomically, and only when its bytes change, so running
this again (after the app rewrote the file) is safe. A file that is not TOML,
is not UTF-8, gives a table or script the wrong type, defines a key twice, or
has a darwin or linux override without a script is refused and left as it is.

EXIT STATUS: 0 done (or, with --check, every table the app runs has custody's
line), 1 error (a file custody cannot edit, or with --check one that lacks
custody's line or keys: the tables are named; nothing written), 3 done, but a
script of yours runs without custody's line (named, merged script printed).`
}

// Run integrates.
func (c *IntegrateCodexCmd) Run(a *App) error {
	if c.Check && c.Remove {
		return &usageError{errors.New("integrate codex: --check and --remove do not go together (--check reads what integrate would write)")}
	}
	repo, err := gitfiles.Discover(a.Ctx, a.git(), a.Dir)
	if err != nil {
		return err
	}
	if !c.Check {
		if err := a.refuseUnwritable(filepath.Join(repo.MainCheckout, ".codex")); err != nil {
			return err
		}
	}
	mode := agents.CodexIntegrate
	switch {
	case c.Merge:
		mode = agents.CodexMerge
	case c.Remove:
		mode = agents.CodexRemove
	}
	res, err := agents.IntegrateCodex(repo, mode, c.Check)
	if err != nil {
		return err
	}
	a.done(res, func(w io.Writer) { writeCodexResult(w, res) })
	return nil
}

// writeCodexResult is integrate codex's human output: one line per key,
// what was written, then the scripts of the person's that run without
// custody's line, with the merged script for each.
func writeCodexResult(w io.Writer, res agents.IntegrateCodexResult) {
	for _, k := range res.Keys {
		fmt.Fprintf(w, "%-9s %s\n", k.Outcome, k.Key)
	}
	switch {
	case res.Written:
		fmt.Fprintf(w, "wrote %s\n", res.Path)
	case res.Mode == agents.CodexRemove.String() && len(res.Keys) == 0:
		fmt.Fprintf(w, "%s does not exist; nothing to remove\n", res.Path)
	default:
		fmt.Fprintf(w, "%s is current; nothing written\n", res.Path)
	}
	if res.Refusal == nil {
		return
	}
	writeRefusal(w, "custody integrate codex", res.Refusal)
	for _, k := range res.Keys {
		if k.Outcome != "own" {
			continue
		}
		fmt.Fprintf(w, "merged script for [%s]:\n", k.Table)
		for _, l := range strings.Split(strings.TrimSuffix(k.Merged, "\n"), "\n") {
			fmt.Fprintf(w, "    %s\n", l)
		}
	}
}
