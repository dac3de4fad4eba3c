package observe

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/safefile"
)

// HashCache remembers the git blob id of each regular file content
// accounting hashed, keyed by the file's lstat identity (device, inode,
// size, mtime and ctime in nanoseconds, mode), one cache file per tree
// under Dir. It only ever saves reading a file: an entry whose key does not
// match exactly, a cache file that is unreadable, corrupt, of another
// version or object format, and a tree on a filesystem whose stamps the
// kernel does not set itself all mean the file is read and hashed again.
// An entry is written only for a file whose ctime and mtime are both older
// than the walk's start by machine.HashCacheMargin, so any later change
// gives the file another key. It is never git's stat cache and never the
// index's blob id (a clean filter changes that): the id is of the raw
// bytes read. Plan may write it: it is a cache, not state.
type HashCache struct {
	// Dir holds the cache files ("" disables the cache).
	Dir string
	// Now is the clock the racy-clean guard reads (nil: time.Now).
	Now func() time.Time
	// ReadOnly uses the entries the cache files hold and writes nothing:
	// for a repository that cannot be written.
	ReadOnly bool
	// Shared keeps, for the walks of this one cache value (apply's two
	// observations of a tree), the blob id of every file a walk read
	// whose ctime and mtime were both earlier than a moment of the tree's
	// filesystem clock taken before that walk read anything
	// (ChangeMoment of Dir, stamped by a file made and removed there): a
	// later walk that finds exactly that identity reuses the id unread,
	// by the rule UnchangedSince states, where the disk cache would wait
	// for its margin. Entries live in memory only.
	Shared bool

	hashed, reused atomic.Int64
	mu             sync.Mutex
	shared         map[statKey]sharedID
}

// sharedID is a blob id a walk of a Shared cache read, and the moment it
// was read after.
type sharedID struct {
	oid   string
	since time.Time
}

// NewHashCache is the content hash cache of repo: <common>/custody/cache.
func NewHashCache(repo hostio.Repo) *HashCache {
	return &HashCache{Dir: filepath.Join(repo.StateDir(), "cache")}
}

// Hashed counts the files this cache's walks read and hashed.
func (c *HashCache) Hashed() int64 {
	if c == nil {
		return 0
	}
	return c.hashed.Load()
}

// Reused counts the files whose blob id came from the cache, unread.
func (c *HashCache) Reused() int64 {
	if c == nil {
		return 0
	}
	return c.reused.Load()
}

// hashCacheLimit bounds what custody reads of one tree's cache file (about
// 1.7 million files of a sha256 tree): a larger one is ignored.
const hashCacheLimit = 128 << 20

// hashCacheMagic starts every cache file; the version follows it.
const hashCacheMagic = "custody content hashes"

// hashCacheVersion is the format of the cache files written now.
const hashCacheVersion = 1

// statKey is the lstat identity a cached blob id is keyed by.
type statKey struct {
	dev, ino           uint64
	size, mtime, ctime int64
	mode               uint32
}

// statKeyLen is a key's encoded length.
const statKeyLen = 5*8 + 4

// treeHashes is one walk's use of a tree's cache file.
type treeHashes struct {
	c      *HashCache
	path   string
	format gitfiles.ObjectFormat
	start  time.Time
	// dev is the device of the tree's root: a file on another (a mount
	// inside the tree) is on a filesystem nobody checked, and is read.
	dev uint64
	old map[statKey]string
	// hits are the keys of old this walk used, in walk order (a slice,
	// not a set: a walk over thousands of files hits each once).
	hits []statKey
	// fresh are the ids this walk read and may cache.
	fresh map[statKey]string
	// keepOld keeps every entry of old at the next save (keepUnvisited).
	keepOld bool
	// since is the moment of the tree's filesystem clock this walk took
	// for a Shared cache (zero: none).
	since time.Time
}

// CachePath is where the cache file of the tree with admin key lives, or
// "" when there is none (no cache dir, or a key that is not one path
// component).
func (c *HashCache) CachePath(key string) string {
	if c == nil || c.Dir == "" || key == "" || key != filepath.Base(key) || key == "." || key == ".." || strings.ContainsAny(key, "/\\\x00") {
		return ""
	}
	return filepath.Join(c.Dir, key+".hashes")
}

