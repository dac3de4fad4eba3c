// Package journalcheck verifies a journal export as docs/formats.md
// specifies it ("Journal entry", "Canonical body", "Committed entries"),
// written from that document alone: it imports only the standard library
// and nothing of custody, so a test can pit it against `custody journal
// verify`. It checks lines of the first rule by their canonical body (a
// redacted one, carrying body_digest, by chain only) and committed lines,
// unredacted or redacted, by their commitments and member digests.
package journalcheck

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// Result is what a verification found.
type Result struct {
	Entries int
	// ContentFrom is the first committed line's seq (0: none).
	ContentFrom uint64
	Head        string
}

// Failure names the first line that does not verify.
type Failure struct {
	Line int
	Seq  uint64 // 0 when the line has no readable seq
	// Member is the top-level member found changed, added or dropped in
	// a redacted committed line ("" when the fault is not one member's).
	Member string
	What   string
}

func (f *Failure) Error() string {
	if f.Member != "" {
		return fmt.Sprintf("line %d (seq %d): member %q: %s", f.Line, f.Seq, f.Member, f.What)
	}
	return fmt.Sprintf("line %d (seq %d): %s", f.Line, f.Seq, f.What)
}

// Options are what the caller knows besides the export.
type Options struct {
	Head     string // the head the export must end at ("" for none)
	Redacted bool   // accept redacted lines
	// AllowGaps accepts an export filtered to one record: each line's own
	// hash is checked and seq must increase; the links are not.
	AllowGaps bool
}

// Verify reads an export and returns what it found, or a *Failure naming
// the first line that does not verify.
func Verify(r io.Reader, opts Options) (Result, error) {
	var res Result
	br := bufio.NewReaderSize(r, 1<<20+2)
	var lastSeq uint64
	var last string
	blank := 0
	for n := 1; ; n++ {
		line, err := br.ReadSlice('\n')
		if len(line) == 0 && err == io.EOF {
			break
		}
		if err == bufio.ErrBufferFull {
			return res, &Failure{Line: n, What: "longer than 1 MiB"}
		}
		if err != nil && err != io.EOF {
			return res, err
		}
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		if len(bytes.Trim(line, " \t\r")) == 0 {
			if blank == 0 {
				blank = n
			}
			continue
		}
		if blank != 0 {
			return res, &Failure{Line: blank, What: "blank line before an entry"}
		}
		if len(line) > 1<<20 {
			return res, &Failure{Line: n, What: "longer than 1 MiB"}
		}
		seq, prev, hash, committed, f := checkLine(line, opts)
		if f != nil {
			f.Line = n
			return res, f
		}
		switch {
		case !committed && res.ContentFrom != 0:
			return res, &Failure{Line: n, Seq: seq, What: "a line of the first rule after content authentication began"}
		case opts.AllowGaps && seq > lastSeq:
		case seq != lastSeq+1:
			return res, &Failure{Line: n, Seq: seq, What: fmt.Sprintf("seq %d where %d was due", seq, lastSeq+1)}
		case prev != last:
			return res, &Failure{Line: n, Seq: seq, What: "prev is not the hash of the line before"}
		}
		if committed && res.ContentFrom == 0 {
			res.ContentFrom = seq
		}
		lastSeq, last = seq, hash
		res.Entries++
	}
	res.Head = last
	if opts.Head != "" && opts.Head != last {
		return res, &Failure{Line: res.Entries, Seq: lastSeq, What: "the export does not end at the head"}
	}
	return res, nil
}

