package store

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/custody-sh/custody/machine"
	json "github.com/custody-sh/custody/machine/bytejson"
)

// Journal entries from schema 7 on are written under the committed rule
// (docs/formats.md, "Committed entries"; decision 0252): each redactable
// string enters the entry's hash through a salted commitment, so a
// redacted export, which shows the commitment in the value's place,
// still verifies every byte it shows.

// Members of a committed entry.
const (
	// memberSalt is the entry's random salt (hex, 32 bytes): in the state
	// file and an unredacted export, never in a redacted one.
	memberSalt = "salt"
	// memberRedact lists the entry's redactable values: where each is
	// (a JSON pointer) and what kind it is.
	memberRedact = "redact"
	// memberDigests is a redacted line's digest of each member, which
	// lets verify name the member that was changed.
	memberDigests = "member_digests"
)

// Redactable kinds: what a redacted value was, by the structure that
// holds it.
const (
	RedactPath = "path"
	RedactHost = "host"
	RedactUser = "user"
	RedactURL  = "url"
	// RedactCommand is a command line: a process's (a lock holder's) or a
	// resource's frozen create, destroy or ensure command, which name
	// files and may hold credentials.
	RedactCommand = "command"
	RedactSecret  = "secret"
)

// RedactAt names one redactable value of an entry: At is an RFC 6901 JSON
// pointer whose segments are member names exactly as the line writes
// them (between the quotes), and Kind is one of the Redact kinds.
type RedactAt struct {
	At   string `json:"at"`
	Kind string `json:"kind"`
}

// RedactKind returns the kind of a string value held under a member
// named name (the nearest member name above it: an array's elements take
// its name), "" when the name says nothing. Redaction goes by this, the
// entry's structure, never by what the value starts with.
func RedactKind(name string) string {
	switch name {
	case "path", "paths", "dir", "directory", "root", "cwd", "file", "files", "gitdir", "common_dir",
		"main_checkout", "scratch", "quarantine", "destination", "moved_to", "src", "dst", "source",
		"backup", "damaged", "places", "executable":
		return RedactPath
	case "host", "hostname":
		return RedactHost
	case "actor", "user", "approver", "approved_by":
		return RedactUser
	case "url", "urls", "remote", "remotes", "push", "pushurl", "fetch":
		return RedactURL
	case "command", "commands", "create", "destroy", "ensure", "argv", "args", "cmd":
		return RedactCommand
	}
	for _, s := range []struct{ suffix, kind string }{
		{"_path", RedactPath}, {"_paths", RedactPath}, {"_dir", RedactPath}, {"_file", RedactPath}, {"_root", RedactPath},
		{"_host", RedactHost}, {"_user", RedactUser}, {"_actor", RedactUser}, {"_url", RedactURL},
	} {
		if strings.HasSuffix(name, s.suffix) {
			return s.kind
		}
	}
	return ""
}

// unredactable are the top-level members a redaction never touches: what
// chains and orders the entry.
func unredactable(name string) bool {
	switch name {
	case "seq", "prev", "hash", "at", memberSalt, memberRedact, memberDigests, "body_digest", "redacted":
		return true
	}
	return false
}

// jsonNode is one value of a line, by its exact bytes.
type jsonNode struct {
	start, end int // raw bytes line[start:end]
	kind       byte
	members    []jsonMember // object
	elems      []*jsonNode  // array
}

type jsonMember struct {
	name string // as written, between the quotes
	val  *jsonNode
}

// errJSON is a line the raw scanner cannot read.
var errJSON = errors.New("not a JSON value")

// scanJSON reads the one JSON value of b (surrounding whitespace allowed)
// into nodes that keep each value's exact bytes.
func scanJSON(b []byte) (*jsonNode, error) {
	s := &scanner{b: b}
	n, err := s.value(0)
	if err != nil {
		return nil, err
	}
	s.ws()
	if s.i != len(b) {
		return nil, errJSON
	}
	return n, nil
}

type scanner struct {
	b []byte
	i int
}

func (s *scanner) ws() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
}

