package hostio

import (
	"errors"
	"io/fs"
	"os"
	"syscall"

	"github.com/custody-sh/custody/machine"
)

// PathInfo is what lstat said about a path. Only ENOENT (and ENOTDIR on a
// component) is absence; any other error is unknown.
type PathInfo struct {
	State     machine.PathState
	Err       string
	IsDir     bool
	IsSymlink bool
	Dev, Ino  uint64
}

// Lstat observes path without following a final symlink.
func Lstat(path string) PathInfo {
	fi, err := os.Lstat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return PathInfo{State: machine.PathAbsent}
		}
		return PathInfo{State: machine.PathUnknown, Err: err.Error()}
	}
	pi := PathInfo{State: machine.PathPresent, IsDir: fi.IsDir(), IsSymlink: fi.Mode()&fs.ModeSymlink != 0}
	if dev, ino, ok := DevIno(fi); ok {
		pi.Dev, pi.Ino = dev, ino
	}
	return pi
}
