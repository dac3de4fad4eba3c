//go:build !failpoint

package failpoint

// At does nothing in ordinary builds.
func At(string) {}

// Pause does nothing in ordinary builds.
func Pause(string) {}

// Interrupted does nothing in ordinary builds.
func Interrupted() {}