func (s *scanner) value(depth int) (*jsonNode, error) {
	if depth > 256 {
		return nil, errJSON
	}
	s.ws()
	if s.i >= len(s.b) {
		return nil, errJSON
	}
	n := &jsonNode{start: s.i, kind: s.b[s.i]}
	switch s.b[s.i] {
	case '{':
		s.i++
		s.ws()
		if s.i < len(s.b) && s.b[s.i] == '}' {
			s.i++
			break
		}
		for {
			s.ws()
			k, err := s.str()
			if err != nil {
				return nil, err
			}
			s.ws()
			if s.i >= len(s.b) || s.b[s.i] != ':' {
				return nil, errJSON
			}
			s.i++
			v, err := s.value(depth + 1)
			if err != nil {
				return nil, err
			}
			n.members = append(n.members, jsonMember{name: string(s.b[k.start+1 : k.end-1]), val: v})
			s.ws()
			if s.i < len(s.b) && s.b[s.i] == ',' {
				s.i++
				continue
			}
			if s.i < len(s.b) && s.b[s.i] == '}' {
				s.i++
				break
			}
			return nil, errJSON
		}
	case '[':
		s.i++
		s.ws()
		if s.i < len(s.b) && s.b[s.i] == ']' {
			s.i++
			break
		}
		for {
			v, err := s.value(depth + 1)
			if err != nil {
				return nil, err
			}
			n.elems = append(n.elems, v)
			s.ws()
			if s.i < len(s.b) && s.b[s.i] == ',' {
				s.i++
				continue
			}
			if s.i < len(s.b) && s.b[s.i] == ']' {
				s.i++
				break
			}
			return nil, errJSON
		}
	case '"':
		k, err := s.str()
		if err != nil {
			return nil, err
		}
		return k, nil
	default:
		for s.i < len(s.b) && strings.IndexByte(",}] \t\r\n", s.b[s.i]) < 0 {
			s.i++
		}
		if !json.Valid(s.b[n.start:s.i]) {
			return nil, errJSON
		}
	}
	n.end = s.i
	return n, nil
}

func (s *scanner) str() (*jsonNode, error) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, errJSON
	}
	n := &jsonNode{start: s.i, kind: '"'}
	s.i++
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case '\\':
			s.i += 2
			continue
		case '"':
			s.i++
			n.end = s.i
			return n, nil
		}
		s.i++
	}
	return nil, errJSON
}

// pointerSegment escapes one member name for a JSON pointer (RFC 6901).
func pointerSegment(name string) string {
	return strings.ReplaceAll(strings.ReplaceAll(name, "~", "~0"), "/", "~1")
}

// redactPositions finds every redactable string of an entry, by its
// structure: a string under a member whose name RedactKind knows, and any
// other string that holds a credential (machine.RedactCredentials would
// change it). The top-level members that chain the entry are never
// redactable.
func redactPositions(line []byte) ([]RedactAt, error) {
	root, err := scanJSON(line)
	if err != nil || root.kind != '{' {
		return nil, fmt.Errorf("journal entry is not a JSON object")
	}
	var out []RedactAt
	var walk func(n *jsonNode, ptr, name string, relative bool)
	walk = func(n *jsonNode, ptr, name string, relative bool) {
		switch n.kind {
		case '{':
			for _, m := range n.members {
				walk(m.val, ptr+"/"+pointerSegment(m.name), m.name, treeRelative(name, m.name))
			}
		case '[':
			for i, e := range n.elems {
				walk(e, ptr+"/"+strconv.Itoa(i), name, false)
			}
		case '"':
			kind := RedactKind(name)
			if relative {
				kind = ""
			}
			if kind == "" {
				var s string
				if json.Unmarshal(line[n.start:n.end], &s) == nil && machine.RedactCredentials(s) != s {
					kind = RedactSecret
				}
			}
			if kind != "" {
				out = append(out, RedactAt{At: ptr, Kind: kind})
			}
		}
	}
	for _, m := range root.members {
		if !unredactable(m.name) {
			walk(m.val, "/"+pointerSegment(m.name), m.name, false)
		}
	}
	return out, nil
}

// treeRelative reports whether a member named name of an object held
// under container names a place inside a worktree rather than on the
// machine: the path of build output a removal deleted ("node_modules",
// "crates/x/target") is the repository's own name, like a branch, and an
// auditor reads it to know what went. A credential in it is still
// redacted.
func treeRelative(container, name string) bool {
	return container == "discarded" && name == "path"
}

// commitment is the committed form of one redactable string: the object
// {"commit":C,"redacted":KIND}, where C = hex(sha256("custody.commit/1\n"
// + salt + "\n" + pointer + "\n" + kind + "\n" + token)) and token is the
// string's exact bytes in the line, quotes included.
func commitment(salt string, r RedactAt, token []byte) []byte {
	h := sha256.New()
	h.Write([]byte("custody.commit/1\n" + salt + "\n" + r.At + "\n" + r.Kind + "\n"))
	h.Write(token)
	return []byte(`{"commit":"` + hex.EncodeToString(h.Sum(nil)) + `","redacted":"` + r.Kind + `"}`)
}

// committedMember is one top-level member of an entry's committed body.
type committedMember struct {
	name  string // as written, between the quotes
	value []byte // canonical (compact) value bytes
}

