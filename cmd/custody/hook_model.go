package main

// hookCLI is the command line of `custody hook ...`: the global flags and
// the hook group alone. Agents run hooks on every prompt and tool call, and
// building kong's model of the whole CLI costs about as much as the hook's
// own work; the hook commands are the same structs either way, so their
// flags, help and behaviour do not change.
type hookCLI struct {
	Globals

	Hook HookCmd `cmd:"" help:"Agents' hooks: lease a session's worktree, create and retire trees (stdin: the agent's JSON payload)."`
}

// hookModel returns the hook command line when args start with "hook",
// else nil (the whole CLI). Global flags before "hook" take the whole CLI,
// which parses them the same way.
func hookModel(args []string) *hookCLI {
	if len(args) > 0 && args[0] == "hook" {
		return &hookCLI{}
	}
	return nil
}
