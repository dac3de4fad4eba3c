package proof

import (
	"bytes"
	"context"
	"fmt"
	"github.com/custody-sh/custody/observe/hostio"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// PatchID is one line of `git patch-id` output.
type PatchID struct {
	ID     string
	Commit string
}

// ParsePatchIDs parses `git patch-id` output: "<patch-id> <commit-id>"
// lines. A commit with an empty patch has no line.
func ParsePatchIDs(b []byte) ([]PatchID, error) {
	var out []PatchID
	b = bytes.TrimSuffix(b, []byte{'\n'})
	if len(b) == 0 {
		return nil, nil
	}
	for n, line := range bytes.Split(b, []byte{'\n'}) {
		if len(line) == 0 {
			return nil, hostio.MalformedAt("patch-id", "line %d is empty", n+1)
		}
		id, commit, ok := bytes.Cut(line, []byte{' '})
		if !ok || !hostio.IsHexOID(string(id)) || !hostio.IsHexOID(string(commit)) {
			return nil, hostio.MalformedAt("patch-id", "line %d is not \"<patch-id> <commit>\"", n+1)
		}
		out = append(out, PatchID{ID: string(id), Commit: string(commit)})
	}
	return out, nil
}

// patchInfo is what a proof compares of one commit's change (or of the
// change between two commits): its verbatim patch id, empty when the
// change is empty, and its shape, the sorted list of paths it touches with
// each one's status and new mode (git 2.39's patch-id does not hash modes).
type patchInfo struct {
	id    string
	shape string
	paths []string
}

// patchCache holds patchInfo by commit for one RemoteView, so that the
// trees of one plan, observed in parallel, share the patch ids of the
// commits the advertised tips add. A nil cache holds nothing.
type patchCache struct {
	mu sync.Mutex
	by map[string]patchInfo
}

func newPatchCache() *patchCache { return &patchCache{by: map[string]patchInfo{}} }

func (c *patchCache) get(commit string) (patchInfo, bool) {
	if c == nil {
		return patchInfo{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.by[commit]
	return p, ok
}

func (c *patchCache) put(commit string, p patchInfo) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.by[commit] = p
}

// diffTreeArgs print, for each commit or "<a> <b>" pair read from stdin,
// a header line (the commit, even when its change is empty), the raw
// change list and the full binary patch, exactly and without consulting diff
// configuration: no renames, no external diff or textconv, fixed prefixes,
// no order file, no relative paths.
var diffTreeArgs = []string{"diff-tree", "--stdin", "--always", "-r", "--raw", "-p", "--binary", "--full-index", "--no-renames",
	"--no-ext-diff", "--no-textconv", "--no-color", "--src-prefix=a/", "--dst-prefix=b/", "-O/dev/null", "--no-relative"}

// diffSegment is one entry of diffTreeArgs output.
type diffSegment struct {
	header string
	raw    []rawChange
	text   []byte // the whole entry, header line first, as patch-id reads it
}

// rename gives the entry another header, for patch-id to name it by.
func (s *diffSegment) rename(header string) {
	_, rest, _ := bytes.Cut(s.text, []byte{'\n'})
	s.header = header
	s.text = append([]byte(header+"\n"), rest...)
}

// rawChange is one line of a raw change list.
type rawChange struct {
	newMode, newOID, status, path string
}

// parseDiffSegments splits diffTreeArgs output into entries. Each entry
// starts with a line that is only an object id; no line of a raw list or
// a patch is one (patch lines start with a keyword, a space, '+', '-',
// '@' or '\\', and base85 lines never have an object id's length).
func parseDiffSegments(b []byte) ([]diffSegment, error) {
	var out []diffSegment
	for len(b) > 0 {
		line, rest, _ := bytes.Cut(b, []byte{'\n'})
		full := b[:len(b)-len(rest)]
		b = rest
		if hostio.IsHexOID(string(line)) {
			out = append(out, diffSegment{header: string(line)})
		}
		if len(out) == 0 {
			return nil, hostio.MalformedAt("diff-tree", "output does not start with an object id")
		}
		s := &out[len(out)-1]
		s.text = append(s.text, full...)
		if len(line) > 0 && line[0] == ':' {
			c, err := parseRaw(string(line))
			if err != nil {
				return nil, err
			}
			s.raw = append(s.raw, c)
		}
	}
	return out, nil
}

// parseRaw parses ":<old mode> <new mode> <old oid> <new oid> <status>\t<path>",
// unquoting a C-quoted path.
func parseRaw(line string) (rawChange, error) {
	meta, p, ok := strings.Cut(line[1:], "\t")
	f := strings.Fields(meta)
	if !ok || len(f) != 5 {
		return rawChange{}, hostio.MalformedAt("diff-tree", "raw line %q", line)
	}
	if strings.HasPrefix(p, `"`) {
		u, err := strconv.Unquote(p)
		if err != nil {
			return rawChange{}, hostio.MalformedAt("diff-tree", "quoted path %q", p)
		}
		p = u
	}
	oid := f[3]
	if strings.Trim(oid, "0") == "" {
		oid = ""
	}
	return rawChange{newMode: f[1], newOID: oid, status: f[4], path: p}, nil
}

// shape is the sorted status, new mode and path of every change.
func shape(raw []rawChange) string {
	l := make([]string, len(raw))
	for i, c := range raw {
		l[i] = c.status + " " + c.newMode + " " + strconv.Quote(c.path)
	}
	slices.Sort(l)
	return strings.Join(l, "\n")
}

// patchInfos computes the patchInfo of each diffTreeArgs entry in segs
// with one `git patch-id --verbatim`, by header.
func patchInfos(ctx context.Context, g *hostio.Git, repo hostio.Repo, segs []diffSegment) (map[string]patchInfo, error) {
	m := make(map[string]patchInfo, len(segs))
	if len(segs) == 0 {
		return m, nil
	}
	var in bytes.Buffer
	for _, s := range segs {
		in.Write(s.text)
		m[s.header] = patchInfo{shape: shape(s.raw)}
	}
	out, err := g.ObserveInput(ctx, repo.MainCheckout, in.Bytes(), "patch-id", "--verbatim")
	if err != nil {
		return nil, fmt.Errorf("patch ids: %w", err)
	}
	ids, err := ParsePatchIDs(out)
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		p, ok := m[id.Commit]
		if !ok {
			return nil, hostio.MalformedAt("patch-id", "patch id for %s, which was not asked about", id.Commit)
		}
		p.id = id.ID
		m[id.Commit] = p
	}
	return m, nil
}
