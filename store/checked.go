package store

import "time"

// checked is a state file as this process last found it sound, walked
// whole by precheck. A later open of the same Store that finds the file
// exactly so (same device, inode, size, modification and change times,
// and the same meta transaction id) skips the walk: a command opens the
// file once per transaction, and a walk costs time in proportion to the
// file, which grows with every record ever made. A commit changes the
// file: one this Store made is looked at before the lock is let go and
// stands for the file from then on (committed); the open after any other
// write walks again, since no one can set a change time back.
type checked struct {
	id fileID
	// txid is the meta page's transaction id bbolt uses.
	txid uint64
	// freelist is set when the freelist page was checked too (an open for
	// writing checks it, a read-only one does not read it).
	freelist bool
	// walkedAt is when the walk that found the file sound began.
	walkedAt time.Time
	// committed says custody's own commit left the file so: it was
	// opened sound (walked, or trusted), written by one bbolt write
	// transaction and looked at again before bbolt's exclusive lock was
	// let go, so no write can have come between the commit and the look,
	// and the racy window does not apply. Any commit after it moves the
	// meta's transaction id.
	committed bool
	// quiet says no record of any kind carries an intent in the file, and
	// the intent index is empty: resume has nothing to do (IntentsQuiet).
	quiet bool
}

// fileID is what says a file is unchanged: a write of any byte sets its
// change time (ctime), which no one can set back.
type fileID struct {
	dev, ino, size uint64
	mtime, ctime   int64 // nanoseconds since the epoch
}

// racyWindow is how much older than the walk a file's change time must be
// for the walk's result to stand for the file: file times are taken from
// a coarse clock (a tick of a few milliseconds), so a write in the same
// tick as the walk, or just before it, could leave the same times behind
// (git's racily clean entries). A write after the walk began has a change
// time no earlier than its start less a tick.
const racyWindow = 100 * time.Millisecond

// trusts reports whether c stands for the file found now (id, txid) for
// an open that reads only (readOnly) or writes.
func (c *checked) trusts(id fileID, txid uint64, readOnly bool) bool {
	if c == nil || c.id != id || c.txid != txid || (!readOnly && !c.freelist) {
		return false
	}
	return c.committed || time.Unix(0, id.ctime).Add(racyWindow).Before(c.walkedAt)
}
