//go:build unix

package sweep

import (
	"errors"
	"syscall"
)

// isNotEmpty reports whether err is a directory's removal refused because
// the directory holds something.
func isNotEmpty(err error) bool {
	return errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST)
}
