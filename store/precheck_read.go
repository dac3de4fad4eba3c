package store

import "os"

// maxWholeRead bounds the state file precheck reads in one go.
const maxWholeRead = 16 << 20

// wholeFile returns the first n bytes of f, read at once, when n is at most
// maxWholeRead, so walking every page costs one read and no copy per page
// (a hook opens the file on every agent prompt); nil otherwise, or when
// that read fails (the walk then reads page by page and reports what it
// cannot read). n is the pages below the meta's high-water mark: bbolt
// grows the file ahead of them, and what lies past them is never read. The
// bytes are the same either way: precheck runs before bbolt maps the file,
// under no lock, as before.
func wholeFile(f *os.File, n uint64) []byte {
	if n > maxWholeRead {
		return nil
	}
	buf := make([]byte, n)
	if got, err := f.ReadAt(buf, 0); uint64(got) != n && err != nil {
		return nil
	}
	return buf
}
