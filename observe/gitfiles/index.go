package gitfiles

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/custody-sh/custody/observe/safefile"
)

// ErrIndexUnreadable is returned by ParseIndex for an index custody does
// not read itself exactly (a split or sparse index, an extension it does
// not know, a checksum that does not match, another version): the caller
// asks git (`git ls-files`) instead, whose answer or error is used.
var ErrIndexUnreadable = errors.New("the index is not one custody reads exactly")

// indexFileLimit bounds what custody reads of an index file itself; a
// larger one is left to git.
const indexFileLimit = 256 << 20

// ignorableIndexExtensions are the optional index extensions that change
// no entry: the cache tree, resolve-undo, the untracked cache, the
// fsmonitor token and the two offset tables. Any other extension (a split
// index's link, a sparse index's sdir, one custody does not know) sends the
// read to git.
var ignorableIndexExtensions = map[string]bool{"TREE": true, "REUC": true, "UNTR": true, "FSMN": true, "EOIE": true, "IEOT": true}

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

// ReadIndexFile reads the index file at p (its object format told by its
// checksum) with ParseIndex. Any failure to read it, a missing file
// included, is errIndexUnreadable: git is asked instead. So is an index
// with a skip-worktree entry: in a sparse checkout git clears that bit, as
// it reads, for every entry whose file is present on disk, and what git
// says of the tree is what counts.
func ReadIndexFile(p string) ([]IndexEntry, error) {
	idx, err := ReadIndexFileWhole(p)
	return idx.Ents, err
}

// IndexFile is an index file as custody read it: its entries, whether one
// has the intent-to-add bit (`git add -N`, which ls-files does not show),
// and its cache tree.
type IndexFile struct {
	Ents []IndexEntry
	Ita  bool
	// Cache is the cache tree (the TREE extension) as git reads it: the
	// zero value when the index has none, or one git would not read. An
	// index whose entries custody does not read (a split index) may still
	// have it.
	Cache cacheTree
}

// ReadIndexFileWhole is ReadIndexFile also giving the intent-to-add bit and the
// Cache tree. The file is read once and its checksum computed once; one
// without a checksum (index.skipHash) is read as git reads it
// (parseSkipHash).
func ReadIndexFileWhole(p string) (IndexFile, error) {
	b, err := safefile.Read(p, indexFileLimit)
	if err != nil {
		return IndexFile{}, fmt.Errorf("%w: %v", ErrIndexUnreadable, err)
	}
	var idx IndexFile
	if format := indexFormat(b); format != "" {
		idx, err = parseIndex(b, format, true)
	} else if idx, format = parseSkipHash(b); format == "" {
		idx, err = parseIndex(b, format, false) // the error says why not
	}
	if err != nil {
		return IndexFile{Cache: idx.Cache}, err
	}
	for _, e := range idx.Ents {
		if e.SkipWorktree() {
			return IndexFile{Cache: idx.Cache}, fmt.Errorf("%w: skip-worktree entries (%s)", ErrIndexUnreadable, e.Path)
		}
	}
	return idx, nil
}

// parseSkipHash reads an index written with index.skipHash, whose
// checksum is all zeros (git does not verify an index's checksum as it
// reads): in the one object format whose trailer is zeros and in which
// the index parses exactly. Anything else is format "": the index is not
// one custody reads.
func parseSkipHash(b []byte) (IndexFile, ObjectFormat) {
	var idx IndexFile
	var format ObjectFormat
	for _, f := range []ObjectFormat{FormatSHA1, FormatSHA256} {
		n := sha1.Size
		if f == FormatSHA256 {
			n = sha256.Size
		}
		if len(b) < n || !bytes.Equal(b[len(b)-n:], make([]byte, n)) {
			continue
		}
		got, err := parseIndex(b, f, true)
		if err != nil {
			continue
		}
		if format != "" {
			return IndexFile{}, "" // it parses in both: custody cannot tell
		}
		idx, format = got, f
	}
	return idx, format
}

