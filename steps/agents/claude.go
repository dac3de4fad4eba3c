package agents

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/safefile"
	"github.com/custody-sh/custody/steps"
)

// ClaudeSettingsFile is Claude Code's project settings file, relative to
// the main checkout.
const ClaudeSettingsFile = ".claude/settings.json"

// claudeSettingsLimit bounds what is read of an existing settings file.
const claudeSettingsLimit = 4 << 20

// IntegrateClaudeResult reports what `custody integrate claude` found and
// did.
type IntegrateClaudeResult struct {
	// Path is the settings file in the main checkout.
	Path string `json:"path"`
	// Changed says custody's merge changes the file's bytes; Written that
	// it replaced the file with them (never with check).
	Changed bool `json:"changed"`
	Written bool `json:"written"`
	// Hooks are the hooks the file holds after the merge.
	Hooks []ClaudeHook `json:"hooks"`
	// Refusal says check found the file stale.
	Refusal *machine.Refusal `json:"refusal,omitempty"`
}

// Pending reports a stale file found by check.
func (r IntegrateClaudeResult) Pending() bool { return r.Refusal != nil }

// IntegrateClaude merges custody's hooks (ClaudeHooks) into the Claude
// Code settings file of repo's main checkout (mergeClaudeSettings): it
// reads the file (missing is empty), merges, and replaces it durably only
// when the bytes change, keeping its mode. It is idempotent. With check it
// writes nothing and, when the file is not what custody would write, says
// so in the result's Refusal (CodeClaudeSettingsStale). A file custody
// cannot merge (not a regular file, not a JSON object, hooks of another
// shape) is a CodeClaudeSettingsInvalid refusal and nothing is written.
func IntegrateClaude(repo hostio.Repo, check bool) (IntegrateClaudeResult, error) {
	path := filepath.Join(repo.MainCheckout, filepath.FromSlash(ClaudeSettingsFile))
	existing, err := safefile.Read(path, claudeSettingsLimit)
	var mode fs.FileMode = 0o644
	switch {
	case errors.Is(err, fs.ErrNotExist):
		existing = nil
	case err != nil:
		return IntegrateClaudeResult{}, machine.ClaudeSettingsUnreadableRefusal(path, err)
	default:
		if fi, err := os.Lstat(path); err == nil {
			mode = fi.Mode().Perm()
		}
	}
	hooks := ClaudeHooks()
	merged, err := mergeClaudeSettings(existing, hooks)
	if err != nil {
		return IntegrateClaudeResult{}, machine.ClaudeSettingsUnmergeableRefusal(path, err)
	}
	res := IntegrateClaudeResult{Path: path, Changed: !bytes.Equal(existing, merged), Hooks: hooks}
	switch {
	case check && res.Changed:
		res.Refusal = machine.ClaudeSettingsStaleRefusal(path)
	case !check && res.Changed:
		if err := writeClaudeSettings(path, merged, mode); err != nil {
			return res, fmt.Errorf("write %s: %w; the file is as it was", path, err)
		}
		res.Written = true
	}
	return res, nil
}

// writeClaudeSettings replaces path with b through custody's one durable
// write (a temporary file beside it, synced, renamed over it, the
// directory synced), in a directory that is not a symlink.
func writeClaudeSettings(path string, b []byte, mode fs.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	return steps.WriteFile(path, b, mode)
}
