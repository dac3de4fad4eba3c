//go:build !failpoint

package store

// failpoint does nothing in ordinary builds.
func failpoint(string) {}

// pause does nothing in ordinary builds.
func pause(string) {}