// indexFormat is the object format whose checksum ends b ("" if none).
func indexFormat(b []byte) ObjectFormat {
	if n := len(b) - sha1.Size; n >= 0 {
		if s := sha1.Sum(b[:n]); bytes.Equal(s[:], b[n:]) {
			return FormatSHA1
		}
	}
	if n := len(b) - sha256.Size; n >= 0 {
		if s := sha256.Sum256(b[:n]); bytes.Equal(s[:], b[n:]) {
			return FormatSHA256
		}
	}
	return ""
}

// ParseIndex parses a git index file (versions 2, 3 and 4) whose object ids
// are in format into the entries `git ls-files -v -s -z` lists, in the same
// order and with the same tags: H cached, S skip-worktree, M unmerged
// (stage above 0), lower case when assume-unchanged. Only what an exact
// answer needs is read; an index it cannot vouch for is errIndexUnreadable.
func ParseIndex(b []byte, format ObjectFormat) ([]IndexEntry, error) {
	idx, err := parseIndex(b, format, false)
	return idx.Ents, err
}

// parseIndex is ParseIndex that also says whether an entry has the
// intent-to-add bit and reads the cache tree; with verified, the caller has
// checked the trailing checksum in format already (indexFormat), and it is
// not computed again.
func parseIndex(b []byte, format ObjectFormat, verified bool) (IndexFile, error) {
	ents, ita, cache, err := parseIndexParts(b, format, verified)
	return IndexFile{Ents: ents, Ita: ita, Cache: cache}, err
}

