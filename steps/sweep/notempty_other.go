//go:build !unix

package sweep

import (
	"errors"
	"io/fs"
)

// isNotEmpty reports whether err is a directory's removal refused because
// the directory holds something: on this system, any refusal that is not
// a missing entry.
func isNotEmpty(err error) bool {
	return err != nil && !errors.Is(err, fs.ErrNotExist)
}
