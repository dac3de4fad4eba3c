//go:build !linux && !darwin && !freebsd

package writable

// readOnlyMount reports false: this system's mount flags are not read
// here, so only EROFS itself says a file system is read-only.
func readOnlyMount(string) bool { return false }

// mountOf is "": the mount table is not read on this system.
func mountOf(string) string { return "" }