// checkLine checks one line's own hash; the caller checks the links.
func checkLine(line []byte, opts Options) (seq uint64, prev, hash string, committed bool, f *Failure) {
	root, err := parse(line)
	if err != nil || root.kind != '{' {
		return 0, "", "", false, &Failure{What: "not a JSON object"}
	}
	if dup := repeated(root); dup != "" {
		return 0, "", "", false, &Failure{What: "repeats the member " + dup}
	}
	top := map[string]*node{}
	for _, m := range root.members {
		top[m.name] = m.val
	}
	str := func(name string) (string, bool) {
		n := top[name]
		if n == nil || n.kind != '"' {
			return "", false
		}
		var s string
		return s, json.Unmarshal(line[n.start:n.end], &s) == nil
	}
	sn := top["seq"]
	if sn == nil {
		return 0, "", "", false, &Failure{What: "no seq"}
	}
	seq, err = strconv.ParseUint(string(line[sn.start:sn.end]), 10, 64)
	if err != nil {
		return 0, "", "", false, &Failure{What: "seq is not a number"}
	}
	prev, okPrev := str("prev")
	hash, okHash := str("hash")
	if !okPrev || !okHash || hash == "" {
		return seq, "", "", false, &Failure{Seq: seq, What: "no prev or hash"}
	}
	_, salted := top["salt"]
	_, digested := top["member_digests"]
	_, bodyDigest := top["body_digest"]
	committed = salted || digested
	fail := func(member, what string) (uint64, string, string, bool, *Failure) {
		return seq, prev, hash, committed, &Failure{Seq: seq, Member: member, What: what}
	}
	switch {
	case salted && digested, committed && bodyDigest:
		return fail("", "mixes the members of two kinds of line")
	case digested:
		if !opts.Redacted {
			return fail("", "a redacted line, not accepted")
		}
		return checkRedacted(line, root, top["member_digests"], seq, prev, hash)
	case salted:
		body, err := committedBody(line, root)
		if err != "" {
			return fail("", err)
		}
		if sum(prev+"\n2:"+rootOf(digests(body))) != hash {
			return fail("", "hash does not match the content")
		}
		return seq, prev, hash, true, nil
	}
	// The first rule: canonical body, or a claimed body_digest.
	m := map[string]json.RawMessage{}
	for _, mem := range root.members {
		var name string
		if json.Unmarshal([]byte(`"`+mem.name+`"`), &name) != nil {
			return fail("", "bad member name")
		}
		m[name] = json.RawMessage(line[mem.val.start:mem.val.end])
	}
	delete(m, "hash")
	var d string
	if bodyDigest {
		if !opts.Redacted {
			return fail("", "a redacted line, not accepted")
		}
		var bd string
		if json.Unmarshal(m["body_digest"], &bd) != nil || !hex64(bd) {
			return fail("body_digest", "not 64 lowercase hex digits")
		}
		d = bd
	} else {
		body, err := json.Marshal(m) // sorted names, compact, escaped values
		if err != nil {
			return fail("", "not canonical JSON")
		}
		d = sum(string(body))
	}
	if sum(prev+"\n"+d) != hash {
		return fail("", "hash does not match the content")
	}
	return seq, prev, hash, false, nil
}

func checkRedacted(line []byte, root, dn *node, seq uint64, prev, hash string) (uint64, string, string, bool, *Failure) {
	fail := func(member, what string) (uint64, string, string, bool, *Failure) {
		return seq, prev, hash, true, &Failure{Seq: seq, Member: member, What: what}
	}
	if dn.kind != '{' {
		return fail("member_digests", "not an object")
	}
	ds := map[string]string{}
	for _, m := range dn.members {
		var d string
		if json.Unmarshal(line[m.val.start:m.val.end], &d) != nil || !hex64(d) {
			return fail("member_digests", "a digest is not 64 lowercase hex digits")
		}
		ds[m.name] = d
	}
	shown := map[string]bool{}
	for _, m := range root.members {
		if m.name == "hash" || m.name == "member_digests" {
			continue
		}
		shown[m.name] = true
		want, ok := ds[m.name]
		if !ok {
			return fail(m.name, "added")
		}
		v, err := canonical(line[m.val.start:m.val.end])
		if err != nil || sum(string(v)) != want {
			return fail(m.name, "changed")
		}
	}
	names := make([]string, 0, len(ds))
	for n := range ds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if !shown[n] {
			return fail(n, "dropped")
		}
	}
	if sum(prev+"\n2:"+rootOf(ds)) != hash {
		return fail("member_digests", "the digests do not give the hash")
	}
	// Written exactly as a redacted line is: members in name order, no
	// whitespace, canonical values.
	ms := append(root.members[:0:0], root.members...)
	sort.Slice(ms, func(i, j int) bool { return ms[i].name < ms[j].name })
	var want []string
	for _, m := range ms {
		v, err := canonical(line[m.val.start:m.val.end])
		if err != nil {
			return fail("", "not JSON")
		}
		want = append(want, `"`+m.name+`":`+string(v))
	}
	if "{"+strings.Join(want, ",")+"}" != string(line) {
		return fail("", "not written in the redacted line's form")
	}
	return seq, prev, hash, true, nil
}