// tree starts a walk of the tree at root (admin key key, object format
// format) against its cache file: nil (hash every file) when the cache is
// off, the key is unusable or the tree's filesystem is not one whose
// stamps the cache can rely on.
func (c *HashCache) tree(key, root string, format gitfiles.ObjectFormat) *treeHashes {
	p := c.CachePath(key)
	if p == "" || !stampedByKernel(root) {
		return nil
	}
	fi, err := os.Lstat(root)
	if err != nil {
		return nil
	}
	rk, ok := keyOf(fi)
	if !ok {
		return nil
	}
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	t := &treeHashes{c: c, path: p, format: format, start: now(), dev: rk.dev, since: c.moment(rk.dev)}
	t.old = readHashCache(p, format, t.start)
	t.hits = make([]statKey, 0, len(t.old))
	t.fresh = map[statKey]string{}
	return t
}

// cached returns the blob id the cache holds for the regular file lstat
// saw as info, when its key matches an entry exactly (counted as reused);
// false on a nil cache.
func (t *treeHashes) cached(info fs.FileInfo) (string, bool) {
	if t == nil {
		return "", false
	}
	k, ok := keyOf(info)
	if !ok || k.dev != t.dev {
		return "", false
	}
	oid, hit := t.old[k]
	if hit {
		t.hits = append(t.hits, k)
		t.c.reused.Add(1)
		return oid, true
	}
	if oid, hit = t.c.sharedID(k); hit {
		t.c.reused.Add(1)
	}
	return oid, hit
}

// file returns the blob id of the regular file at p (lstat info): the
// cached one when its key matches exactly, else read and hashed
// (HashFile), and kept for the cache when the racy-clean guard allows.
func (t *treeHashes) file(p string, info fs.FileInfo) (string, error) {
	k, ok := keyOf(info)
	ok = ok && k.dev == t.dev
	if ok {
		if oid, hit := t.old[k]; hit {
			t.hits = append(t.hits, k)
			t.c.reused.Add(1)
			return oid, nil
		}
		if oid, hit := t.c.sharedID(k); hit {
			t.c.reused.Add(1)
			return oid, nil
		}
	}
	t.c.hashed.Add(1)
	oid, after, err := hashFile(t.format, p, info, ok)
	if err != nil || !ok {
		return oid, err
	}
	if k2, ok := keyOf(after); ok && k2 == k {
		if machine.HashCacheable(time.Unix(0, k.ctime), time.Unix(0, k.mtime), t.start) {
			t.fresh[k] = oid
		}
		t.c.share(k, oid, t.since)
	}
	return oid, nil
}

// moment is, for a Shared cache, a moment of the clock that stamps the
// files of a tree on device dev, taken now: a file is made and removed in
// Dir and Dir's ctime read (ChangeMoment). Zero when the cache is not
// Shared or cannot be written, or Dir is on another device or filesystem.
func (c *HashCache) moment(dev uint64) time.Time {
	if !c.Shared || c.ReadOnly || c.Dir == "" {
		return time.Time{}
	}
	if err := os.MkdirAll(c.Dir, 0o700); err != nil {
		return time.Time{}
	}
	if fi, err := os.Lstat(c.Dir); err != nil || !fi.IsDir() {
		return time.Time{}
	}
	f, err := os.CreateTemp(c.Dir, "moment.tmp-*")
	if err != nil {
		return time.Time{}
	}
	_ = f.Close()
	if err := os.Remove(f.Name()); err != nil {
		return time.Time{}
	}
	at, ok := ChangeMoment(c.Dir, dev)
	if !ok {
		return time.Time{}
	}
	return at
}

// share keeps oid, read after since from a file of identity k, for the
// later walks of c, when both of k's stamps are earlier than since.
func (c *HashCache) share(k statKey, oid string, since time.Time) {
	if since.IsZero() || k.ctime >= since.UnixNano() || k.mtime >= since.UnixNano() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.shared == nil {
		c.shared = map[statKey]sharedID{}
	}
	c.shared[k] = sharedID{oid: oid, since: since}
}

// sharedID is the id an earlier walk of c read from a file of exactly
// identity k, while the wall clock has not gone back past the moment it
// was read after.
func (c *HashCache) sharedID(k statKey) (string, bool) {
	if !c.Shared {
		return "", false
	}
	c.mu.Lock()
	e, ok := c.shared[k]
	c.mu.Unlock()
	if !ok || time.Now().Before(e.since) {
		return "", false
	}
	return e.oid, true
}

// keepUnvisited keeps for the next save the entries read from the cache
// file that this walk did not use: a walk that ended early passed only
// part of the tree. An entry states what an inode held at its identity,
// so keeping one longer only costs space.
func (t *treeHashes) keepUnvisited() {
	if t != nil {
		t.keepOld = true
	}
}