// parseIndexParts is parseIndex's work. An index custody does not read
// exactly for its entries or an extension (a split index, a sparse one
// without sparse directories) still gives its cache tree beside
// ErrIndexUnreadable: git ls-files gives the entries to hold it to. (A
// split index's cache tree is in its own file, not the shared one.)
func parseIndexParts(b []byte, format ObjectFormat, verified bool) ([]IndexEntry, bool, cacheTree, error) {
	var cache cacheTree
	unreadable := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrIndexUnreadable, fmt.Sprintf(format, args...))
	}
	var hashLen int
	switch format {
	case FormatSHA1:
		hashLen = sha1.Size
	case FormatSHA256:
		hashLen = sha256.Size
	default:
		return nil, false, cacheTree{}, unreadable("object format %q", format)
	}
	if len(b) < 12+hashLen || string(b[:4]) != "DIRC" {
		return nil, false, cacheTree{}, unreadable("no index header")
	}
	body, sum := b[:len(b)-hashLen], b[len(b)-hashLen:]
	if !verified {
		var got []byte
		if format == FormatSHA256 {
			s := sha256.Sum256(body)
			got = s[:]
		} else {
			s := sha1.Sum(body)
			got = s[:]
		}
		if !bytes.Equal(got, sum) {
			return nil, false, cacheTree{}, unreadable("checksum mismatch (or index.skipHash)")
		}
	}
	version := binary.BigEndian.Uint32(b[4:8])
	if version < 2 || version > 4 {
		return nil, false, cacheTree{}, unreadable("version %d", version)
	}
	count := binary.BigEndian.Uint32(b[8:12])
	if uint64(count) > uint64(len(body)) {
		return nil, false, cacheTree{}, unreadable("%d entries in %d bytes", count, len(body))
	}
	out := make([]IndexEntry, 0, count)
	oids := make([]int, 0, count)
	// The paths of versions 2 and 3 are slices of one copy of the file.
	var text string
	if version < 4 {
		text = string(body)
	}
	ita := false
	// later is why custody does not read the index exactly, found where
	// reading goes on to the extensions (a split index's, whose cache
	// tree is still read).
	var later error
	off := 12
	var prev []byte
	const statLen = 40 // ctime, mtime, dev, ino, mode, uid, gid, size
	for i := uint32(0); i < count; i++ {
		start := off
		if off+statLen+hashLen+2 > len(body) {
			return nil, false, cacheTree{}, unreadable("entry %d is truncated", i)
		}
		mode := binary.BigEndian.Uint32(body[off+24 : off+28])
		size := binary.BigEndian.Uint32(body[off+36 : off+40])
		off += statLen
		oidAt := off
		off += hashLen
		flags := binary.BigEndian.Uint16(body[off : off+2])
		off += 2
		var ext uint16
		if flags&indexFlagExtended != 0 {
			if version < 3 || off+2 > len(body) {
				return nil, false, cacheTree{}, unreadable("entry %d has extended flags in version %d", i, version)
			}
			ext = binary.BigEndian.Uint16(body[off : off+2])
			off += 2
			if ext&^indexExtMask != 0 {
				return nil, false, cacheTree{}, unreadable("entry %d has unknown extended flags %#x", i, ext)
			}
			ita = ita || ext&indexExtITA != 0
		}
		var path []byte
		pathAt := off // where a version 2 or 3 path starts
		if version == 4 {
			strip, n := gitVarint(body[off:])
			if n <= 0 || strip > uint64(len(prev)) {
				return nil, false, cacheTree{}, unreadable("entry %d has a bad path prefix", i)
			}
			off += n
			end := bytes.IndexByte(body[off:], 0)
			if end < 0 {
				return nil, false, cacheTree{}, unreadable("entry %d has no path end", i)
			}
			path = append(append([]byte(nil), prev[:len(prev)-int(strip)]...), body[off:off+end]...)
			off += end + 1
		} else {
			end := bytes.IndexByte(body[off:], 0)
			if end < 0 {
				return nil, false, cacheTree{}, unreadable("entry %d has no path end", i)
			}
			path = body[off : off+end]
			// 1 to 8 NULs pad the entry to a multiple of 8 bytes.
			off = start + (off-start+end+8)&^7
			if off > len(body) {
				return nil, false, cacheTree{}, unreadable("entry %d padding is truncated", i)
			}
		}
		if n := int(flags & indexFlagNameMask); n != len(path) && !(n == indexFlagNameMask && len(path) >= n) {
			return nil, false, cacheTree{}, unreadable("entry %d: name length %d, path of %d bytes", i, n, len(path))
		}
		if mode&0o170000 == 0o040000 {
			return nil, false, cacheTree{}, unreadable("entry %d is a sparse directory", i)
		}
		if len(path) == 0 && later == nil {
			// A split index's entry that replaces one of the shared
			// index's: read on, for the cache tree.
			later = unreadable("entry %d has no path", i)
		}
		prev = path
		stage := int(flags&indexFlagStageMask) >> 12
		tag := byte('H')
		switch {
		case stage > 0:
			tag = 'M'
		case ext&indexExtSkip != 0:
			tag = 'S'
		}
		if flags&indexFlagValid != 0 {
			tag += 'a' - 'A'
		}
		var p string
		if version == 4 {
			p = string(path)
		} else {
			p = text[pathAt : pathAt+len(path)]
		}
		out = append(out, IndexEntry{Tag: tag, Mode: indexMode(mode), Stage: stage, Path: p, Size: size})
		oids = append(oids, oidAt)
	}
	// Every id in one string, each entry's a slice of it: one allocation
	// instead of one per entry.
	var all strings.Builder
	all.Grow(len(oids) * 2 * hashLen)
	var id [2 * sha256.Size]byte
	for _, at := range oids {
		all.Write(id[:hex.Encode(id[:], body[at:at+hashLen])])
	}
	hexIDs := all.String()
	for i := range out {
		out[i].OID = hexIDs[i*2*hashLen : (i+1)*2*hashLen]
	}
	for off < len(body) {
		if off+8 > len(body) {
			return nil, false, cacheTree{}, unreadable("truncated extension header")
		}
		sig := string(body[off : off+4])
		size := binary.BigEndian.Uint32(body[off+4 : off+8])
		if uint64(size) > uint64(len(body)-off-8) {
			return nil, false, cacheTree{}, unreadable("extension %s is truncated", strconv.Quote(sig))
		}
		if !ignorableIndexExtensions[sig] && later == nil {
			later = unreadable("extension %s", strconv.Quote(sig))
		}
		if sig == "TREE" {
			// Git reads the last one; one it cannot parse, it drops.
			cache = parseCacheTree(body[off+8:off+8+int(size)], hashLen)
		}
		off += 8 + int(size)
	}
	if later != nil {
		return nil, false, cache, later
	}
	return out, ita, cache, nil
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
