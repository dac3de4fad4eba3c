package gitfiles

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
)

// Index entry flag bits (git's read-cache.c).
const (
	indexFlagValid     = 0x8000 // assume-unchanged
	indexFlagExtended  = 0x4000
	indexFlagStageMask = 0x3000
	indexFlagNameMask  = 0x0fff
	indexExtSkip       = 0x4000 // skip-worktree, in the extended flags
	indexExtITA        = 0x2000 // intent-to-add, in the extended flags
	indexExtMask       = 0x6000 // skip-worktree | intent-to-add: all git writes
)

// indexStatLen is the length of an entry's stat data: ctime, mtime, dev,
// ino, mode, uid, gid and size.
const indexStatLen = 40

// indexEntries is what the entries part of an index gives.
type indexEntries struct {
	ents []IndexEntry
	// ita says an entry has the intent-to-add bit.
	ita bool
	// end is where the entries end and the extensions start, in the body.
	end int
	// later is why custody does not read the entries exactly although
	// reading goes on to the extensions (a split index's entry with no
	// path, whose cache tree is still read); nil when it does.
	later error
	// stats is each entry's stat data, in the order of ents.
	stats []StatData
}

// rawIndexEntry is one index entry as its bytes hold it.
type rawIndexEntry struct {
	mode, size uint32
	// oidAt is where its raw object id starts in the body.
	oidAt int
	flags uint16
	// ext is its extended flags (version 3 and up), 0 if it has none.
	ext  uint16
	path []byte
	// pathAt is where a version 2 or 3 path starts in the body.
	pathAt int
	// next is where the next entry starts.
	next int
}

// parseIndexEntries reads the h.count entries that follow the header into
// the entries `git ls-files -v -s -z` lists, in the same order and with the
// same tags. An entry custody does not read exactly (truncated, a sparse
// directory, flags it does not know) is ErrIndexUnreadable.
func parseIndexEntries(h indexHeader) (indexEntries, error) {
	out := make([]IndexEntry, 0, h.count)
	oids := make([]int, 0, h.count)
	stats := make([]StatData, 0, h.count)
	// The paths of versions 2 and 3 are slices of one copy of the file.
	var text string
	if h.version < 4 {
		text = string(h.body)
	}
	r := indexEntries{end: indexHeaderLen}
	var prev []byte
	for i := uint32(0); i < h.count; i++ {
		e, err := readIndexEntry(h, r.end, i, prev)
		if err != nil {
			return indexEntries{}, err
		}
		r.ita = r.ita || e.ext&indexExtITA != 0
		if len(e.path) == 0 && r.later == nil {
			// A split index's entry that replaces one of the shared
			// index's: read on, for the cache tree.
			r.later = indexUnreadable("entry %d has no path", i)
		}
		prev = e.path
		var p string
		if h.version == 4 {
			p = string(e.path)
		} else {
			p = text[e.pathAt : e.pathAt+len(e.path)]
		}
		out = append(out, IndexEntry{Tag: e.tag(), Mode: indexMode(e.mode), Stage: e.stage(), Path: p, Size: e.size})
		oids = append(oids, e.oidAt)
		stats = append(stats, statDataAt(h.body[e.oidAt-indexStatLen:e.oidAt]))
		r.end = e.next
	}
	setIndexOIDs(out, h.body, oids, h.hashLen)
	r.ents, r.stats = out, stats
	return r, nil
}

// readIndexEntry reads entry i, which starts at off in h.body; prev is the
// previous entry's path (a version 4 path is stored as a change of it).
func readIndexEntry(h indexHeader, off int, i uint32, prev []byte) (rawIndexEntry, error) {
	body := h.body
	start := off
	if off+indexStatLen+h.hashLen+2 > len(body) {
		return rawIndexEntry{}, indexUnreadable("entry %d is truncated", i)
	}
	var e rawIndexEntry
	e.mode = binary.BigEndian.Uint32(body[off+24 : off+28])
	e.size = binary.BigEndian.Uint32(body[off+36 : off+40])
	off += indexStatLen
	e.oidAt = off
	off += h.hashLen
	e.flags = binary.BigEndian.Uint16(body[off : off+2])
	off += 2
	if e.flags&indexFlagExtended != 0 {
		if h.version < 3 || off+2 > len(body) {
			return rawIndexEntry{}, indexUnreadable("entry %d has extended flags in version %d", i, h.version)
		}
		e.ext = binary.BigEndian.Uint16(body[off : off+2])
		off += 2
		if e.ext&^indexExtMask != 0 {
			return rawIndexEntry{}, indexUnreadable("entry %d has unknown extended flags %#x", i, e.ext)
		}
	}
	e.pathAt = off
	var err error
	if h.version == 4 {
		e.path, e.next, err = readPrefixedIndexPath(body, off, i, prev)
	} else {
		e.path, e.next, err = readPaddedIndexPath(body, off, start, i)
	}
	if err != nil {
		return rawIndexEntry{}, err
	}
	if n := int(e.flags & indexFlagNameMask); n != len(e.path) && !(n == indexFlagNameMask && len(e.path) >= n) {
		return rawIndexEntry{}, indexUnreadable("entry %d: name length %d, path of %d bytes", i, n, len(e.path))
	}
	if e.mode&0o170000 == 0o040000 {
		return rawIndexEntry{}, indexUnreadable("entry %d is a sparse directory", i)
	}
	return e, nil
}

