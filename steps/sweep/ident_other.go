//go:build !linux && !darwin

package sweep

import "io/fs"

// identityOf is fi's identity: its mode, size and modification time (this
// system's stat gives no inode or change time through fs.FileInfo).
func identityOf(fi fs.FileInfo) identity {
	return identity{mode: fi.Mode(), size: fi.Size(), mtime: fi.ModTime()}
}
