// Package agents connects coding agents to custody: the session hooks'
// lease changes, the WorktreeRemove hook's retirement of a tree through
// plan and apply, and the editors of Claude Code's settings.json and the
// Codex app's environment.toml, each a pure bytes-in, bytes-out function
// with a thin file-writing wrapper. It is a feature of package steps: it
// may import the steps core, never another feature.
package agents