// save writes the walk's entries (those it used and those it may cache)
// as the tree's cache file, atomically by rename, when they differ from
// what it read. Any failure leaves the cache as it was: it only costs time.
func (t *treeHashes) save() {
	if t == nil || t.c.ReadOnly || len(t.fresh) == 0 && (t.keepOld || len(t.hits) == len(t.old)) {
		return
	}
	next := make(map[statKey]string, len(t.hits)+len(t.fresh))
	if t.keepOld {
		maps.Copy(next, t.old)
	}
	for _, k := range t.hits {
		next[k] = t.old[k]
	}
	maps.Copy(next, t.fresh)
	dir := filepath.Dir(t.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return // a symlink or something else where the cache dir belongs
	}
	b := encodeHashCache(t.format, t.start, next)
	f, err := os.CreateTemp(dir, filepath.Base(t.path)+".tmp-*")
	if err != nil {
		return
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), t.path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
}

// header is the cache file's first line: magic, version, object format
// and the start of the walk that wrote it (Unix nanoseconds).
func hashCacheHeader(format gitfiles.ObjectFormat, start time.Time) string {
	return fmt.Sprintf("%s %d %s %d\n", hashCacheMagic, hashCacheVersion, format, start.UnixNano())
}

func oidLen(format gitfiles.ObjectFormat) int {
	if format == gitfiles.FormatSHA256 {
		return sha256.Size
	}
	return 20
}

// encodeHashCache is the cache file: the header line, then per entry the
// key (big-endian) and the raw blob id, then the SHA-256 of all before it.
func encodeHashCache(format gitfiles.ObjectFormat, start time.Time, ents map[statKey]string) []byte {
	var buf bytes.Buffer
	buf.WriteString(hashCacheHeader(format, start))
	var rec [statKeyLen]byte
	for k, oid := range ents {
		raw, err := hex.DecodeString(oid)
		if err != nil || len(raw) != oidLen(format) {
			continue
		}
		binary.BigEndian.PutUint64(rec[0:], k.dev)
		binary.BigEndian.PutUint64(rec[8:], k.ino)
		binary.BigEndian.PutUint64(rec[16:], uint64(k.size))
		binary.BigEndian.PutUint64(rec[24:], uint64(k.mtime))
		binary.BigEndian.PutUint64(rec[32:], uint64(k.ctime))
		binary.BigEndian.PutUint32(rec[40:], k.mode)
		buf.Write(rec[:])
		buf.Write(raw)
	}
	buf.Write(sumOf(buf.Bytes()))
	return buf.Bytes()
}

// sumOf is the checksum a cache file ends with: the SHA-256 of the rest.
func sumOf(b []byte) []byte {
	sum := sha256.Sum256(b)
	return sum[:]
}

// readHashCache returns the entries of the cache file at p, or none when
// it is missing, unreadable (a symlink, too large), not this version or
// object format, damaged (its checksum), or written by a walk that began
// later than the clock now says (the clock was set back).
func readHashCache(p string, format gitfiles.ObjectFormat, now time.Time) map[statKey]string {
	b, err := safefile.Read(p, hashCacheLimit)
	if err != nil {
		return nil
	}
	return decodeHashCache(b, format, now)
}

// decodeHashCache parses a cache file (encodeHashCache); anything but an
// intact file of this version and format is no entries at all.
func decodeHashCache(b []byte, format gitfiles.ObjectFormat, now time.Time) map[statKey]string {
	if len(b) < sha256.Size {
		return nil
	}
	body, sum := b[:len(b)-sha256.Size], b[len(b)-sha256.Size:]
	if want := sha256.Sum256(body); !bytes.Equal(want[:], sum) {
		return nil
	}
	nl := bytes.IndexByte(body, '\n')
	if nl < 0 {
		return nil
	}
	f := strings.Fields(string(body[:nl]))
	magic := strings.Fields(hashCacheMagic)
	if len(f) != len(magic)+3 || strings.Join(f[:len(magic)], " ") != hashCacheMagic ||
		f[len(magic)] != strconv.Itoa(hashCacheVersion) || f[len(magic)+1] != string(format) {
		return nil
	}
	written, err := strconv.ParseInt(f[len(magic)+2], 10, 64)
	if err != nil || machine.HashCacheClockBack(time.Unix(0, written), now) {
		return nil
	}
	n := oidLen(format)
	recs := body[nl+1:]
	if len(recs)%(statKeyLen+n) != 0 {
		return nil
	}
	count := len(recs) / (statKeyLen + n)
	out := make(map[statKey]string, count)
	// Every id in one string, each entry's a slice of it: one allocation
	// instead of one per file.
	var all strings.Builder
	all.Grow(count * 2 * n)
	var id [2 * sha256.Size]byte
	for r := recs; len(r) > 0; r = r[statKeyLen+n:] {
		all.Write(id[:hex.Encode(id[:], r[statKeyLen:statKeyLen+n])])
	}
	ids := all.String()
	for i := 0; len(recs) > 0; i++ {
		r := recs[:statKeyLen+n]
		recs = recs[statKeyLen+n:]
		k := statKey{
			dev: binary.BigEndian.Uint64(r[0:]), ino: binary.BigEndian.Uint64(r[8:]),
			size: int64(binary.BigEndian.Uint64(r[16:])), mtime: int64(binary.BigEndian.Uint64(r[24:])),
			ctime: int64(binary.BigEndian.Uint64(r[32:])), mode: binary.BigEndian.Uint32(r[40:]),
		}
		out[k] = ids[i*2*n : (i+1)*2*n]
	}
	return out
}

