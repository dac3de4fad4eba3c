package observe

import "syscall"

// ProcessExists cannot ask about a process on windows: unknown, which
// callers guarding an intent treat as alive.
func ProcessExists(int) (bool, error) { return false, unsupported("process queries") }

// processAlive cannot tell on windows; a lock holder counts as alive.
func processAlive(int) bool { return true }

// SignalGroup cannot signal a process group on windows.
func SignalGroup(int, syscall.Signal) error { return unsupported("process groups") }
