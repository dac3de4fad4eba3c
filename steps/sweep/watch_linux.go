package sweep

import (
	"encoding/binary"
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// watchMask is what makes a watched directory changed: an entry in it
// written, truncated, closed after writing, opened as a file (a mapping
// that writes starts with an open), its attributes or link count changed,
// created, or moved in or out; the directory itself moved or deleted. A
// directory opened (read) and an entry deleted change nothing a deletion
// could lose, and are not asked for or not counted.
const watchMask = unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_CLOSE_WRITE | unix.IN_OPEN |
	unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_CREATE | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR

// maxWatches is the most directories one watcher watches: inotify's
// watches are counted per user, and a sweep must not take them all from
// the person's editor or file manager while it runs.
const maxWatches = 8192

// drainEvery is how many files the deletion takes between reads of the
// watcher's events, within one directory (each directory's first file is
// preceded by a read).
const drainEvery = 16

// localFileSystem reports whether every change to a file of the file
// system of type typ (statfs's f_type) reaches inotify, the kernel making
// them all: ext2/3/4, xfs, btrfs and tmpfs. Not a network or FUSE file
// system, whose files another machine or process changes unseen, nor an
// overlay, whose lower layers change unseen.
func localFileSystem(typ int64) bool {
	switch typ {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC, unix.TMPFS_MAGIC:
		return true
	}
	return false
}

// watcher tells, for the directories the walk watched, whether any entry
// in them changed since the watch was set (inotify(7)): the walk sets the
// watch on each directory of untracked output before it statted anything
// in it, so a file in a watched, unchanged directory is still what the
// walk saw, without a stat of its own. A nil watcher watches nothing.
//
// What inotify does not see: a write through a shared mapping made before
// the watch by a process that closed the file since (a mapping made after
// opens the file, and a process holding it open is in the tree by the
// in-use scan), and a write to a file with more than one link through
// another name; the deletion stats every file with more than one link.
type watcher struct {
	fd      int
	left    int
	touched map[int32]bool
	all     bool // the queue overflowed, or could not be read
	since   int  // files taken since the last read
	last    int32
	buf     []byte
}

// newWatcher is a watcher, or nil when inotify cannot be used here.
func newWatcher() *watcher {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil
	}
	return &watcher{fd: fd, left: maxWatches, touched: map[int32]bool{}, buf: make([]byte, 64<<10)}
}

// watch sets a watch on the open directory dir and returns its descriptor
// (0: not watched: none left, not a local file system, or it failed).
func (w *watcher) watch(dir *os.File) int32 {
	if w == nil || w.left == 0 || w.all {
		return 0
	}
	conn, err := dir.SyscallConn()
	if err != nil {
		return 0
	}
	var wd int
	cerr := conn.Control(func(fd uintptr) {
		var st unix.Statfs_t
		if unix.Fstatfs(int(fd), &st) != nil || !localFileSystem(int64(st.Type)) {
			return
		}
		// The open directory itself, by its descriptor's link in
		// /proc: not a path that may lead elsewhere by now.
		if d, err := unix.InotifyAddWatch(w.fd, "/proc/self/fd/"+strconv.Itoa(int(fd)), watchMask); err == nil {
			wd = d
		}
	})
	if cerr != nil || wd <= 0 {
		return 0
	}
	w.left--
	return int32(wd)
}

// unchanged reports whether the directory watched as wd saw no change
// since its watch was set, reading the events that came (at the first
// file of a directory and every drainEvery files after).
func (w *watcher) unchanged(wd int32) bool {
	if w == nil || wd <= 0 {
		return false
	}
	if wd != w.last || w.since >= drainEvery {
		w.drain()
		w.last, w.since = wd, 0
	}
	w.since++
	return !w.all && !w.touched[wd]
}

// drain reads every event queued.
func (w *watcher) drain() {
	for !w.all {
		n, err := unix.Read(w.fd, w.buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if errors.Is(err, unix.EAGAIN) {
			return
		}
		if err != nil || n <= 0 {
			w.all = true
			return
		}
		w.all = !addEvents(w.buf[:n], w.touched) || w.all
	}
}

// addEvents marks in touched the watch of every event in b (inotify
// records: watch, mask, cookie, name length, name) that changes what a
// directory holds. It reports false when the queue overflowed or a
// record cannot be read: then any directory may have changed.
func addEvents(b []byte, touched map[int32]bool) bool {
	for len(b) > 0 {
		if len(b) < unix.SizeofInotifyEvent {
			return false
		}
		wd := int32(binary.NativeEndian.Uint32(b[0:4]))
		mask := binary.NativeEndian.Uint32(b[4:8])
		size := unix.SizeofInotifyEvent + int(binary.NativeEndian.Uint32(b[12:16]))
		if size > len(b) {
			return false
		}
		b = b[size:]
		switch {
		case mask&unix.IN_Q_OVERFLOW != 0:
			return false
		case mask&unix.IN_ISDIR != 0 && mask&^(unix.IN_ISDIR|unix.IN_OPEN) == 0:
			// A directory in it was opened: listed, not changed.
		default:
			touched[wd] = true
		}
	}
	return true
}

// close releases the watcher and every watch it set.
func (w *watcher) close() {
	if w != nil {
		unix.Close(w.fd)
	}
}
