package gitfiles

import (
	"bytes"
	"compress/zlib"
	"encoding/hex"
	"io"
	"path/filepath"
	"strconv"

	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/safefile"
)

// looseTreeLimit bounds what custody reads of one loose tree object; a
// larger one is left to git status.
const looseTreeLimit = 4 << 20

// looseTreeChecks bounds how many trees plan's fast path reads itself for
// one worktree (headTreesReadable); a tree whose cache tree covers fewer of
// its directories takes git status.
const looseTreeChecks = 64

// looseTreeIntact reports whether objects (a repository's object
// directory) holds the tree id, of format, as a loose object git can read:
// it inflates to a tree object of the length its header says whose bytes
// hash to id. Anything else — packed, missing, empty, corrupt, another
// type — is false, and git is asked instead.
func looseTreeIntact(objects string, format ObjectFormat, id string) bool {
	if FormatOf(id) != format || !hostio.IsHexOID(id) {
		return false
	}
	b, err := safefile.Read(filepath.Join(objects, id[:2], id[2:]), looseTreeLimit)
	if err != nil {
		return false
	}
	zr, err := zlib.NewReader(bytes.NewReader(b))
	if err != nil {
		return false
	}
	defer zr.Close()
	raw, err := io.ReadAll(io.LimitReader(zr, looseTreeLimit+1))
	if err != nil || len(raw) > looseTreeLimit {
		return false
	}
	header, body, ok := bytes.Cut(raw, []byte{0})
	size, err := strconv.Atoi(string(bytes.TrimPrefix(header, []byte("tree "))))
	if !ok || !bytes.HasPrefix(header, []byte("tree ")) || err != nil || size != len(body) {
		return false
	}
	h := NewHash(format)
	h.Write(raw)
	return hex.EncodeToString(h.Sum(nil)) == id
}

// HeadTreesReadable reports whether git, comparing an index whose entries
// make dirs (indexTrees) with a HEAD whose tree they make, sees the entries
// as they are and can read every tree object it needs: the cache tree c
// tells no lie (no stale node, none git would read otherwise than custody),
// and every directory git does not skip by it (cacheTree.reads) is a tree
// intact in objects. The root is not among them: plan's question for
// HEAD's tree showed git has it.
func HeadTreesReadable(objects string, format ObjectFormat, c cacheTree, dirs map[string]dirTree) bool {
	if c.present && !c.regular {
		return false
	}
	chk := c.check(dirs)
	if len(chk.stale) > 0 {
		return false
	}
	if chk.complete {
		return true
	}
	reads := c.reads(dirs)
	if len(reads) > looseTreeChecks {
		return false
	}
	for _, d := range reads {
		if !looseTreeIntact(objects, format, dirs[d].id) {
			return false
		}
	}
	return true
}

// inflateObject inflates a loose object from r: its whole raw form
// ("<typ> <size>\0" and the body), when it is of type typ, its header's
// size is the body's length and it is at most limit bytes; false
// otherwise.
func inflateObject(r io.Reader, typ string, limit int) ([]byte, bool) {
	zr, err := zlib.NewReader(io.LimitReader(r, int64(limit)+64))
	if err != nil {
		return nil, false
	}
	defer zr.Close()
	raw, err := io.ReadAll(io.LimitReader(zr, int64(limit)+1))
	if err != nil || len(raw) > limit {
		return nil, false
	}
	header, body, ok := bytes.Cut(raw, []byte{0})
	size, err := strconv.Atoi(string(bytes.TrimPrefix(header, []byte(typ+" "))))
	if !ok || !bytes.HasPrefix(header, []byte(typ+" ")) || err != nil || size != len(body) {
		return nil, false
	}
	return raw, true
}
