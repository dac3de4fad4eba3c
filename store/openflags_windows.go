package store

import (
	"errors"
	"os"
)

// oNoFollow is no flag on windows, which has no O_NOFOLLOW: what was
// opened is still checked to be a regular file.
const oNoFollow = 0

// lockNow cannot take an advisory lock on windows: salvage, which needs
// the store alone, refuses there.
func lockNow(*os.File) error {
	return errors.New("file locks are not supported on windows; custody runs on linux and darwin")
}

// sharedLockNow takes no lock on windows: the pages are checked as they
// are.
func sharedLockNow(*os.File) (held bool, err error) { return true, nil }
