package main

// IntegrateCmd groups the commands that wire custody into an agent's own
// configuration files.
type IntegrateCmd struct {
	Codex  IntegrateCodexCmd  `cmd:"" help:"Co-manage the Codex app's environment.toml: custody's setup and cleanup lines in every table it runs."`
	Claude IntegrateClaudeCmd `cmd:"" help:"Merge custody's hooks into the main checkout's .claude/settings.json."`
}
