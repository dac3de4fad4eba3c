package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/steps/agents"
)

// IntegrateClaudeCmd writes custody's Claude Code hooks.
type IntegrateClaudeCmd struct {
	Check bool `name:"check" help:"Write nothing; exit 3 when the file lacks custody's hooks as integrate writes them."`
}

// Help is the long help of integrate claude.
func (IntegrateClaudeCmd) Help() string {
	return `Merges custody's hooks into <main checkout>/.claude/settings.json: WorktreeCreate runs
custody hook worktree-create (a managed tree, its path printed), WorktreeRemove runs
custody hook worktree-remove (finish, then removal only with a proof), SessionStart
takes the session's lease (and runs resource ensure), UserPromptSubmit, PostToolUse
and Stop renew it, SessionEnd releases it. Every other setting and every hook group
that is not custody's own (a group whose every command is a custody hook command)
is kept as it is; running it again changes nothing, and the file is written only
when its bytes change. A file that is not a JSON object is refused and left as it is.
The commands run custody from PATH.

EXIT STATUS: 0 written or already current, 1 error (nothing written), 3 --check found the file stale.`
}

// Run merges the hooks.
func (c *IntegrateClaudeCmd) Run(a *App) error {
	repo, err := gitfiles.Discover(a.Ctx, a.git(), a.Dir)
	if err != nil {
		return err
	}
	if !c.Check {
		if err := a.refuseUnwritable(filepath.Join(repo.MainCheckout, ".claude")); err != nil {
			return err
		}
	}
	res, err := agents.IntegrateClaude(repo, c.Check)
	if err != nil {
		return err
	}
	a.done(res, func(w io.Writer) {
		switch {
		case res.Refusal != nil:
			writeRefusal(w, "custody integrate claude", res.Refusal)
		case res.Written:
			fmt.Fprintf(w, "wrote %d custody hooks into %s\n", len(res.Hooks), res.Path)
		default:
			fmt.Fprintf(w, "%s already holds custody's hooks\n", res.Path)
		}
	})
	return nil
}