// ChangeMoment returns a moment of the clock that stamps the files below
// dir: the ctime of dir itself, which the kernel set from that clock at
// dir's last change (an entry renamed into it, made or removed), so it is
// no later than that clock reads now, and no one can set it to a chosen
// value. ok is false, and nothing may be trusted by it, unless dir lies on
// a filesystem StampsTrusted accepts, on device dev, and the stamp is not
// ahead of the wall clock (a clock set back since).
func ChangeMoment(dir string, dev uint64) (time.Time, bool) {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() || !stampedByKernel(dir) {
		return time.Time{}, false
	}
	k, ok := keyOf(fi)
	if !ok || k.dev != dev {
		return time.Time{}, false
	}
	at := time.Unix(0, k.ctime)
	if at.After(time.Now()) {
		return time.Time{}, false
	}
	return at, true
}

// DevOf is the device lstat info names, where the system gives one.
func DevOf(info fs.FileInfo) (uint64, bool) {
	k, ok := keyOf(info)
	return k.dev, ok
}

// UnchangedSince is git's racily-clean rule against a moment of the
// filesystem's own clock: it reports whether after, an lstat of a file,
// has exactly the identity before had (device, inode, size, mtime and
// ctime to the nanosecond, mode) and before's ctime and mtime are both
// strictly earlier than since (a ChangeMoment taken before the file was
// read; the zero time trusts nothing). A change of the file at since or
// later, by any writer, is stamped by the kernel at since or later, so it
// gives the file another ctime than one earlier than since: the bytes read
// at since or later are still its bytes. A file stamped at since itself
// may have been changed after its read within the same tick of that
// clock, and is read again; so is every file once the wall clock reads
// earlier than since (set back).
func UnchangedSince(before, after fs.FileInfo, since time.Time) bool {
	if since.IsZero() || time.Now().Before(since) {
		return false
	}
	a, ok := keyOf(before)
	b, ok2 := keyOf(after)
	limit := since.UnixNano()
	return ok && ok2 && a == b && a.ctime < limit && a.mtime < limit
}

// StampsTrusted returns whether the files below dir lie on a filesystem
// whose stamps the kernel sets itself (the only ones whose lstat identity
// the content hash cache and Unchanged rely on), and a test of whether a
// file's lstat says it is on dir's device (not on a mount inside dir).
func StampsTrusted(dir string) (bool, func(fs.FileInfo) bool) {
	fi, err := os.Lstat(dir)
	if err != nil || !stampedByKernel(dir) {
		return false, nil
	}
	root, ok := keyOf(fi)
	if !ok {
		return false, nil
	}
	return true, func(f fs.FileInfo) bool {
		k, ok := keyOf(f)
		return ok && k.dev == root.dev
	}
}

// PruneHashCache deletes the cache files of trees git no longer has an
// admin entry for (<common>/worktrees/<key>), and temporary files a killed
// writer left. It only ever deletes derived data; errors are ignored.
func PruneHashCache(repo hostio.Repo) {
	c := NewHashCache(repo)
	ents, err := os.ReadDir(c.Dir)
	if err != nil {
		return
	}
	for _, d := range ents {
		name := d.Name()
		key, ok := strings.CutSuffix(name, ".hashes")
		stale := strings.Contains(name, ".tmp-") && d.Type().IsRegular()
		if !stale && ok && d.Type().IsRegular() {
			_, err := os.Lstat(repo.AdminDir(key))
			stale = errors.Is(err, fs.ErrNotExist)
		}
		if stale {
			_ = os.Remove(filepath.Join(c.Dir, name))
		}
	}
}
