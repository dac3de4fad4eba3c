//go:build !unix

package clitest

// ownCacheDir is false off unix, where ownership is not checked here: the
// builds are then made per test package, as without a cache.
func ownCacheDir(dir string) bool { return false }
