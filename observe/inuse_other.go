//go:build !linux && !darwin

package observe

// ScanProcesses cannot observe processes on this system: every tree is
// refused as in use, unknown never being idle.
func ScanProcesses() *Processes {
	return &Processes{Err: "processes cannot be observed on this system: " + unsupported("in-use scans").Error()}
}
