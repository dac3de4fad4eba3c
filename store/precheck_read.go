package store

import (
	"bytes"
	"io"
	"os"
)

// maxWholeRead bounds the state file precheck reads in one go.
const maxWholeRead = 16 << 20

// wholeFile returns the first size bytes of f read at once, as a ReaderAt,
// when size is at most maxWholeRead, so walking every page costs one read
// instead of two per page (a hook opens the file on every agent prompt);
// f itself otherwise, or when that read fails (the walk then reads page by
// page and reports what it cannot read). The bytes are the same either
// way: precheck runs before bbolt maps the file, under no lock, as before.
func wholeFile(f *os.File, size uint64) io.ReaderAt {
	if size > maxWholeRead {
		return f
	}
	buf := make([]byte, size)
	if n, err := f.ReadAt(buf, 0); uint64(n) != size && err != nil {
		return f
	}
	return bytes.NewReader(buf)
}
