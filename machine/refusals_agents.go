package machine

import (
	"fmt"
	"strings"
)

// The refusals of the agent integrations (Claude Code's settings, the
// Codex app's environment) and of the session hooks they install.

// claudeSettingsRefusal refuses the Claude settings file at path, which
// custody cannot merge its hooks into; nothing was written.
func claudeSettingsRefusal(path, format string, args ...any) *Refusal {
	return &Refusal{Code: CodeClaudeSettingsInvalid, Path: path, Retry: "custody integrate claude --check",
		Message: fmt.Sprintf("%s "+format+"; nothing was written. Fix it (or move it aside) and run integrate again", append([]any{path}, args...)...)}
}

// ClaudeSettingsUnreadableRefusal refuses the Claude settings file at
// path, which cannot be read as a regular file (err).
func ClaudeSettingsUnreadableRefusal(path string, err error) *Refusal {
	return claudeSettingsRefusal(path, "cannot be read as a regular file: %v", err)
}

// ClaudeSettingsUnmergeableRefusal refuses the Claude settings file at
// path, whose content custody's hooks cannot be merged into (err).
func ClaudeSettingsUnmergeableRefusal(path string, err error) *Refusal {
	return claudeSettingsRefusal(path, "cannot be merged: %v", err)
}

// ClaudeSettingsStaleRefusal is integrate claude --check's finding that
// the settings file at path lacks custody's hooks as it writes them.
func ClaudeSettingsStaleRefusal(path string) *Refusal {
	return &Refusal{Code: CodeClaudeSettingsStale, Path: path, Retry: "custody integrate claude",
		Message: fmt.Sprintf("%s lacks custody's hooks as this custody writes them", path)}
}

// CodexEnvironmentInvalidRefusal refuses the Codex environment file at
// path, which cannot be edited safely (err); nothing was written. retry is
// the integrate command that was run.
func CodexEnvironmentInvalidRefusal(path, retry string, err error) *Refusal {
	return &Refusal{Code: CodeCodexEnvironmentInvalid, Path: path, Retry: retry,
		Message: fmt.Sprintf("%s cannot be edited safely, so nothing was written: %v; fix the file (or move it aside for the Codex app to make again), then run integrate again", path, err)}
}

// CodexEnvironmentMissingRefusal is integrate codex --check's finding that
// the Codex environment file at path does not exist.
func CodexEnvironmentMissingRefusal(path string) *Refusal {
	return &Refusal{Code: CodeCodexEnvironmentStale, Path: path, Retry: "custody integrate codex",
		Message: fmt.Sprintf("%s does not exist, so the Codex app runs no custody script", path)}
}

// CodexEnvironmentStaleRefusal is integrate codex --check's finding that
// the Codex environment file at path lacks what integrate (or --merge,
// retry) would write: custody's line in tables (by their TOML names) and
// the top-level keys the app requires; with neither, only its bytes
// differ.
func CodexEnvironmentStaleRefusal(path, retry string, tables, keys []string) *Refusal {
	if len(tables) == 0 && len(keys) == 0 {
		return &Refusal{Code: CodeCodexEnvironmentStale, Path: path, Retry: retry,
			Message: fmt.Sprintf("%s is not as custody integrate codex writes it", path)}
	}
	var parts []string
	if len(tables) > 0 {
		scripts := "those scripts"
		if len(tables) == 1 {
			scripts = "that script"
		}
		parts = append(parts, fmt.Sprintf("custody's line in %s (the app runs %s without custody)", strings.Join(tables, ", "), scripts))
	}
	if len(keys) > 0 {
		parts = append(parts, strings.Join(keys, " and ")+" (the app requires them)")
	}
	return &Refusal{Code: CodeCodexEnvironmentStale, Path: path, Retry: retry,
		Message: fmt.Sprintf("%s lacks %s; nothing was written", path, strings.Join(parts, ", and "))}
}

// CodexScriptOwnRefusal names, in message, the scripts of the person's in
// the Codex environment file at path that run without custody's line; the
// retry merges it in.
func CodexScriptOwnRefusal(path, message string) *Refusal {
	return &Refusal{Code: CodeCodexScriptOwn, Path: path, Retry: "custody integrate codex --merge", Message: message}
}

// HookNoLeaseRefusal refuses a hook's lease change in the linked worktree
// at path, which custody keeps no live record of.
func HookNoLeaseRefusal(path string) *Refusal {
	return &Refusal{Code: CodeNotInWorktree, Path: path, Retry: "custody list",
		Message: fmt.Sprintf("%s is a linked worktree custody keeps no live record of: a hook there has no lease to change", path)}
}

// hookTreeRefusal refuses a hook run at dir, which is inside no linked
// worktree (why).
func hookTreeRefusal(dir, why string) *Refusal {
	return &Refusal{Code: CodeNotInWorktree, Path: dir, Retry: "custody list",
		Message: fmt.Sprintf("%s is not inside a linked worktree (%s): a hook there has no tree to act on", dir, why)}
}

// HookGitUnreadableRefusal refuses a hook run at dir: the .git at git, on
// the way up from it, cannot be read (err).
func HookGitUnreadableRefusal(dir, git string, err error) *Refusal {
	return hookTreeRefusal(dir, fmt.Sprintf("%s cannot be read: %v", git, err))
}

// HookNoRepositoryRefusal refuses a hook run at dir, which no git
// repository contains.
func HookNoRepositoryRefusal(dir string) *Refusal {
	return hookTreeRefusal(dir, "no git repository contains it")
}

// HookMainCheckoutRefusal refuses a hook run at dir, inside top, a main
// checkout.
func HookMainCheckoutRefusal(dir, top string) *Refusal {
	return hookTreeRefusal(dir, top+" is a main checkout")
}

// HookNotGitfileRefusal refuses a hook run at dir, whose tree's .git is
// not a gitfile git reads (err).
func HookNotGitfileRefusal(dir string, err error) *Refusal {
	return hookTreeRefusal(dir, fmt.Sprintf("its .git is not a gitfile git reads: %v", err))
}

// HookNotAdminEntryRefusal refuses a hook run at dir, whose tree's .git
// names admin, which is not a linked worktree's admin entry (err).
func HookNotAdminEntryRefusal(dir, admin string, err error) *Refusal {
	return hookTreeRefusal(dir, fmt.Sprintf("%s is not a linked worktree's admin entry: %v", admin, err))
}

// HookCommonDirUnresolvedRefusal refuses a hook run at dir, whose tree's
// common dir cannot be resolved (err).
func HookCommonDirUnresolvedRefusal(dir string, err error) *Refusal {
	return hookTreeRefusal(dir, fmt.Sprintf("its common dir cannot be resolved: %v", err))
}

// HookAdminNotBackRefusal refuses a hook run at dir, inside top, whose
// admin entry admin does not name top back.
func HookAdminNotBackRefusal(dir, admin, top string) *Refusal {
	return hookTreeRefusal(dir, fmt.Sprintf("git's admin entry %s does not name %s back", admin, top))
}
