package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/safefile"
	"github.com/custody-sh/custody/steps"
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

// claudeSettingsLimit bounds what is read of an existing settings file.
const claudeSettingsLimit = 4 << 20

// integrateResult is what integrate claude did.
type integrateResult struct {
	Path    string           `json:"path"`
	Changed bool             `json:"changed"`
	Written bool             `json:"written"`
	Hooks   []claudeHook     `json:"hooks"`
	Refusal *machine.Refusal `json:"refusal,omitempty"`
}

// Pending reports a stale file found by --check.
func (r integrateResult) Pending() bool { return r.Refusal != nil }

// Run merges the hooks.
func (c *IntegrateClaudeCmd) Run(a *App) error {
	repo, err := observe.Discover(a.Ctx, a.git(), a.Dir)
	if err != nil {
		return err
	}
	path := filepath.Join(repo.MainCheckout, ".claude", "settings.json")
	invalid := func(format string, args ...any) error {
		return &machine.Refusal{Code: machine.CodeClaudeSettingsInvalid, Path: path, Retry: "custody integrate claude --check",
			Message: fmt.Sprintf("%s "+format+"; nothing was written. Fix it (or move it aside) and run integrate again", append([]any{path}, args...)...)}
	}
	existing, err := safefile.Read(path, claudeSettingsLimit)
	var mode fs.FileMode = 0o644
	switch {
	case errors.Is(err, fs.ErrNotExist):
		existing = nil
	case err != nil:
		return invalid("cannot be read as a regular file: %v", err)
	default:
		if fi, err := os.Lstat(path); err == nil {
			mode = fi.Mode().Perm()
		}
	}
	merged, err := mergeClaudeSettings(existing, claudeHooks())
	if err != nil {
		return invalid("cannot be merged: %v", err)
	}
	res := integrateResult{Path: path, Changed: !bytes.Equal(existing, merged), Hooks: claudeHooks()}
	switch {
	case c.Check && res.Changed:
		res.Refusal = &machine.Refusal{Code: machine.CodeClaudeSettingsStale, Path: path, Retry: "custody integrate claude",
			Message: fmt.Sprintf("%s lacks custody's hooks as this custody writes them", path)}
	case !c.Check && res.Changed:
		if err := writeSettings(path, merged, mode); err != nil {
			return fmt.Errorf("write %s: %w; the file is as it was", path, err)
		}
		res.Written = true
	}
	a.done(res, func(w io.Writer) {
		switch {
		case res.Refusal != nil:
			writeRefusal(w, "custody integrate claude", res.Refusal)
		case res.Written:
			fmt.Fprintf(w, "wrote %d custody hooks into %s\n", len(res.Hooks), path)
		default:
			fmt.Fprintf(w, "%s already holds custody's hooks\n", path)
		}
	})
	return nil
}

// writeSettings replaces path with b through custody's one durable write
// (a temporary file beside it, synced, renamed over it, the directory
// synced), in a directory that is not a symlink.
func writeSettings(path string, b []byte, mode fs.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	return steps.WriteFile(path, b, mode)
}
