package gitfiles

import (
	"encoding/binary"
	"strconv"
)

// ignorableIndexExtensions are the optional index extensions that change
// no entry: the cache tree, resolve-undo, the untracked cache, the
// fsmonitor token and the two offset tables. Any other extension (a split
// index's link, a sparse index's sdir, one custody does not know) sends the
// read to git.
var ignorableIndexExtensions = map[string]bool{"TREE": true, "REUC": true, "UNTR": true, "FSMN": true, "EOIE": true, "IEOT": true}

// indexExtensionHeaderLen is the length of an extension's header: its
// 4-byte signature and its 4-byte size.
const indexExtensionHeaderLen = 8

// parseIndexExtensions reads the extensions from off to the end of body
// (an index's, without its checksum) whose object ids are hashLen bytes
// long. It returns the cache tree (the last TREE extension, as git reads
// it) and, as later, why custody does not read the index exactly for the
// first extension that is not ignorable (the caller asks git, still
// holding it to the cache tree). An extension that runs past the end is
// ErrIndexUnreadable.
func parseIndexExtensions(body []byte, off, hashLen int) (cache cacheTree, later error, err error) {
	for off < len(body) {
		sig, data, next, err := nextIndexExtension(body, off)
		if err != nil {
			return cacheTree{}, nil, err
		}
		if !ignorableIndexExtensions[sig] && later == nil {
			later = indexUnreadable("extension %s", strconv.Quote(sig))
		}
		if sig == "TREE" {
			// Git reads the last one; one it cannot parse, it drops.
			cache = parseCacheTree(data, hashLen)
		}
		off = next
	}
	return cache, later, nil
}

// nextIndexExtension reads the extension at off in body: its signature,
// its data and where the next one starts.
func nextIndexExtension(body []byte, off int) (sig string, data []byte, next int, err error) {
	if off+indexExtensionHeaderLen > len(body) {
		return "", nil, 0, indexUnreadable("truncated extension header")
	}
	sig = string(body[off : off+4])
	size := binary.BigEndian.Uint32(body[off+4 : off+8])
	if uint64(size) > uint64(len(body)-off-indexExtensionHeaderLen) {
		return "", nil, 0, indexUnreadable("extension %s is truncated", strconv.Quote(sig))
	}
	start := off + indexExtensionHeaderLen
	return sig, body[start : start+int(size)], start + int(size), nil
}
