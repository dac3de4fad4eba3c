package proof

import (
	"bytes"
	"strings"
)

// refsOnly returns the lines of `git ls-remote --symref` output that `git
// ls-remote --refs` prints of the same advertisement: an object id and a
// ref under refs/ whose name git's check-ref-format takes (connect.c,
// check_ref with REF_NORMAL). Symref lines ("ref: <target>\t<name>"), HEAD
// and other names outside refs/, peeled tags ("^{}") and names git refuses
// are dropped; any other line is kept, so ParseLsRemote still refuses what
// git would never print. One ls-remote thus answers both what the remote
// holds and where its HEAD points (symrefHead).
func refsOnly(b []byte) []byte {
	var out []byte
	for len(b) > 0 {
		var line []byte
		line, b, _ = bytes.Cut(b, []byte{'\n'})
		if bytes.HasPrefix(line, []byte("ref: ")) {
			continue
		}
		if oid, name, ok := bytes.Cut(line, []byte{'\t'}); ok && len(oid) > 0 && len(name) > 0 {
			if rest, under := strings.CutPrefix(string(name), "refs/"); !under || !refnameOK(rest) {
				continue
			}
		}
		out = append(append(out, line...), '\n')
	}
	return out
}

// refnameOK is git's check_refname_format(name, 0) (refs.c): at least two
// components, none empty, none starting with "." or ending with ".lock",
// no "..", no "@{", no control character, space, DEL or any of ~^:?*[\,
// not ending with "." and not "@" alone.
func refnameOK(name string) bool {
	if name == "@" {
		return false
	}
	components := strings.Split(name, "/")
	if len(components) < 2 || strings.HasSuffix(name, ".") {
		return false
	}
	for _, c := range components {
		if c == "" || c[0] == '.' || strings.HasSuffix(c, ".lock") || strings.Contains(c, "..") || strings.Contains(c, "@{") {
			return false
		}
		for i := 0; i < len(c); i++ {
			switch ch := c[i]; {
			case ch < 0x20 || ch == 0x7f, strings.IndexByte(" ~^:?*[\\", ch) >= 0:
				return false
			}
		}
	}
	return true
}
