//go:build !unix

package store

import "os"

// filePages returns the first n bytes of f read at once (wholeFile), or
// nil when they cannot be (the walk then reads page by page), and what
// releases them.
func filePages(f *os.File, n uint64) ([]byte, func()) {
	return wholeFile(f, n), func() {}
}
