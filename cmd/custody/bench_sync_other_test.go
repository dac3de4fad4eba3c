//go:build !unix

package main

// syncDisks does nothing where there is no sync(2).
func syncDisks() {}
