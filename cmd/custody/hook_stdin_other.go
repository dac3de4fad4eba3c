//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package main

import (
	"os"
	"time"
)

// readWithin reads f to its end, at most limit bytes, for at most d
// (readAllWithin).
func readWithin(f *os.File, limit int, d time.Duration) (b []byte, closed bool, err error) {
	return readAllWithin(f, nil, limit, d)
}
