//go:build linux

package observe

import (
	"io/fs"
	"syscall"
)

// keyOf is the lstat identity of info, the cache's key.
func keyOf(info fs.FileInfo) (statKey, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return statKey{}, false
	}
	return statKey{dev: uint64(st.Dev), ino: st.Ino, size: st.Size,
		mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(), mode: st.Mode}, true
}

// kernelStamped reports whether statfs f_type names a local filesystem
// whose ctime and mtime the kernel sets itself from its own clock at every
// change, at a granularity of at most a second: ext2/3/4, XFS, Btrfs,
// tmpfs, F2FS, ZFS, bcachefs and overlayfs (whose upper layer is one of
// them). A network filesystem (stamped by a server's clock), FUSE (stamped
// by a daemon), FAT (2 s, no ctime) and anything unknown are left out:
// their trees are always read.
func kernelStamped(fsType int64) bool {
	switch fsType {
	case 0xEF53, // ext2, ext3, ext4
		0x58465342, // xfs
		0x9123683E, // btrfs
		0x01021994, // tmpfs
		0xF2F52010, // f2fs
		0x2FC12FC1, // zfs
		0xCA451A4E, // bcachefs
		0x794C7630: // overlayfs
		return true
	}
	return false
}

// stampedByKernel reports whether the tree at root lies on a filesystem
// kernelStamped accepts.
func stampedByKernel(root string) bool {
	var s syscall.Statfs_t
	if err := syscall.Statfs(root, &s); err != nil {
		return false
	}
	return kernelStamped(int64(s.Type))
}
