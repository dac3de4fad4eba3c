package observe

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
)

const statusWhat = "git status --porcelain=v2 -z"

// ParseStatus parses `git status --porcelain=v2 -z --ignored=matching
// --untracked-files=all` output (optionally with --branch headers, which are
// skipped) into a machine.Status.
//
// Ordinary ("1") and renamed or copied ("2") entries append their path to
// Changed (a rename's original path, the next NUL-separated field, is
// consumed and not reported) and count toward Staged when their X column is
// not "."; unmerged ("u") entries go to Unmerged, "?" to Untracked and "!" to
// Ignored. Submodule entries are kept the same way. With
// --ignored=matching, an ignored directory is one "!" entry ending in "/".
// Paths are taken verbatim and may contain spaces and newlines.
//
// Every entry must be NUL-terminated and every fixed field well formed (XY,
// submodule state, octal modes, hex object ids, rename score); anything else
// (an unknown leading character, too few fields, a missing rename source, an
// empty path, truncated output) is an error naming the byte offset and
// wrapping ErrMalformed. Empty input is a zero Status and no error.
func ParseStatus(b []byte) (machine.Status, error) {
	var st machine.Status
	bad := func(off int, format string, args ...any) (machine.Status, error) {
		return machine.Status{}, hostio.MalformedAt(statusWhat, "byte %d: "+format, append([]any{off}, args...)...)
	}
	off := 0
	for off < len(b) {
		entryOff := off
		n := bytes.IndexByte(b[off:], 0)
		if n < 0 {
			return bad(off, "entry not NUL-terminated (truncated output?)")
		}
		entry := string(b[off : off+n])
		off += n + 1
		if entry == "" {
			return bad(entryOff, "empty entry")
		}

		switch entry[0] {
		case '#':
			// A header (--branch, --show-stash or one git adds later).
			continue
		case '?', '!':
			if len(entry) < 3 || entry[1] != ' ' {
				return bad(entryOff, "%q entry without a path", entry[:1])
			}
			if entry[0] == '?' {
				st.Untracked = append(st.Untracked, entry[2:])
			} else {
				st.Ignored = append(st.Ignored, entry[2:])
			}
		case '1':
			// 1 XY sub mH mI mW hH hI path
			f := strings.SplitN(entry, " ", 9)
			if why := checkStatusFields(f, 9, 3, 2); why != "" {
				return bad(entryOff, "ordinary entry: %s", why)
			}
			st.Changed = append(st.Changed, f[8])
			if f[1][0] != '.' {
				st.Staged++
			}
			noteEntry(&st, f[1], f[2], f[8])
		case '2':
			// 2 XY sub mH mI mW hH hI Xscore path \0 origPath
			f := strings.SplitN(entry, " ", 10)
			if why := checkStatusFields(f, 10, 3, 2); why != "" {
				return bad(entryOff, "rename/copy entry: %s", why)
			}
			if !statusValidScore(f[8]) {
				return bad(entryOff, "rename/copy entry: bad score %q", f[8])
			}
			origOff := off
			m := bytes.IndexByte(b[off:], 0)
			if m < 0 {
				return bad(origOff, "rename/copy entry for %q: original path missing or not NUL-terminated", f[9])
			}
			if m == 0 {
				return bad(origOff, "rename/copy entry for %q: empty original path", f[9])
			}
			off += m + 1
			st.Changed = append(st.Changed, f[9])
			if f[1][0] != '.' {
				st.Staged++
			}
			noteEntry(&st, f[1], f[2], f[9])
		case 'u':
			// u XY sub m1 m2 m3 mW h1 h2 h3 path
			f := strings.SplitN(entry, " ", 11)
			if why := checkStatusFields(f, 11, 4, 3); why != "" {
				return bad(entryOff, "unmerged entry: %s", why)
			}
			st.Unmerged = append(st.Unmerged, f[10])
		default:
			return bad(entryOff, "unknown entry kind %q", entry[:1])
		}
	}
	return st, nil
}

// checkStatusFields validates the fields of a "1", "2" or "u" entry split
// into want parts: the kind, XY, the submodule state, modes octal modes,
// hashes object ids, any further fixed field (checked by the caller), and a
// non-empty path last. It returns what is wrong, or "".
func checkStatusFields(f []string, want, modes, hashes int) string {
	if len(f) != want {
		return "too few fields"
	}
	if len(f[0]) != 1 {
		return "bad entry kind " + strconv.Quote(f[0])
	}
	if !statusValidXY(f[1]) {
		return "bad XY " + strconv.Quote(f[1])
	}
	if !statusValidSub(f[2]) {
		return "bad submodule state " + strconv.Quote(f[2])
	}
	i := 3
	for ; i < 3+modes; i++ {
		if !statusValidMode(f[i]) {
			return "bad mode " + strconv.Quote(f[i])
		}
	}
	for ; i < 3+modes+hashes; i++ {
		if !hostio.IsHexOID(f[i]) {
			return "bad object id " + strconv.Quote(f[i])
		}
	}
	if f[want-1] == "" {
		return "empty path"
	}
	return ""
}

// statusValidXY reports whether xy is a two-letter status code with "." for
// unmodified, as porcelain v2 prints it.
func statusValidXY(xy string) bool {
	if len(xy) != 2 {
		return false
	}
	for i := 0; i < 2; i++ {
		if !strings.ContainsRune(".MTADRCU", rune(xy[i])) {
			return false
		}
	}
	return true
}

// statusValidSub reports whether s is "N..." or "S<c><m><u>".
func statusValidSub(s string) bool {
	if s == "N..." {
		return true
	}
	return len(s) == 4 && s[0] == 'S' &&
		(s[1] == 'C' || s[1] == '.') &&
		(s[2] == 'M' || s[2] == '.') &&
		(s[3] == 'U' || s[3] == '.')
}

// statusValidMode reports whether s is a six-digit octal file mode.
func statusValidMode(s string) bool {
	if len(s) != 6 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '7' {
			return false
		}
	}
	return true
}

// statusValidScore reports whether s is a rename or copy score like "R100" or
// "C75".
func statusValidScore(s string) bool {
	if len(s) < 2 || len(s) > 4 || (s[0] != 'R' && s[0] != 'C') {
		return false
	}
	for i := 1; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// noteEntry records, for a changed entry with columns xy and submodule
// field sub, whether it is deleted, whether its staged content differs from
// both HEAD and the working copy, and whether it is a submodule with
// changes.
func noteEntry(st *machine.Status, xy, sub, path string) {
	if xy[0] == 'D' || xy[1] == 'D' {
		st.Deleted = append(st.Deleted, path)
	}
	if xy[0] != '.' && xy[1] != '.' && sub[0] == 'N' {
		st.StagedDiffers = append(st.StagedDiffers, path)
	}
	if sub[0] == 'S' && sub != "S..." {
		st.Submodules = append(st.Submodules, path)
	}
}
