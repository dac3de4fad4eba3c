package gitfiles

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
)

// indexHeaderLen is the length of an index's header: the signature
// "DIRC", the version and the entry count, 4 bytes each.
const indexHeaderLen = 12

// indexHeader is what an index file's header and trailing checksum say.
type indexHeader struct {
	// hashLen is the length of one raw object id in the index's format.
	hashLen int
	// version is the index format version: 2, 3 or 4.
	version uint32
	// count is how many entries the header announces.
	count uint32
	// body is the file without its trailing checksum; the entries start
	// at indexHeaderLen.
	body []byte
}

// parseIndexHeader reads the header of the index b whose object ids are in
// format and checks its trailing checksum (not again when verified: the
// caller has). A format, signature, checksum or version custody does not
// read, or more entries than bytes, is ErrIndexUnreadable.
func parseIndexHeader(b []byte, format ObjectFormat, verified bool) (indexHeader, error) {
	var hashLen int
	switch format {
	case FormatSHA1:
		hashLen = sha1.Size
	case FormatSHA256:
		hashLen = sha256.Size
	default:
		return indexHeader{}, indexUnreadable("object format %q", format)
	}
	if len(b) < indexHeaderLen+hashLen || string(b[:4]) != "DIRC" {
		return indexHeader{}, indexUnreadable("no index header")
	}
	body, sum := b[:len(b)-hashLen], b[len(b)-hashLen:]
	if !verified && !bytes.Equal(indexChecksum(body, format), sum) {
		return indexHeader{}, indexUnreadable("checksum mismatch (or index.skipHash)")
	}
	version := binary.BigEndian.Uint32(b[4:8])
	if version < 2 || version > 4 {
		return indexHeader{}, indexUnreadable("version %d", version)
	}
	count := binary.BigEndian.Uint32(b[8:12])
	if uint64(count) > uint64(len(body)) {
		return indexHeader{}, indexUnreadable("%d entries in %d bytes", count, len(body))
	}
	return indexHeader{hashLen: hashLen, version: version, count: count, body: body}, nil
}

// indexChecksum is the checksum of body in format (SHA-256 or SHA-1), as
// an index's trailer holds it.
func indexChecksum(body []byte, format ObjectFormat) []byte {
	if format == FormatSHA256 {
		s := sha256.Sum256(body)
		return s[:]
	}
	s := sha1.Sum(body)
	return s[:]
}