// readPrefixedIndexPath reads the version 4 path of entry i at off: how
// many bytes to strip from the end of prev (a varint), then the bytes to
// add, NUL-terminated. It returns the path (a copy) and where the next
// entry starts.
func readPrefixedIndexPath(body []byte, off int, i uint32, prev []byte) ([]byte, int, error) {
	strip, n := gitVarint(body[off:])
	if n <= 0 || strip > uint64(len(prev)) {
		return nil, 0, indexUnreadable("entry %d has a bad path prefix", i)
	}
	off += n
	end := bytes.IndexByte(body[off:], 0)
	if end < 0 {
		return nil, 0, indexUnreadable("entry %d has no path end", i)
	}
	path := append(append([]byte(nil), prev[:len(prev)-int(strip)]...), body[off:off+end]...)
	return path, off + end + 1, nil
}

// readPaddedIndexPath reads the version 2 or 3 path of entry i, which
// starts at start, from off: the path (a slice of body), then 1 to 8 NULs
// that pad the entry to a multiple of 8 bytes. It returns the path and
// where the next entry starts.
func readPaddedIndexPath(body []byte, off, start int, i uint32) ([]byte, int, error) {
	end := bytes.IndexByte(body[off:], 0)
	if end < 0 {
		return nil, 0, indexUnreadable("entry %d has no path end", i)
	}
	path := body[off : off+end]
	next := start + (off-start+end+8)&^7
	if next > len(body) {
		return nil, 0, indexUnreadable("entry %d padding is truncated", i)
	}
	return path, next, nil
}

// stage is the entry's merge stage: 0, or 1 to 3 when unmerged.
func (e rawIndexEntry) stage() int {
	return int(e.flags&indexFlagStageMask) >> 12
}

// tag is the entry's tag as `git ls-files -v` prints it: M unmerged (stage
// above 0), S skip-worktree, H cached; lower case when assume-unchanged.
func (e rawIndexEntry) tag() byte {
	tag := byte('H')
	switch {
	case e.stage() > 0:
		tag = 'M'
	case e.ext&indexExtSkip != 0:
		tag = 'S'
	}
	if e.flags&indexFlagValid != 0 {
		tag += 'a' - 'A'
	}
	return tag
}

// setIndexOIDs sets the OID of each of ents to the hex of the raw id at the
// matching offset of oids in body: every id in one string, each entry's a
// slice of it, one allocation instead of one per entry.
func setIndexOIDs(ents []IndexEntry, body []byte, oids []int, hashLen int) {
	var all strings.Builder
	all.Grow(len(oids) * 2 * hashLen)
	var id [2 * sha256.Size]byte
	for _, at := range oids {
		all.Write(id[:hex.Encode(id[:], body[at:at+hashLen])])
	}
	hexIDs := all.String()
	for i := range ents {
		ents[i].OID = hexIDs[i*2*hashLen : (i+1)*2*hashLen]
	}
}

// indexMode is mode as ls-files prints it: six octal digits, without
// formatting for the four modes a tree holds.
func indexMode(mode uint32) string {
	switch mode {
	case 0o100644:
		return "100644"
	case 0o100755:
		return "100755"
	case 0o120000:
		return "120000"
	case 0o160000:
		return "160000"
	}
	return fmt.Sprintf("%06o", mode)
}

// gitVarint decodes git's offset varint (varint.c, not LEB128): big-endian
// 7-bit groups, each continuation adding one. It returns the value and the
// bytes read, or n <= 0 when b ends first or the value overflows.
func gitVarint(b []byte) (uint64, int) {
	if len(b) == 0 {
		return 0, 0
	}
	c := b[0]
	val := uint64(c & 127)
	n := 1
	for c&128 != 0 {
		if n >= len(b) || n > 9 {
			return 0, -1
		}
		c = b[n]
		n++
		val = ((val + 1) << 7) | uint64(c&127)
	}
	return val, n
}
