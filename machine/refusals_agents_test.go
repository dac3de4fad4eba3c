package machine

import (
	"errors"
	"testing"
)

func TestIntegrationRefusals(t *testing.T) {
	t.Parallel()
	const (
		claude = "/w/repo/.claude/settings.json"
		codex  = "/w/repo/.codex/environments/environment.toml"
	)
	const fix = "; nothing was written. Fix it (or move it aside) and run integrate again"
	checkRefusals(t, []refusalCase{
		{"claude settings unreadable", ClaudeSettingsUnreadableRefusal(claude, errors.New("is a symlink")), &Refusal{Code: CodeClaudeSettingsInvalid, Path: claude,
			Retry: "custody integrate claude --check", Message: claude + " cannot be read as a regular file: is a symlink" + fix}},
		{"claude settings unmergeable", ClaudeSettingsUnmergeableRefusal(claude, errors.New("hooks is not an object")), &Refusal{Code: CodeClaudeSettingsInvalid, Path: claude,
			Retry: "custody integrate claude --check", Message: claude + " cannot be merged: hooks is not an object" + fix}},
		// A path holding a verb is a value, never a format.
		{"claude settings, a path holding a verb", ClaudeSettingsUnmergeableRefusal("/w/100%s/x.json", errors.New("bad")), &Refusal{Code: CodeClaudeSettingsInvalid,
			Path: "/w/100%s/x.json", Retry: "custody integrate claude --check", Message: "/w/100%s/x.json cannot be merged: bad" + fix}},
		{"claude settings stale", ClaudeSettingsStaleRefusal(claude), &Refusal{Code: CodeClaudeSettingsStale, Path: claude, Retry: "custody integrate claude",
			Message: claude + " lacks custody's hooks as this custody writes them"}},
		{"codex environment invalid", CodexEnvironmentInvalidRefusal(codex, "custody integrate codex --remove", errors.New("environment.toml cannot be edited: it is not valid TOML")), &Refusal{Code: CodeCodexEnvironmentInvalid,
			Path: codex, Retry: "custody integrate codex --remove",
			Message: codex + " cannot be edited safely, so nothing was written: environment.toml cannot be edited: it is not valid TOML; fix the file (or move it aside for the Codex app to make again), then run integrate again"}},
		{"codex environment missing", CodexEnvironmentMissingRefusal(codex), &Refusal{Code: CodeCodexEnvironmentStale, Path: codex,
			Retry: "custody integrate codex", Message: codex + " does not exist, so the Codex app runs no custody script"}},
		{"codex environment lacks one table and keys", CodexEnvironmentStaleRefusal(codex, "custody integrate codex", []string{"setup"}, []string{"version", "name"}), &Refusal{Code: CodeCodexEnvironmentStale, Path: codex,
			Retry: "custody integrate codex", Message: codex + " lacks custody's line in setup (the app runs that script without custody), and version and name (the app requires them); nothing was written"}},
		{"codex environment lacks tables", CodexEnvironmentStaleRefusal(codex, "custody integrate codex --merge", []string{"setup", "setup.linux"}, nil), &Refusal{Code: CodeCodexEnvironmentStale, Path: codex,
			Retry: "custody integrate codex --merge", Message: codex + " lacks custody's line in setup, setup.linux (the app runs those scripts without custody); nothing was written"}},
		{"codex environment differs", CodexEnvironmentStaleRefusal(codex, "custody integrate codex", nil, nil), &Refusal{Code: CodeCodexEnvironmentStale, Path: codex,
			Retry: "custody integrate codex", Message: codex + " is not as custody integrate codex writes it"}},
		{"codex script own", CodexScriptOwnRefusal(codex, "the paragraph"), &Refusal{Code: CodeCodexScriptOwn, Path: codex,
			Retry: "custody integrate codex --merge", Message: "the paragraph"}},
	})
}

func TestHookRefusals(t *testing.T) {
	t.Parallel()
	const dir = "/w/repo/sub"
	notTree := func(why string) *Refusal {
		return &Refusal{Code: CodeNotInWorktree, Path: dir, Retry: "custody list",
			Message: dir + " is not inside a linked worktree (" + why + "): a hook there has no tree to act on"}
	}
	checkRefusals(t, []refusalCase{
		{"no lease", HookNoLeaseRefusal("/w/t"), &Refusal{Code: CodeNotInWorktree, Path: "/w/t", Retry: "custody list",
			Message: "/w/t is a linked worktree custody keeps no live record of: a hook there has no lease to change"}},
		{".git unreadable", HookGitUnreadableRefusal(dir, "/w/repo/sub/.git", errors.New("EACCES")), notTree("/w/repo/sub/.git cannot be read: EACCES")},
		{"no repository", HookNoRepositoryRefusal(dir), notTree("no git repository contains it")},
		{"main checkout", HookMainCheckoutRefusal(dir, "/w/repo"), notTree("/w/repo is a main checkout")},
		{"not a gitfile", HookNotGitfileRefusal(dir, errors.New("no gitdir line")), notTree("its .git is not a gitfile git reads: no gitdir line")},
		{"not an admin entry", HookNotAdminEntryRefusal(dir, "/w/repo/.git/worktrees/x", errors.New("no commondir")),
			notTree("/w/repo/.git/worktrees/x is not a linked worktree's admin entry: no commondir")},
		{"common dir unresolved", HookCommonDirUnresolvedRefusal(dir, errors.New("ENOENT")), notTree("its common dir cannot be resolved: ENOENT")},
		{"admin entry does not name it back", HookAdminNotBackRefusal(dir, "/w/repo/.git/worktrees/x", "/w/t"),
			notTree("git's admin entry /w/repo/.git/worktrees/x does not name /w/t back")},
	})
}