// committedBody returns the committed body of an unredacted committed
// line: its members but hash and salt, each redactable string its
// redact member names replaced by its commitment, in name order.
func committedBody(line []byte) ([]committedMember, error) {
	root, err := scanJSON(line)
	if err != nil || root.kind != '{' {
		return nil, errors.New("is not a JSON object")
	}
	var salt string
	var redact []RedactAt
	for _, m := range root.members {
		switch m.name {
		case memberSalt:
			if json.Unmarshal(line[m.val.start:m.val.end], &salt) != nil || !isHex64(salt) {
				return nil, errors.New("has a salt that is not 64 hex digits")
			}
		case memberRedact:
			if json.Unmarshal(line[m.val.start:m.val.end], &redact) != nil {
				return nil, errors.New("has a redact member that is not a list of {at, kind}")
			}
		}
	}
	// Replacements, by start offset.
	repl := map[int]struct {
		end int
		by  []byte
	}{}
	seen := map[string]bool{}
	for _, r := range redact {
		if seen[r.At] {
			return nil, fmt.Errorf("names %s twice in redact", r.At)
		}
		seen[r.At] = true
		n := resolve(root, r.At)
		if n == nil || n.kind != '"' {
			return nil, fmt.Errorf("names %s in redact, which is not a string of the entry", r.At)
		}
		repl[n.start] = struct {
			end int
			by  []byte
		}{n.end, commitment(salt, r, line[n.start:n.end])}
	}
	var out []committedMember
	for _, m := range root.members {
		if m.name == "hash" || m.name == memberSalt {
			continue
		}
		var b bytes.Buffer
		for i := m.val.start; i < m.val.end; {
			if r, ok := repl[i]; ok {
				b.Write(r.by)
				i = r.end
				continue
			}
			b.WriteByte(line[i])
			i++
		}
		v, err := canonicalValue(b.Bytes())
		if err != nil {
			return nil, err
		}
		out = append(out, committedMember{name: m.name, value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

// resolve finds the value a JSON pointer names, nil when none.
func resolve(n *jsonNode, ptr string) *jsonNode {
	if ptr == "" {
		return n
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil
	}
	for _, seg := range strings.Split(ptr[1:], "/") {
		switch n.kind {
		case '{':
			var next *jsonNode
			for _, m := range n.members {
				if pointerSegment(m.name) == seg {
					next = m.val
				}
			}
			if next == nil {
				return nil
			}
			n = next
		case '[':
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(n.elems) || strconv.Itoa(i) != seg {
				return nil
			}
			n = n.elems[i]
		default:
			return nil
		}
	}
	return n
}

// canonicalValue is a value as the canonical body writes it: whitespace
// outside strings removed, <, >, &, U+2028 and U+2029 in strings escaped.
func canonicalValue(v []byte) ([]byte, error) {
	return json.Marshal(json.RawMessage(v))
}

func isHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// memberDigest is hex(sha256(value)) of one committed member's value.
func memberDigest(v []byte) string { return digest(v) }

// committedRoot is the digest a committed entry's hash chains:
// hex(sha256("custody.entry/2\n" + for each member in name order,
// `"NAME":DIGEST` + "\n")).
func committedRoot(digests map[string]string) string {
	names := make([]string, 0, len(digests))
	for n := range digests {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("custody.entry/2\n")
	for _, n := range names {
		b.WriteString(`"` + n + `":` + digests[n] + "\n")
	}
	return digest([]byte(b.String()))
}

// committedHash is the hash of a committed entry: hex(sha256(prev + "\n2:"
// + root)). The "2:" keeps it apart from any entry of the first rule,
// whose digest is 64 hex digits.
func committedHash(prev, root string) string {
	sum := sha256.Sum256([]byte(prev + "\n2:" + root))
	return hex.EncodeToString(sum[:])
}

// sealEntry turns the marshalled entry raw (a compact object without
// hash) into its stored, committed line: the same members in the same
// order, then a fresh salt, the redact member and the hash.
func sealEntry(raw []byte, prev string) (line []byte, hash string, err error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '{' || raw[len(raw)-1] != '}' {
		return nil, "", errors.New("journal entry is not a JSON object")
	}
	pos, err := redactPositions(raw)
	if err != nil {
		return nil, "", err
	}
	var salt [32]byte
	if _, err := rand.Read(salt[:]); err != nil {
		return nil, "", err
	}
	if pos == nil {
		pos = []RedactAt{}
	}
	red, err := json.Marshal(pos)
	if err != nil {
		return nil, "", err
	}
	sep := []byte(",")
	if bytes.Equal(raw, []byte("{}")) {
		sep = nil
	}
	unsealed := append(append(append(bytes.Clone(raw[:len(raw)-1]), sep...), `"salt":"`+hex.EncodeToString(salt[:])+`","redact":`...), red...)
	body, err := committedBody(append(bytes.Clone(unsealed), '}'))
	if err != nil {
		return nil, "", fmt.Errorf("journal entry %s", err)
	}
	hash = committedHash(prev, committedRoot(digestsOf(body)))
	return append(unsealed, `,"hash":"`+hash+`"}`...), hash, nil
}

func digestsOf(body []committedMember) map[string]string {
	d := make(map[string]string, len(body))
	for _, m := range body {
		d[m.name] = memberDigest(m.value)
	}
	return d
}

// isCommitted reports whether a line is written under the committed rule:
// it carries a salt (stored, unredacted) or member digests (redacted).
func isCommitted(line []byte) bool {
	var m struct {
		Salt    *json.RawMessage `json:"salt"`
		Digests *json.RawMessage `json:"member_digests"`
	}
	return json.Unmarshal(line, &m) == nil && (m.Salt != nil || m.Digests != nil)
}

// redactCommitted is the redacted export line of a stored committed line:
// its committed body (each redactable value replaced by its commitment,
// no salt), its hash, and member_digests.
func redactCommitted(line []byte) ([]byte, error) {
	body, err := committedBody(line)
	if err != nil {
		return nil, fmt.Errorf("redact journal entry: it %s", err)
	}
	var hash string
	var h struct {
		Hash string `json:"hash"`
	}
	if err := json.Unmarshal(line, &h); err != nil {
		return nil, err
	}
	hash = h.Hash
	m := make(map[string]json.RawMessage, len(body)+2)
	for _, b := range body {
		var name string
		if err := json.Unmarshal([]byte(`"`+b.name+`"`), &name); err != nil {
			return nil, err
		}
		m[name] = b.value
	}
	m["hash"], _ = json.Marshal(hash)
	m[memberDigests], _ = json.Marshal(digestsOf(body))
	return json.Marshal(m)
}

// entryHashOK reports whether a stored line's own hash matches its
// content, under the rule it was written by.
func entryHashOK(line []byte, prev, hash string) bool {
	if isCommitted(line) {
		body, err := committedBody(line)
		return err == nil && committedHash(prev, committedRoot(digestsOf(body))) == hash
	}
	body, err := canonicalBody(line)
	return err == nil && chainHash(prev, digest(body)) == hash
}

// displayCommitment replaces each commitment of a redacted line by the
// placeholder of its kind.
func displayCommitment(line []byte) []byte {
	if !bytes.Contains(line, []byte(`{"commit":"`)) {
		return line
	}
	var out bytes.Buffer
	rest := line
	for {
		i := bytes.Index(rest, []byte(`{"commit":"`))
		if i < 0 {
			out.Write(rest)
			return out.Bytes()
		}
		// {"commit":"<64 hex>","redacted":"<kind>"}
		tail := rest[i+len(`{"commit":"`):]
		if len(tail) < 64+len(`","redacted":"`) || !isHex64(string(tail[:64])) || !bytes.HasPrefix(tail[64:], []byte(`","redacted":"`)) {
			out.Write(rest[:i+1])
			rest = rest[i+1:]
			continue
		}
		k := tail[64+len(`","redacted":"`):]
		j := bytes.Index(k, []byte(`"}`))
		if j < 0 {
			out.Write(rest)
			return out.Bytes()
		}
		out.Write(rest[:i])
		p, _ := json.Marshal(Placeholder(string(k[:j])))
		out.Write(p)
		rest = k[j+2:]
	}
}

// Placeholder is what a page shows in place of a redacted value of kind.
func Placeholder(kind string) string {
	switch kind {
	case RedactPath:
		return "$PATH"
	case RedactHost:
		return HostPlaceholder
	case RedactUser:
		return "$USER@$HOST"
	case RedactURL:
		return "$URL"
	case RedactCommand:
		return "$COMMAND"
	}
	return machine.Redacted
}

// DisplayLine returns a redacted line with each commitment replaced by the
// placeholder of its kind (Placeholder), for a page to parse and show. The
// result no longer verifies; verify the line first.
func DisplayLine(line []byte) []byte { return displayCommitment(line) }

// RedactedValues returns what a redacted committed line replaced by
// commitments (its redact member), nil for any other line.
func RedactedValues(line []byte) []RedactAt {
	var m struct {
		Digests *json.RawMessage `json:"member_digests"`
		Redact  []RedactAt       `json:"redact"`
	}
	if json.Unmarshal(line, &m) != nil || m.Digests == nil {
		return nil
	}
	return m.Redact
}
