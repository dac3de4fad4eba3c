//go:build !linux && !darwin

package hostio

// ParentPID cannot read a process's parent on this system.
func ParentPID(int) (int, error) { return 0, Unsupported("process tables") }

// ProcessStart cannot read when a process started on this system: 0, so
// an intent's holder is told apart by pid alone.
func ProcessStart(int) uint64 { return 0 }
