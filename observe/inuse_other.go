//go:build !linux && !darwin

package observe

import "github.com/custody-sh/custody/observe/hostio"

// ScanProcesses cannot observe processes on this system: every tree is
// refused as in use, unknown never being idle.
func ScanProcesses() *Processes {
	return &Processes{Err: "processes cannot be observed on this system: " + hostio.Unsupported("in-use scans").Error()}
}
