package gitfiles

import (
	"bytes"
	"github.com/custody-sh/custody/observe/hostio"
	"strings"
)

// TreeEntry is one entry of `git ls-tree -r -z`: a blob, a symlink or a
// gitlink, with its path relative to the tree listed.
type TreeEntry struct {
	// Mode is git's mode: "100644", "100755", "120000" or "160000".
	Mode string
	// OID is the blob id, or the commit id of a gitlink.
	OID  string
	Path string
}

const lsTreeWhat = "git ls-tree -r -z"

// lsTreeTypes is the object type git prints for each mode ls-tree -r lists.
var lsTreeTypes = map[string]string{"100644": "blob", "100755": "blob", "120000": "blob", "160000": "commit"}

// ParseLsTree parses `<mode> <type> <oid>\t<path>\0` records. A mode git
// does not list under -r, a type that does not fit the mode, an oid that
// is not 40 or 64 lowercase hex, or an empty path is an error wrapping
// ErrMalformed naming the record number; so is output that does not end
// with NUL. Empty input is no entries.
func ParseLsTree(b []byte) ([]TreeEntry, error) {
	if len(b) > 0 && b[len(b)-1] != 0 {
		return nil, hostio.MalformedAt(lsTreeWhat, "output does not end with NUL")
	}
	var out []TreeEntry
	for n := 1; len(b) > 0; n++ {
		var rec []byte
		rec, b, _ = bytes.Cut(b, []byte{0})
		meta, p, ok := bytes.Cut(rec, []byte{'\t'})
		f := strings.Split(string(meta), " ")
		switch {
		case !ok || len(f) != 3:
			return nil, hostio.MalformedAt(lsTreeWhat, "record %d: %q is not <mode> <type> <oid>\\t<path>", n, rec)
		case lsTreeTypes[f[0]] == "":
			return nil, hostio.MalformedAt(lsTreeWhat, "record %d: unknown mode %q", n, f[0])
		case lsTreeTypes[f[0]] != f[1]:
			return nil, hostio.MalformedAt(lsTreeWhat, "record %d: a %s with mode %s", n, f[1], f[0])
		case !hostio.IsHexOID(f[2]):
			return nil, hostio.MalformedAt(lsTreeWhat, "record %d: %q is not a 40 or 64 digit lowercase hex object id", n, f[2])
		case len(p) == 0:
			return nil, hostio.MalformedAt(lsTreeWhat, "record %d: empty path", n)
		}
		out = append(out, TreeEntry{Mode: f[0], OID: f[2], Path: string(p)})
	}
	return out, nil
}
