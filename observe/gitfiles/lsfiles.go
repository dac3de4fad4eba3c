package gitfiles

import (
	"bytes"
	"github.com/custody-sh/custody/observe/hostio"
	"strconv"
)

// IndexEntry is one entry of `git ls-files -v -s -z`.
type IndexEntry struct {
	// Tag is ls-files' status letter; lower case means assume-unchanged,
	// 'S' (or 's') means skip-worktree.
	Tag   byte
	Mode  string
	OID   string
	Stage int
	Path  string
	// Size is the file size the index's stat data records, as git keeps
	// it (the low 32 bits); 0 when unknown (ls-files does not print it).
	// Git takes a file whose size differs from it as modified without
	// reading it.
	Size uint32
}

// AssumeUnchanged reports whether the entry has the assume-unchanged bit.
func (e IndexEntry) AssumeUnchanged() bool { return e.Tag >= 'a' && e.Tag <= 'z' }

// SkipWorktree reports whether the entry has the skip-worktree bit.
func (e IndexEntry) SkipWorktree() bool { return e.Tag == 'S' || e.Tag == 's' }

// Gitlink reports whether the entry is a submodule commit.
func (e IndexEntry) Gitlink() bool { return e.Mode == "160000" }

// ParseLsFiles parses `git ls-files -v -s -z`: NUL-terminated records
// "<tag> <mode> <oid> <stage>\t<path>".
func ParseLsFiles(b []byte) ([]IndexEntry, error) {
	var out []IndexEntry
	off := 0
	for off < len(b) {
		end := bytes.IndexByte(b[off:], 0)
		if end < 0 {
			return nil, hostio.MalformedAt("ls-files", "record at byte %d is not NUL-terminated", off)
		}
		rec := b[off : off+end]
		head, path, ok := bytes.Cut(rec, []byte{'\t'})
		if !ok || len(path) == 0 {
			return nil, hostio.MalformedAt("ls-files", "record at byte %d has no path", off)
		}
		f := bytes.Split(head, []byte{' '})
		if len(f) != 4 || len(f[0]) != 1 || len(f[1]) != 6 || !hostio.IsHexOID(string(f[2])) {
			return nil, hostio.MalformedAt("ls-files", "record at byte %d is not \"<tag> <mode> <oid> <stage>\"", off)
		}
		tag := f[0][0]
		if !(tag >= 'A' && tag <= 'Z' || tag >= 'a' && tag <= 'z' || tag == '?' || tag == '!') {
			return nil, hostio.MalformedAt("ls-files", "record at byte %d has tag %q", off, tag)
		}
		for _, c := range f[1] {
			if c < '0' || c > '7' {
				return nil, hostio.MalformedAt("ls-files", "record at byte %d has mode %q", off, f[1])
			}
		}
		stage, err := strconv.Atoi(string(f[3]))
		if err != nil || stage < 0 || stage > 3 {
			return nil, hostio.MalformedAt("ls-files", "record at byte %d has stage %q", off, f[3])
		}
		out = append(out, IndexEntry{Tag: tag, Mode: string(f[1]), OID: string(f[2]), Stage: stage, Path: string(path)})
		off += end + 1
	}
	return out, nil
}
