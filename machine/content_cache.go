package machine

import "time"

// HashCacheMargin is how much older than the moment hashing began a file's
// ctime and mtime must both be before its blob id may be cached under its
// lstat identity. A write that starts after hashing began stamps the file
// with the filesystem's clock, which lags the wall clock by at most one
// scheduler tick (the kernel's coarse clock) and is truncated to the
// filesystem's timestamp granularity: 1 s on the coarsest filesystem the
// cache is used on (ext3, ext4 with small inodes). Two seconds is that
// second, the tick, and a second to spare, so such a write always gets a
// stamp later than any cached one and the file a different key.
const HashCacheMargin = 2 * time.Second

// HashCacheable reports whether a file whose inode was last changed at
// ctime and whose content was last modified at mtime, hashed from a read
// that began at start, may have its blob id cached under its lstat
// identity: both stamps lie more than HashCacheMargin before start. A file
// changed since then (or stamped in the future, a clock set back) is hashed
// again every time until it has been left alone for the margin.
func HashCacheable(ctime, mtime, start time.Time) bool {
	limit := start.Add(-HashCacheMargin)
	return ctime.Before(limit) && mtime.Before(limit)
}

// HashCacheClockBack reports whether a cache written by a walk that began
// at written cannot be trusted now: the clock reads more than the margin
// earlier than then, so it was set back, and a stamp taken since may repeat
// one a cached key holds.
func HashCacheClockBack(written, now time.Time) bool {
	return now.Before(written.Add(-HashCacheMargin))
}
