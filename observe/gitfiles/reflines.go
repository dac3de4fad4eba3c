package gitfiles

import (
	"bytes"
	"github.com/custody-sh/custody/observe/hostio"
	"strings"
)

// LocalRef is one line of `git for-each-ref --format='%(objectname) %(refname)'`.
type LocalRef struct {
	// Object is the id the ref points at.
	Object string
	// Name is the full ref name, e.g. "refs/heads/main".
	Name string
}

const forEachRefWhat = "git for-each-ref"

// ParseRefLines parses `<oid> <refname>\n` lines as for-each-ref prints
// them with that format. A line whose oid is not 40 or 64 lowercase hex, or
// whose ref name is empty, does not start with "refs/" or holds a space or
// control character, is an error naming the line number (git never prints
// one). A trailing line without newline is accepted; empty input is no refs.
// Errors wrap ErrMalformed; on error no refs are returned.
func ParseRefLines(b []byte) ([]LocalRef, error) {
	var out []LocalRef
	for lineNo := 1; len(b) > 0; lineNo++ {
		var lineB []byte
		lineB, b, _ = bytes.Cut(b, []byte{'\n'})
		oid, name, _ := strings.Cut(string(lineB), " ")
		switch {
		case !hostio.IsHexOID(oid):
			return nil, hostio.MalformedAt(forEachRefWhat, "line %d: %q is not a 40 or 64 digit lowercase hex object id", lineNo, oid)
		case !strings.HasPrefix(name, "refs/") || name == "refs/":
			return nil, hostio.MalformedAt(forEachRefWhat, "line %d: %q is not a full ref name", lineNo, name)
		case strings.IndexFunc(name, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0:
			return nil, hostio.MalformedAt(forEachRefWhat, "line %d: ref name %q contains a space or control character", lineNo, name)
		}
		out = append(out, LocalRef{Object: oid, Name: name})
	}
	return out, nil
}

const BatchCheckWhat = "git cat-file --batch-check"

// ParseBatchCheck parses `git cat-file --batch-check='%(objectname)
// %(objecttype)'` output: one `<oid> <type>` line per object, or
// `<input> missing` (and `<input> ambiguous`) for a name that is not one.
// It returns the type of every object found, by id. Any other line is an
// error wrapping ErrMalformed naming the line number.
func ParseBatchCheck(b []byte) (map[string]string, error) {
	out := map[string]string{}
	for lineNo := 1; len(b) > 0; lineNo++ {
		var lineB []byte
		lineB, b, _ = bytes.Cut(b, []byte{'\n'})
		name, typ, ok := strings.Cut(string(lineB), " ")
		switch {
		case ok && (typ == "missing" || typ == "ambiguous"):
			continue
		case !hostio.IsHexOID(name):
			return nil, hostio.MalformedAt(BatchCheckWhat, "line %d: %q is not a 40 or 64 digit lowercase hex object id", lineNo, name)
		case typ != "commit" && typ != "tree" && typ != "blob" && typ != "tag":
			return nil, hostio.MalformedAt(BatchCheckWhat, "line %d: %q is not an object type", lineNo, typ)
		}
		out[name] = typ
	}
	return out, nil
}

const oidListWhat = "git rev-list"

// ParseOIDList parses one full object id per line (git rev-list). Any
// other line is an error wrapping ErrMalformed naming the line number; a
// trailing line without newline is accepted.
func ParseOIDList(b []byte) ([]string, error) {
	var out []string
	for lineNo := 1; len(b) > 0; lineNo++ {
		var lineB []byte
		lineB, b, _ = bytes.Cut(b, []byte{'\n'})
		if !hostio.IsHexOID(string(lineB)) {
			return nil, hostio.MalformedAt(oidListWhat, "line %d: %q is not a 40 or 64 digit lowercase hex object id", lineNo, lineB)
		}
		out = append(out, string(lineB))
	}
	return out, nil
}
