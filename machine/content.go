package machine

import (
	"path"
	"slices"
	"strings"
)

// EntryKind is what lstat found at a path inside a tree.
type EntryKind string

// The kinds of filesystem entry content accounting distinguishes. Anything
// that is not a regular file, a symbolic link or a directory (a FIFO, a
// socket, a device) is EntryOther and never accounted for.
const (
	EntryFile    EntryKind = "file"
	EntrySymlink EntryKind = "symlink"
	EntryDir     EntryKind = "dir"
	EntryOther   EntryKind = "other"
)

// DiskEntry is one entry found by walking a tree on the filesystem (lstat,
// symlinks not followed). Path is slash-separated and relative to the
// tree's root. OID is the git blob id of a regular file's raw bytes or a
// symlink's target, hashed in-process; Err says why an entry could not be
// read (then OID is empty).
type DiskEntry struct {
	Path string
	Kind EntryKind
	// Exec is the owner-executable bit of a regular file, the only mode bit
	// git records.
	Exec bool
	OID  string
	Err  string
}

// TrackedEntry is one path HEAD holds, with the git mode ("100644",
// "100755", "120000", "160000") and blob or commit id.
type TrackedEntry struct {
	Path string
	Mode string
	OID  string
}

// Unaccounted is one entry on disk that HEAD does not hold byte for byte:
// removing the tree would lose it. Code is CodeUntrackedContent,
// CodeContentDiffers or CodeContentUnreadable; Path is relative to the tree.
type Unaccounted struct {
	Code   Code   `json:"code"`
	Path   string `json:"path"`
	Detail string `json:"detail,omitempty"`
}

// AccountContent decides, for every entry found on disk, whether HEAD holds
// it exactly: a regular file or symlink must be tracked with the same blob
// id (raw bytes, no filter or eol conversion) and mode; a directory must be
// a tracked gitlink, a prefix of a tracked path, or hold entries (which are
// accounted for themselves); anything else is unaccounted. skip lists paths (or directory prefixes ending in "/")
// another check already reports, which are not reported again. The result
// is sorted by path. It is pure.
func AccountContent(disk []DiskEntry, tracked []TrackedEntry, skip []string) []Unaccounted {
	byPath := make(map[string]TrackedEntry, len(tracked))
	dirs := map[string]bool{}
	for _, t := range tracked {
		byPath[t.Path] = t
		for d := path.Dir(t.Path); d != "." && d != "/" && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	skipped := func(p string) bool {
		for _, s := range skip {
			if s == p || strings.HasSuffix(s, "/") && (strings.HasPrefix(p, s) || p+"/" == s) {
				return true
			}
		}
		return false
	}
	nonEmpty := map[string]bool{}
	for _, d := range disk {
		nonEmpty[path.Dir(d.Path)] = true
	}
	var out []Unaccounted
	add := func(code Code, p, detail string) {
		if !skipped(p) {
			out = append(out, Unaccounted{Code: code, Path: p, Detail: detail})
		}
	}
	for _, d := range disk {
		t, ok := byPath[d.Path]
		switch {
		case d.Err != "":
			add(CodeContentUnreadable, d.Path, d.Err)
		case d.Kind == EntryOther:
			add(CodeUntrackedContent, d.Path, "a special file (not a regular file, symlink or directory)")
		case d.Kind == EntryDir:
			if !dirs[d.Path] && !nonEmpty[d.Path] && !(ok && t.Mode == "160000") {
				add(CodeUntrackedContent, d.Path+"/", "an empty directory HEAD does not track")
			}
		case !ok:
			add(CodeUntrackedContent, d.Path, "not tracked in HEAD")
		default:
			if why := differs(d, t); why != "" {
				add(CodeContentDiffers, d.Path, why)
			}
		}
	}
	slices.SortFunc(out, func(a, b Unaccounted) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// differs says how a file or symlink on disk differs from HEAD's entry for
// the same path, or "".
func differs(d DiskEntry, t TrackedEntry) string {
	want := "100644"
	switch {
	case d.Kind == EntrySymlink:
		want = "120000"
	case d.Exec:
		want = "100755"
	}
	if t.Mode != want {
		return "mode " + want + " on disk, " + t.Mode + " in HEAD"
	}
	if d.OID != t.OID {
		return "bytes on disk (blob " + Abbrev(d.OID, ShortCommit) + ") differ from HEAD (blob " + Abbrev(t.OID, ShortCommit) + ")"
	}
	return ""
}
