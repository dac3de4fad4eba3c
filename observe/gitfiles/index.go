package gitfiles

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"errors"
	"fmt"

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
	// Stats holds the stat data the index records for each of Ents, in
	// the same order: what git compares with lstat to take a file as
	// unchanged without reading it.
	Stats []StatData
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
	es, cache, err := parseIndexParts(b, format, verified)
	return IndexFile{Ents: es.ents, Ita: es.ita, Cache: cache, Stats: es.stats}, err
}

// parseIndexParts is parseIndex's work: the header (parseIndexHeader),
// then the entries (parseIndexEntries), then the extensions
// (parseIndexExtensions). An index custody does not read exactly for its
// entries or an extension (a split index, a sparse one without sparse
// directories) still gives its cache tree beside ErrIndexUnreadable: git
// ls-files gives the entries to hold it to. (A split index's cache tree is
// in its own file, not the shared one.)
func parseIndexParts(b []byte, format ObjectFormat, verified bool) (indexEntries, cacheTree, error) {
	h, err := parseIndexHeader(b, format, verified)
	if err != nil {
		return indexEntries{}, cacheTree{}, err
	}
	es, err := parseIndexEntries(h)
	if err != nil {
		return indexEntries{}, cacheTree{}, err
	}
	cache, later, err := parseIndexExtensions(h.body, es.end, h.hashLen)
	if err != nil {
		return indexEntries{}, cacheTree{}, err
	}
	if es.later != nil {
		later = es.later // the first reason, in the file's order
	}
	if later != nil {
		return indexEntries{}, cache, later
	}
	return es, cache, nil
}

// indexUnreadable is ErrIndexUnreadable, saying why (format and args as
// fmt.Sprintf's).
func indexUnreadable(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrIndexUnreadable, fmt.Sprintf(format, args...))
}
