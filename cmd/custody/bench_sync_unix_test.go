//go:build unix

package main

import "syscall"

// syncDisks writes every dirty block to disk, so both sides of a timed
// removal delete trees that are on disk.
func syncDisks() { syscall.Sync() }
