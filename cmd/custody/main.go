// Command custody keeps git worktrees safe: every worktree is a persisted
// state machine, every destructive step is preceded by a durable,
// proof-bearing intent, and nothing a person wrote is ever lost.
package main

import "os"

func main() {
	tuneGC()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
