package main

// IntegrateCmd groups the commands that write custody's hooks into an
// agent's configuration.
type IntegrateCmd struct {
	Claude IntegrateClaudeCmd `cmd:"" help:"Merge custody's hooks into the main checkout's .claude/settings.json."`
}
