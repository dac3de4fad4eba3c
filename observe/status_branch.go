package observe

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/custody-sh/custody/observe/hostio"
)

const statusBranchWhat = "git status --porcelain=v2 --branch -z"

// StatusBranch is what the --branch headers of `git status --porcelain=v2
// -z --branch` say of HEAD and its upstream.
type StatusBranch struct {
	// OID is HEAD's commit ("" for "(initial)").
	OID string
	// Head is the branch checked out ("" when detached).
	Head string
	// Upstream is the upstream branch as git names it (origin/main), ""
	// when there is none.
	Upstream string
	// HasAB says git counted HEAD against the upstream: an upstream whose
	// ref is gone is named without a count.
	HasAB         bool
	Ahead, Behind int
}

// ParseStatusBranch reads the --branch headers of `git status
// --porcelain=v2 -z --branch` output b ("# branch.oid", "# branch.head",
// "# branch.upstream", "# branch.ab +N -M"), skipping every other entry
// (ParseStatus reads those). A header custody reads wrongly formed (a
// count that is not a number, a missing value, an entry without its NUL)
// is an error wrapping ErrMalformed; a header it does not know is skipped.
func ParseStatusBranch(b []byte) (StatusBranch, error) {
	var sb StatusBranch
	off := 0
	for off < len(b) {
		n := bytes.IndexByte(b[off:], 0)
		if n < 0 {
			return StatusBranch{}, hostio.MalformedAt(statusBranchWhat, "byte %d: entry not NUL-terminated (truncated output?)", off)
		}
		entry := string(b[off : off+n])
		at := off
		off += n + 1
		if !strings.HasPrefix(entry, "# branch.") {
			if strings.HasPrefix(entry, "2 ") {
				// A rename's original path is the next NUL-terminated
				// field: skip it, whatever it holds.
				m := bytes.IndexByte(b[off:], 0)
				if m < 0 {
					return StatusBranch{}, hostio.MalformedAt(statusBranchWhat, "byte %d: rename without its original path", off)
				}
				off += m + 1
			}
			continue
		}
		key, value, ok := strings.Cut(strings.TrimPrefix(entry, "# branch."), " ")
		if !ok || value == "" {
			return StatusBranch{}, hostio.MalformedAt(statusBranchWhat, "byte %d: header %q without a value", at, entry)
		}
		switch key {
		case "oid":
			if value != "(initial)" {
				if !hostio.IsHexOID(value) {
					return StatusBranch{}, hostio.MalformedAt(statusBranchWhat, "byte %d: branch.oid %q", at, value)
				}
				sb.OID = value
			}
		case "head":
			if value != "(detached)" {
				sb.Head = value
			}
		case "upstream":
			sb.Upstream = value
		case "ab":
			a, bh, ok := strings.Cut(value, " ")
			ahead, err1 := strconv.Atoi(strings.TrimPrefix(a, "+"))
			behind, err2 := strconv.Atoi(strings.TrimPrefix(bh, "-"))
			if !ok || !strings.HasPrefix(a, "+") || !strings.HasPrefix(bh, "-") || err1 != nil || err2 != nil || ahead < 0 || behind < 0 {
				return StatusBranch{}, hostio.MalformedAt(statusBranchWhat, "byte %d: branch.ab %q", at, value)
			}
			sb.HasAB, sb.Ahead, sb.Behind = true, ahead, behind
		}
	}
	return sb, nil
}

// parseCount reads the one number `git rev-list --count` prints.
func parseCount(b []byte) (int, error) {
	s := strings.TrimSuffix(string(b), "\n")
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, hostio.MalformedAt("git rev-list --count", "%q is not a count", s)
	}
	return n, nil
}

// parseLeftRight reads the "<left>\t<right>" `git rev-list --left-right
// --count` prints.
func parseLeftRight(b []byte) (left, right int, err error) {
	s := strings.TrimSuffix(string(b), "\n")
	l, r, ok := strings.Cut(s, "\t")
	left, err1 := strconv.Atoi(l)
	right, err2 := strconv.Atoi(r)
	if !ok || err1 != nil || err2 != nil || left < 0 || right < 0 {
		return 0, 0, hostio.MalformedAt("git rev-list --left-right --count", "%q is not two counts", s)
	}
	return left, right, nil
}

// CommitGraph is the commits `git rev-list --parents` printed, each with
// its parents (which may lie outside the graph).
type CommitGraph map[string][]string

// ParseRevListParents parses `git rev-list --parents` output: one line per
// commit, its id then its parents' ids, separated by single spaces. A
// line that is not object ids, or a commit printed twice, is ErrMalformed.
func ParseRevListParents(b []byte) (CommitGraph, error) {
	g := CommitGraph{}
	for n, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if line == "" && len(b) == 0 {
			break
		}
		ids := strings.Split(line, " ")
		for _, id := range ids {
			if !hostio.IsHexOID(id) || len(id) != len(ids[0]) {
				return nil, hostio.MalformedAt("git rev-list --parents", "line %d: %q is not a commit and its parents", n+1, line)
			}
		}
		if _, dup := g[ids[0]]; dup {
			return nil, hostio.MalformedAt("git rev-list --parents", "line %d: %s printed twice", n+1, ids[0])
		}
		g[ids[0]] = ids[1:]
	}
	return g, nil
}

// Reachable counts the commits of g reachable from head through g (head
// itself included when it is in g).
func (g CommitGraph) Reachable(head string) int {
	seen := map[string]bool{}
	stack := []string{head}
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		parents, in := g[c]
		if !in || seen[c] {
			continue
		}
		seen[c] = true
		stack = append(stack, parents...)
	}
	return len(seen)
}
