package gitfiles

import (
	"bytes"
	"github.com/custody-sh/custody/observe/hostio"
	"strings"
)

// WorktreeEntry is one entry of `git worktree list --porcelain -z`.
type WorktreeEntry struct {
	// Path is the worktree's absolute path exactly as git printed it (with
	// -z nothing is quoted: spaces, newlines and non-ASCII are kept as is).
	Path string
	// Head is the full object id HEAD resolves to; "" for a bare entry. An
	// unborn branch is reported by git as the all-zero id.
	Head string
	// Branch is the full ref name HEAD points at, e.g. "refs/heads/x"; ""
	// when detached or bare.
	Branch string
	// Bare is true for the entry of a bare repository.
	Bare bool
	// Detached is true when HEAD is detached.
	Detached bool
	// Locked is true when the worktree is locked, with or without a reason.
	Locked bool
	// LockReason is the lock reason, "" when none was given.
	LockReason string
	// Prunable is true when `git worktree prune` would remove the entry.
	Prunable bool
	// PrunableReason is why git considers the entry prunable.
	PrunableReason string
}

// worktreeAttr records which attributes a record has already shown, to
// reject duplicates.
type worktreeAttr uint8

const (
	wtHead worktreeAttr = 1 << iota
	wtBranch
	wtBare
	wtDetached
	wtLocked
	wtPrunable
)

const worktreeListWhat = "git worktree list --porcelain -z"

// ParseWorktreeList parses the NUL-terminated attribute lines of `git
// worktree list --porcelain -z` (each record ends with an empty attribute,
// i.e. a double NUL). Unknown attribute names are ignored (forward
// compatible); a record without a "worktree " line, a malformed HEAD, or
// input that does not end with a terminator is an error naming the byte
// offset. So is a record that contradicts itself (bare with a HEAD, a
// non-bare entry without one, branch and detached together) or repeats an
// attribute. Errors wrap ErrMalformed; on error no entries are returned.
// Empty input is no entries and no error.
func ParseWorktreeList(b []byte) ([]WorktreeEntry, error) {
	var (
		out      []WorktreeEntry
		cur      WorktreeEntry
		inRecord bool
		recStart int
		seen     worktreeAttr
	)
	bad := func(off int, format string, args ...any) ([]WorktreeEntry, error) {
		return nil, hostio.MalformedAt(worktreeListWhat, "byte %d: "+format, append([]any{off}, args...)...)
	}
	off := 0
	for off < len(b) {
		n := bytes.IndexByte(b[off:], 0)
		if n < 0 {
			return bad(off, "attribute not NUL-terminated (truncated output?)")
		}
		lineOff := off
		line := string(b[off : off+n])
		off += n + 1

		if line == "" {
			if !inRecord {
				return bad(lineOff, "empty record (no worktree line)")
			}
			if err := checkWorktreeRecord(cur, seen); err != "" {
				return bad(recStart, "record for %q: %s", cur.Path, err)
			}
			out = append(out, cur)
			cur, inRecord, seen = WorktreeEntry{}, false, 0
			continue
		}

		name, value, hasValue := strings.Cut(line, " ")
		if !inRecord {
			if name != "worktree" {
				return bad(lineOff, "record starts with %q, not a worktree line", name)
			}
			if value == "" {
				return bad(lineOff, "worktree line without a path")
			}
			cur, inRecord, recStart = WorktreeEntry{Path: value}, true, lineOff
			continue
		}

		var bit worktreeAttr
		switch name {
		case "worktree":
			return bad(lineOff, "worktree line inside the record for %q (missing record terminator)", cur.Path)
		case "HEAD":
			bit = wtHead
			if !hostio.IsHexOID(value) {
				return bad(lineOff, "HEAD %q is not a 40 or 64 digit lowercase hex object id", value)
			}
			cur.Head = value
		case "branch":
			bit = wtBranch
			if value == "" {
				return bad(lineOff, "branch line without a ref name")
			}
			cur.Branch = value
		case "bare":
			bit = wtBare
			if hasValue {
				return bad(lineOff, "bare takes no value")
			}
			cur.Bare = true
		case "detached":
			bit = wtDetached
			if hasValue {
				return bad(lineOff, "detached takes no value")
			}
			cur.Detached = true
		case "locked":
			bit = wtLocked
			cur.Locked, cur.LockReason = true, value
		case "prunable":
			bit = wtPrunable
			cur.Prunable, cur.PrunableReason = true, value
		default:
			// An attribute a newer git added: ignore it.
			continue
		}
		if seen&bit != 0 {
			return bad(lineOff, "repeated %s attribute", name)
		}
		seen |= bit
	}
	if inRecord {
		return bad(len(b), "record for %q not terminated by an empty attribute (truncated output?)", cur.Path)
	}
	return out, nil
}

// checkWorktreeRecord returns what is inconsistent in a complete record, or
// "". git prints "bare" instead of HEAD for a bare entry, and HEAD followed
// by at most one of "detached" and "branch" otherwise.
func checkWorktreeRecord(e WorktreeEntry, seen worktreeAttr) string {
	switch {
	case e.Bare && seen&(wtHead|wtBranch|wtDetached) != 0:
		return "bare entry with HEAD, branch or detached"
	case !e.Bare && seen&wtHead == 0:
		return "non-bare entry without HEAD"
	case e.Detached && e.Branch != "":
		return "entry both detached and on a branch"
	}
	return ""
}
