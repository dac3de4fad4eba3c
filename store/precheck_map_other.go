//go:build !unix

package store

import "os"

// filePages returns the first n bytes of f read at once (wholeFile), or
// nil when they cannot be (the walk then reads page by page), what
// releases them, and nil: there is nothing to drop.
func filePages(f *os.File, n uint64) ([]byte, func(), func()) {
	return wholeFile(f, n), func() {}, nil
}
