package hostio

import (
	"fmt"
	"io/fs"
)

// IdentityOf cannot name a file by device and inode on windows: an
// UnsupportedError, so every comparison is unknown ("maybe the same").
func IdentityOf(path string) (Identity, error) {
	return Identity{}, fmt.Errorf("stat %s: %w", path, Unsupported("device and inode identities"))
}

// DevIno has no device and inode to give on windows.
func DevIno(fs.FileInfo) (dev, ino uint64, ok bool) { return 0, 0, false }
