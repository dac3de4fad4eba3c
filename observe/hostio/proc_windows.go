package hostio

import "syscall"

// ProcessExists cannot ask about a process on windows: unknown, which
// callers guarding an intent treat as alive.
func ProcessExists(int) (bool, error) { return false, Unsupported("process queries") }

// ProcessAlive cannot tell on windows; a lock holder counts as alive.
func ProcessAlive(int) bool { return true }

// SignalGroup cannot signal a process group on windows.
func SignalGroup(int, syscall.Signal) error { return Unsupported("process groups") }
