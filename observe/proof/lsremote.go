package proof

import (
	"bytes"
	"github.com/custody-sh/custody/observe/hostio"
	"strings"
)

// RemoteRef is one line of `git ls-remote --refs`.
type RemoteRef struct {
	// Name is the full ref name, e.g. "refs/heads/main".
	Name string
	// Commit is the object id the ref points at. For an annotated tag this
	// is the tag object, not the commit it tags: --refs never prints the
	// peeled "^{}" line.
	Commit string
}

const lsRemoteWhat = "git ls-remote --refs"

// ParseLsRemote parses `<oid>\t<refname>\n` lines. Lines without a tab, or
// whose oid is not 40 or 64 lowercase hex, are an error naming the line
// number. A trailing line without newline is accepted. Peeled `^{}` lines are
// an error (--refs never prints them), and so is an empty line or a ref name
// that is empty or contains a space, tab or control character (git
// check-ref-format forbids them, so such a line was not printed by git).
// Errors wrap ErrMalformed; on error no refs are returned. Empty input is no
// refs and no error.
func ParseLsRemote(b []byte) ([]RemoteRef, error) {
	var out []RemoteRef
	for lineNo := 1; len(b) > 0; lineNo++ {
		var lineB []byte
		lineB, b, _ = bytes.Cut(b, []byte{'\n'})
		line := string(lineB)
		oid, name, ok := strings.Cut(line, "\t")
		switch {
		case !ok:
			return nil, hostio.MalformedAt(lsRemoteWhat, "line %d: no tab in %q", lineNo, line)
		case !hostio.IsHexOID(oid):
			return nil, hostio.MalformedAt(lsRemoteWhat, "line %d: %q is not a 40 or 64 digit lowercase hex object id", lineNo, oid)
		case name == "":
			return nil, hostio.MalformedAt(lsRemoteWhat, "line %d: empty ref name", lineNo)
		case strings.HasSuffix(name, "^{}"):
			return nil, hostio.MalformedAt(lsRemoteWhat, "line %d: peeled ref %q (--refs should never print it)", lineNo, name)
		case strings.IndexFunc(name, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0:
			return nil, hostio.MalformedAt(lsRemoteWhat, "line %d: ref name %q contains a space or control character", lineNo, name)
		}
		out = append(out, RemoteRef{Name: name, Commit: oid})
	}
	return out, nil
}