type member struct {
	name string // as written between the quotes
	val  []byte
}

// committedBody is steps 1 and 2 of "Committed entries": each string the
// redact member names replaced by its committed form; hash and salt
// dropped. It returns what is wrong, or "".
func committedBody(line []byte, root *node) ([]member, string) {
	var salt string
	type at struct {
		At   string `json:"at"`
		Kind string `json:"kind"`
	}
	var redact []at
	for _, m := range root.members {
		v := line[m.val.start:m.val.end]
		switch m.name {
		case "salt":
			if json.Unmarshal(v, &salt) != nil || !hex64(salt) {
				return nil, "salt is not 64 lowercase hex digits"
			}
		case "redact":
			if json.Unmarshal(v, &redact) != nil {
				return nil, "redact is not a list of {at, kind}"
			}
		}
	}
	type span struct {
		end int
		by  string
	}
	at2 := map[int]span{}
	seen := map[string]bool{}
	for _, r := range redact {
		if seen[r.At] {
			return nil, "redact names " + r.At + " twice"
		}
		seen[r.At] = true
		n := pointer(root, r.At)
		if n == nil || n.kind != '"' {
			return nil, "redact names " + r.At + ", which is not a string"
		}
		c := sum("custody.commit/1\n" + salt + "\n" + r.At + "\n" + r.Kind + "\n" + string(line[n.start:n.end]))
		at2[n.start] = span{n.end, `{"commit":"` + c + `","redacted":"` + r.Kind + `"}`}
	}
	var out []member
	for _, m := range root.members {
		if m.name == "hash" || m.name == "salt" {
			continue
		}
		var b []byte
		for i := m.val.start; i < m.val.end; {
			if s, ok := at2[i]; ok {
				b = append(b, s.by...)
				i = s.end
				continue
			}
			b = append(b, line[i])
			i++
		}
		v, err := canonical(b)
		if err != nil {
			return nil, "not JSON"
		}
		out = append(out, member{m.name, v})
	}
	return out, ""
}

func digests(body []member) map[string]string {
	d := map[string]string{}
	for _, m := range body {
		d[m.name] = sum(string(m.val))
	}
	return d
}

// rootOf is root = hex(sha256("custody.entry/2\n" + M)).
func rootOf(d map[string]string) string {
	names := make([]string, 0, len(d))
	for n := range d {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("custody.entry/2\n")
	for _, n := range names {
		b.WriteString(`"` + n + `":` + d[n] + "\n")
	}
	return sum(b.String())
}

// canonical writes a value as step 5 does: whitespace outside strings
// removed, <, >, &, U+2028 and U+2029 escaped.
func canonical(v []byte) ([]byte, error) {
	var c bytes.Buffer
	if err := json.Compact(&c, v); err != nil {
		return nil, err
	}
	var e bytes.Buffer
	json.HTMLEscape(&e, c.Bytes())
	return e.Bytes(), nil
}

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func hex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !(s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f') {
			return false
		}
	}
	return true
}

// node is one JSON value by its byte span.
type node struct {
	start, end int
	kind       byte
	members    []struct {
		name string
		key  int // where the name's token starts
		val  *node
	}
	elems []*node
}

