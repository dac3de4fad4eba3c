package main

// IntegrateCmd groups the commands that wire custody into an agent's own
// configuration files.
type IntegrateCmd struct {
	Codex IntegrateCodexCmd `cmd:"" help:"Write custody's setup and cleanup scripts into the Codex app's environment.toml."`
}
