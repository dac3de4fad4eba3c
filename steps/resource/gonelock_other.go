//go:build !unix

package resource

import (
	"errors"
	"os"
)

// tryLock cannot take an advisory lock here: custody resource gc
// --gone-repos refuses; custody runs on linux and darwin.
func tryLock(*os.File) error {
	return errors.New("file locks are not supported on this system; custody runs on linux and darwin")
}