// pointer resolves an RFC 6901 pointer whose segments are member names as
// written (escapes not decoded).
func pointer(n *node, p string) *node {
	if !strings.HasPrefix(p, "/") {
		return nil
	}
	for _, seg := range strings.Split(p[1:], "/") {
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		switch n.kind {
		case '{':
			var next *node
			for _, m := range n.members {
				if m.name == seg {
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

// repeated returns a member name repeated in any object ("" for none),
// names compared after unescaping.
func repeated(n *node) string {
	if n.kind == '{' {
		seen := map[string]bool{}
		for _, m := range n.members {
			var k string
			if json.Unmarshal([]byte(`"`+m.name+`"`), &k) != nil {
				k = m.name
			}
			if seen[k] {
				return k
			}
			seen[k] = true
			if d := repeated(m.val); d != "" {
				return d
			}
		}
	}
	for _, e := range n.elems {
		if d := repeated(e); d != "" {
			return d
		}
	}
	return ""
}

// parse reads one JSON value into nodes that keep their byte spans.
func parse(b []byte) (*node, error) {
	if !json.Valid(b) {
		return nil, fmt.Errorf("not JSON")
	}
	p := &parser{b: b}
	n := p.value()
	return n, nil
}

type parser struct {
	b []byte
	i int
}

func (p *parser) skip() {
	for p.i < len(p.b) && strings.IndexByte(" \t\r\n", p.b[p.i]) >= 0 {
		p.i++
	}
}

// value parses input already known to be valid JSON.
func (p *parser) value() *node {
	p.skip()
	n := &node{start: p.i, kind: p.b[p.i]}
	switch p.b[p.i] {
	case '{':
		p.i++
		for {
			p.skip()
			if p.b[p.i] == '}' {
				p.i++
				break
			}
			if p.b[p.i] == ',' {
				p.i++
				p.skip()
			}
			k := p.value()
			p.skip()
			p.i++ // ':'
			v := p.value()
			n.members = append(n.members, struct {
				name string
				key  int
				val  *node
			}{string(p.b[k.start+1 : k.end-1]), k.start, v})
		}
	case '[':
		p.i++
		for {
			p.skip()
			if p.b[p.i] == ']' {
				p.i++
				break
			}
			if p.b[p.i] == ',' {
				p.i++
			}
			n.elems = append(n.elems, p.value())
		}
	case '"':
		p.i++
		for p.b[p.i] != '"' {
			if p.b[p.i] == '\\' {
				p.i++
			}
			p.i++
		}
		p.i++
	default:
		for p.i < len(p.b) && strings.IndexByte(",}] \t\r\n", p.b[p.i]) < 0 {
			p.i++
		}
	}
	n.end = p.i
	return n
}

// Leaf is one scalar value of a line (a string, number, true, false or
// null), by its byte span, and the top-level member that holds it.
type Leaf struct {
	Start, End int
	Member     string
}

// Leaves lists every scalar value of a JSON object line, for a test that
// changes each in turn. It returns nil when the line is not JSON.
func Leaves(line []byte) []Leaf {
	root, err := parse(line)
	if err != nil || root.kind != '{' {
		return nil
	}
	var out []Leaf
	var walk func(n *node, member string)
	walk = func(n *node, member string) {
		switch n.kind {
		case '{':
			for _, m := range n.members {
				walk(m.val, member)
			}
		case '[':
			for _, e := range n.elems {
				walk(e, member)
			}
		default:
			out = append(out, Leaf{Start: n.start, End: n.end, Member: member})
		}
	}
	for _, m := range root.members {
		walk(m.val, m.name)
	}
	return out
}

// Member is one top-level member of a line: its name as written and the
// span from its name's opening quote to the end of its value.
type Member struct {
	Name       string
	Start, End int
}

// Members lists the top-level members of a JSON object line.
func Members(line []byte) []Member {
	root, err := parse(line)
	if err != nil || root.kind != '{' {
		return nil
	}
	var out []Member
	for _, m := range root.members {
		out = append(out, Member{Name: m.name, Start: m.key, End: m.val.end})
	}
	return out
}
