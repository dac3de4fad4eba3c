package store

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/custody-sh/custody/machine"
	json "github.com/custody-sh/custody/machine/bytejson"
)

// ExportOptions selects what Export writes.
type ExportOptions struct {
	// Format is "jsonl" (default) or "md".
	Format string
	// Record limits the export to one record's entries. Such an export has
	// gaps and verifies only with VerifyOptions.AllowGaps.
	Record string
	// Redact, when set, rewrites each line before it is written.
	Redact *Redactor
}

// Export streams the journal to w, one stored entry per line, in constant
// memory. A redacted line keeps its hash and carries "body_digest", the
// digest of the original body, so the chain still verifies; its content is
// then vouched for by the chain, not recomputed.
func (s *Store) Export(w io.Writer, opts ExportOptions) error {
	bw := bufio.NewWriter(w)
	if opts.Format == "md" {
		fmt.Fprintln(bw, "| seq | at | record | from | to | trigger | outcome | hash |")
		fmt.Fprintln(bw, "|---|---|---|---|---|---|---|---|")
	}
	err := s.Journal(opts.Record, func(line []byte, e Entry) error {
		if opts.Redact != nil {
			red, err := opts.Redact.line(line)
			if err != nil {
				return err
			}
			if string(red) != string(line) {
				var e2 Entry
				if err := json.Unmarshal(DisplayLine(red), &e2); err != nil {
					return fmt.Errorf("redact journal entry %d: %w", e.Seq, err)
				}
				e = e2
			}
			line = red
		}
		switch opts.Format {
		case "", "jsonl":
			bw.Write(line)
			return bw.WriteByte('\n')
		case "md":
			_, err := fmt.Fprintf(bw, "| %d | %s | %s | %s | %s | %s | %s | %s |\n", e.Seq, e.At.UTC().Format("2006-01-02T15:04:05Z"),
				mdCell(e.Record), mdCell(e.From), mdCell(e.To), mdCell(e.Trigger), mdCell(e.Outcome), mdCell(e.Hash[:min(12, len(e.Hash))]))
			return err
		}
		return fmt.Errorf("unknown export format %q (want jsonl or md)", opts.Format)
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}

// mdCell is one cell of the markdown export: machine.MarkdownText, so a
// record id or outcome holding a newline, '|', markup or a byte that is
// not UTF-8 stays in its cell, shown exactly.
func mdCell(s string) string { return machine.MarkdownText(s) }

// Redactor replaces the home directory and the repository root with
// placeholders, host names with $HOST (this machine's, which an auditor can
// be given to put back) or $OTHER_HOST (any other: in a remote URL, or a
// holder or actor of another machine), and strips credentials. Commit ids,
// digests, hashes and sequence numbers stay: they are what lets the
// content be checked.
type Redactor struct {
	Home string
	Root string
	// Host is this machine's host name (os.Hostname); "" replaces only
	// the hosts of URLs, holders and actors as $OTHER_HOST.
	Host string
}

// Host placeholders of a redacted export.
const (
	// HostPlaceholder stands for the exporting machine's host name.
	HostPlaceholder = "$HOST"
	// OtherHostPlaceholder stands for any other host name.
	OtherHostPlaceholder = "$OTHER_HOST"
)

var (
	// urlHost matches the host of a URL (scheme://[user@]host), and of
	// an scp-like git address (user@host:path).
	urlHost = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://(?:[^/@\s"]*@)?)([^/:\s"@\\]+)|([A-Za-z0-9._-]+@)([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+):`)
	})
	// holderHost matches a JSON member naming a host, and an actor
	// (user@host).
	holderHost = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`("host":")([^"\\]*)(")|("actor":"[^"@\\]*@)([^"\\]*)(")`)
	})
)

// hosts replaces host names in s.
func (r *Redactor) hosts(s string) string {
	name := func(h string) string {
		switch {
		case h == "" || strings.HasPrefix(h, "$"):
			return h
		case r.Host != "" && h == r.Host:
			// Exactly: verify --host puts back this spelling, so another
			// case of it is another host ($OTHER_HOST, still hidden).
			return HostPlaceholder
		}
		return OtherHostPlaceholder
	}
	s = holderHost().ReplaceAllStringFunc(s, func(m string) string {
		g := holderHost().FindStringSubmatch(m)
		if g[1] != "" {
			return g[1] + name(g[2]) + g[3]
		}
		return g[4] + name(g[5]) + g[6]
	})
	s = urlHost().ReplaceAllStringFunc(s, func(m string) string {
		g := urlHost().FindStringSubmatch(m)
		if g[1] != "" {
			if strings.HasPrefix(strings.ToLower(g[1]), "file:") {
				return m
			}
			return g[1] + name(g[2])
		}
		return g[3] + name(g[4]) + ":"
	})
	if r.Host != "" {
		s = replaceWord(s, r.Host, HostPlaceholder)
	}
	return s
}

// replaceWord replaces each occurrence of word in s that is not part of a
// longer name (no letter, digit, '-', '_' or '.' beside it) and is not a
// JSON member name.
func replaceWord(s, word, with string) string {
	part := func(c byte) bool {
		return c == '-' || c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	var b strings.Builder
	for {
		i := strings.Index(s, word)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := i + len(word)
		key := i > 0 && s[i-1] == '"' && strings.HasPrefix(s[j:], `":`) // a JSON member name
		if key || (i > 0 && part(s[i-1])) || (j < len(s) && part(s[j])) {
			b.WriteString(s[:j])
		} else {
			b.WriteString(s[:i])
			b.WriteString(with)
		}
		s = s[j:]
	}
}

func (r *Redactor) text(s string) string {
	replace := func(s, old, new string) string {
		s = strings.ReplaceAll(s, old, new)
		// Inside JSON the path may appear escaped (\u0026, \", \\).
		if b, err := json.Marshal(old); err == nil {
			if esc := string(b[1 : len(b)-1]); esc != old {
				s = strings.ReplaceAll(s, esc, new)
			}
		}
		return s
	}
	if r.Root != "" {
		s = replace(s, r.Root, "$REPO")
	}
	if r.Home != "" && r.Home != "/" {
		s = replace(s, r.Home, "$HOME")
	}
	return r.hosts(machine.RedactCredentials(s))
}

func (r *Redactor) line(line []byte) ([]byte, error) {
	var top struct {
		Salt    *json.RawMessage `json:"salt"`
		Digests *json.RawMessage `json:"member_digests"`
	}
	if json.Unmarshal(line, &top) == nil && (top.Salt != nil || top.Digests != nil) {
		if top.Salt == nil {
			return line, nil // already redacted
		}
		return redactCommitted(line)
	}
	red := r.text(string(line))
	if red == string(line) {
		return line, nil
	}
	var what []string
	for _, p := range []struct{ name, value string }{{"$REPO", r.Root}, {"$HOME", r.Home}} {
		if p.value != "" && strings.Contains(red, p.name) && !strings.Contains(string(line), p.name) {
			what = append(what, p.name)
		}
	}
	if machine.RedactCredentials(string(line)) != string(line) {
		what = append(what, "credentials")
	}
	for _, p := range []string{HostPlaceholder, OtherHostPlaceholder} {
		if strings.Contains(red, p) && !strings.Contains(string(line), p) {
			what = append(what, p)
		}
	}
	body, err := canonicalBody(line)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(red), &m); err != nil {
		return nil, fmt.Errorf("redact journal entry: %w", err)
	}
	d, _ := json.Marshal(digest(body))
	m["body_digest"] = d
	w, _ := json.Marshal(what)
	m["redacted"] = w
	return json.Marshal(m)
}

// Line redacts one export line. A committed line (written since schema 7)
// is redacted by structure: every value its redact member names is
// replaced by its commitment, the salt is dropped and member_digests added,
// so every byte it still shows verifies; the Redactor's Home, Root and
// Host are not needed. A line of the first rule is redacted as it always
// was: the line itself when nothing in it is redacted, else the line
// with the placeholders, body_digest and redacted.
func (r *Redactor) Line(line []byte) ([]byte, error) { return r.line(line) }

// unredact undoes the placeholders of a redacted line (not a stripped
// credential) with the values an auditor was given, trying each value
// both as it reads and as JSON escapes it, and reports whether one of
// them gives back the body whose digest (want) the chain vouches for.
func unredact(line []byte, want string, home, root, host string) bool {
	forms := func(v string) []string {
		out := []string{v}
		if b, err := json.Marshal(v); err == nil {
			if esc := string(b[1 : len(b)-1]); esc != v {
				out = append(out, esc)
			}
		}
		return out
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil {
		return false
	}
	delete(m, "redacted")
	delete(m, "body_digest")
	base, err := json.Marshal(m)
	if err != nil {
		return false
	}
	for _, r := range forms(root) {
		for _, h := range forms(home) {
			text := string(base)
			if root != "" {
				text = strings.ReplaceAll(text, "$REPO", r)
			}
			if home != "" {
				text = strings.ReplaceAll(text, "$HOME", h)
			}
			if host != "" {
				text = strings.ReplaceAll(text, HostPlaceholder, host)
			}
			if body, err := canonicalBody([]byte(text)); err == nil && digest(body) == want {
				return true
			}
		}
	}
	return false
}

// VerifyOptions tunes Verify.
type VerifyOptions struct {
	// Head, when set, is the chain head the export must end at (from
	// `custody journal head`), which catches entries dropped from the end.
	Head string
	// Redacted accepts lines carrying body_digest (a redacted export),
	// whose content is then vouched for by the chain only.
	Redacted bool
	// AllowGaps accepts an export filtered to one record: sequence gaps and
	// chain links across them are not checked, each entry's own hash is.
	AllowGaps bool
	// Home and Root, when set, are the home directory and repository root
	// a redacted export replaced with $HOME and $REPO. Verify puts them
	// back and checks each redacted entry's content against the digest the
	// chain vouches for (a line whose URL credentials were stripped stays
	// checked by chain only).
	Home, Root string
	// Host, when set, is the host name a redacted export replaced with
	// $HOST, put back the same way. A line is checked by content only when
	// a value was given for every placeholder it lists; one that replaced
	// another host ($OTHER_HOST) or stripped a credential, or lists a
	// placeholder with no value given, stays checked by chain only.
	Host string
}

// MaxLine is the longest journal line, in bytes, that Verify reads (and
// the journal stores): Verify runs in constant memory whatever it is fed.
const MaxLine = 1 << 20

// VerifyReport summarizes a verified export.
type VerifyReport struct {
	Entries  int `json:"entries"`
	Redacted int `json:"redacted"`
	// ContentChecked counts the redacted entries whose content Verify
	// checked: every committed one (each member it shows matches its
	// digest), and each of the first rule whose content it checked by
	// putting back VerifyOptions.Home, Root and Host.
	ContentChecked int `json:"content_checked"`
	// ChainOnly counts the redacted entries of the first rule that were
	// checked by chain only.
	ChainOnly int `json:"chain_only"`
	// ContentFrom is the first committed entry's seq: from it on, content
	// is authenticated in a redacted export too (0: no committed entry).
	ContentFrom uint64 `json:"content_authenticated_from,omitempty"`
	// RedactedFields counts the values the committed redacted entries
	// replaced by their commitments, by kind (path, host, user, url,
	// secret).
	RedactedFields map[string]int `json:"redacted_fields,omitempty"`
	Head           string         `json:"head"`
	LastSeq        uint64         `json:"last_seq"`
}

// Verify checks an exported journal offline, streaming it. It returns a
// report, or an error wrapping ErrJournalBroken that names the first entry
// that was changed, dropped, inserted or reordered.
func Verify(r io.Reader, opts VerifyOptions) (VerifyReport, error) {
	v := NewVerifier(opts)
	if err := ReadLines(r, v.Line); err != nil {
		return v.rep, err
	}
	return v.Finish()
}

// ReadLines calls fn with every line of an export, without its newline, in
// constant memory. What it tolerates and what it refuses is one rule,
// whoever reads an export (journal verify, journal report):
//
//   - tolerated, as carrying no entry: a line ending in CRLF (the \r is
//     dropped), a last line without a newline, and blank lines (empty, or
//     only spaces, tabs and \r) after the last entry, such as a newline an
//     editor or `echo >>` appended;
//   - refused: a blank line before an entry (nothing the export writes; the
//     file was spliced) and a line longer than MaxLine, each an error
//     wrapping ErrJournalBroken that names the line; reading stops there.
//
// fn must not retain the line; an error from fn stops the read and is
// returned.
func ReadLines(r io.Reader, fn func(line []byte) error) error {
	br := bufio.NewReaderSize(r, MaxLine+2)
	blank := 0 // the first of the blank lines read since the last entry
	for lineNo := 1; ; lineNo++ {
		line, err := br.ReadSlice('\n')
		if len(line) == 0 && errors.Is(err, io.EOF) {
			return nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			return broken(lineNo, 0, fmt.Sprintf("is longer than %d bytes (no journal entry is); it was not read further", MaxLine))
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		if len(bytes.Trim(line, " \t\r")) == 0 {
			if blank == 0 {
				blank = lineNo
			}
			continue
		}
		if blank != 0 {
			return broken(blank, 0, "is blank, and an entry follows it (an export has no blank line between entries)")
		}
		if len(line) > MaxLine {
			return broken(lineNo, 0, fmt.Sprintf("is longer than %d bytes (no journal entry is)", MaxLine))
		}
		if err := fn(line); err != nil {
			return err
		}
	}
}

// Verifier checks an export one line at a time, in the order the lines
// come, holding only the previous entry's sequence number and hash. Verify
// is a Verifier over a whole reader; a report feeds one line by line as it
// renders them.
type Verifier struct {
	opts    VerifyOptions
	rep     VerifyReport
	lineNo  int
	lastSeq uint64
	last    string
}

// NewVerifier returns a Verifier at the start of an export.
func NewVerifier(opts VerifyOptions) *Verifier { return &Verifier{opts: opts} }

// Line checks the next line. An error wraps ErrJournalBroken and names
// the entry (by seq and line number) and what is wrong with it; the
// Verifier then holds its place, and the caller stops feeding it.
func (v *Verifier) Line(line []byte) error {
	v.lineNo++
	lineNo, opts := v.lineNo, v.opts
	if key, dup := duplicateKey(line); dup {
		return broken(lineNo, 0, fmt.Sprintf("repeats the member %q (canonical JSON has each key once; a reader could see either value)", key))
	}
	var head struct {
		Seq           *uint64           `json:"seq"`
		Prev          *string           `json:"prev"`
		Hash          string            `json:"hash"`
		BodyDigest    *string           `json:"body_digest"`
		Redacted      []string          `json:"redacted"`
		Salt          *string           `json:"salt"`
		MemberDigests map[string]string `json:"member_digests"`
		Redact        []RedactAt        `json:"redact"`
	}
	if err := json.Unmarshal(line, &head); err != nil || head.Seq == nil || head.Prev == nil || head.Hash == "" {
		return broken(lineNo, 0, "is not a journal entry (it needs seq, prev and hash)")
	}
	seq := *head.Seq
	committed := head.Salt != nil || head.MemberDigests != nil
	switch {
	case committed && head.BodyDigest != nil:
		return broken(lineNo, seq, "carries body_digest beside the members of a committed entry (salt, member_digests): it was changed")
	case !committed && v.rep.ContentFrom != 0:
		return broken(lineNo, seq, fmt.Sprintf("is written under the first rule (no salt, no member_digests), but content is authenticated from seq %d on: it was changed", v.rep.ContentFrom))
	case head.Salt != nil && head.MemberDigests != nil:
		return broken(lineNo, seq, "carries both salt and member_digests (an export line is either unredacted or redacted): it was changed")
	case head.MemberDigests != nil:
		if !opts.Redacted {
			return broken(lineNo, seq, "is redacted (it carries member_digests); if this is a redacted export, verify it with --redacted")
		}
		if err := verifyRedactedCommitted(line, *head.Prev, head.Hash, head.MemberDigests); err != "" {
			return broken(lineNo, seq, err)
		}
		v.rep.Redacted++
		v.rep.ContentChecked++
		for _, r := range head.Redact {
			if v.rep.RedactedFields == nil {
				v.rep.RedactedFields = map[string]int{}
			}
			v.rep.RedactedFields[r.Kind]++
		}
	case head.Salt != nil:
		body, err := committedBody(line)
		if err != nil {
			return broken(lineNo, seq, err.Error())
		}
		if committedHash(*head.Prev, committedRoot(digestsOf(body))) != head.Hash {
			return broken(lineNo, seq, "was changed: its hash does not match its content")
		}
	default:
		body, err := canonicalBody(line)
		if err != nil {
			return broken(lineNo, seq, "is not a JSON object")
		}
		d := digest(body)
		if head.BodyDigest != nil {
			if !opts.Redacted {
				return broken(lineNo, seq, "carries body_digest, so its content cannot be checked; if this is a redacted export, verify it with --redacted")
			}
			if !isHex64(*head.BodyDigest) {
				return broken(lineNo, seq, "has a body_digest that is not 64 lowercase hex digits: it was changed")
			}
			d = *head.BodyDigest
			v.rep.Redacted++
			v.rep.ChainOnly++
			if contentCheckable(head.Redacted, opts) {
				if !unredact(line, d, opts.Home, opts.Root, opts.Host) {
					return broken(lineNo, seq, "was changed: with the home directory and repository root put back, its content does not match its body_digest")
				}
				v.rep.ContentChecked++
				v.rep.ChainOnly--
			}
		}
		if chainHash(*head.Prev, d) != head.Hash {
			return broken(lineNo, seq, "was changed: its hash does not match its content")
		}
	}
	if committed && v.rep.ContentFrom == 0 {
		v.rep.ContentFrom = seq
	}
	want := v.lastSeq + 1
	switch {
	case opts.AllowGaps && seq > v.lastSeq:
	case seq <= v.lastSeq:
		return broken(lineNo, seq, fmt.Sprintf("is out of order or repeated: expected seq %d (an entry was inserted or reordered)", want))
	case seq > want:
		return broken(lineNo, seq, fmt.Sprintf("follows a gap: entries %d to %d were dropped", want, seq-1))
	case *head.Prev != v.last:
		return broken(lineNo, seq, "does not chain to the entry before it (an entry was inserted, replaced or reordered)")
	}
	v.lastSeq, v.last = seq, head.Hash
	v.rep.Entries++
	return nil
}

// verifyRedactedCommitted checks a redacted committed line: each member
// it shows must match its digest in member_digests (else that member was
// changed, or its digest: the member is named), and the digests must give
// its hash (else the digests were changed). It returns what is wrong, ""
// when nothing is.
func verifyRedactedCommitted(line []byte, prev, hash string, digests map[string]string) string {
	for name, d := range digests {
		if !isHex64(d) {
			return fmt.Sprintf("was changed: the digest of member %q is not 64 lowercase hex digits", name)
		}
	}
	root, err := scanJSON(line)
	if err != nil || root.kind != '{' {
		return "is not a JSON object"
	}
	shown := map[string]bool{}
	for _, m := range root.members {
		var name string
		if json.Unmarshal([]byte(`"`+m.name+`"`), &name) != nil {
			return "has a member name that is not a JSON string"
		}
		if name == "hash" || name == memberDigests {
			continue
		}
		shown[name] = true
		want, ok := digests[name]
		if !ok {
			return fmt.Sprintf("was changed: member %q was added (member_digests has no digest for it)", name)
		}
		v, err := canonicalValue(line[m.val.start:m.val.end])
		if err != nil || memberDigest(v) != want {
			return fmt.Sprintf("was changed: member %q does not match its digest", name)
		}
	}
	names := make([]string, 0, len(digests))
	for n := range digests {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if !shown[n] {
			return fmt.Sprintf("was changed: member %q was dropped", n)
		}
	}
	if committedHash(prev, committedRoot(digests)) != hash {
		return "was changed: its member_digests do not match its hash (a member digest was changed, added or dropped)"
	}
	// Every byte shown counts: the line must be written exactly as a
	// redacted line is (members in name order, no whitespace, each value
	// canonical), so no spelling of the same content passes either.
	sort.Slice(root.members, func(i, j int) bool { return root.members[i].name < root.members[j].name })
	want := []byte{'{'}
	for i, m := range root.members {
		if i > 0 {
			want = append(want, ',')
		}
		v, err := canonicalValue(line[m.val.start:m.val.end])
		if err != nil {
			return "is not a JSON object"
		}
		want = append(append(append(want, '"'), m.name...), `":`...)
		want = append(want, v...)
	}
	if !bytes.Equal(append(want, '}'), line) {
		return "was changed: it is not written as a redacted line is (members in name order, no whitespace, canonical values), though its content matches"
	}
	return ""
}

// Finish ends the export: it returns the report and, when the options pin
// a head the export does not end at, an error wrapping ErrJournalBroken.
func (v *Verifier) Finish() (VerifyReport, error) {
	rep := v.rep
	rep.Head, rep.LastSeq = v.last, v.lastSeq
	if v.opts.Head != "" && v.opts.Head != v.last {
		return rep, fmt.Errorf("%w: the export ends at seq %d with hash %s, not at the head %s: entries were dropped from the end, or the export is of another journal", ErrJournalBroken, v.lastSeq, machine.ShortHead(v.last), machine.ShortHead(v.opts.Head))
	}
	return rep, nil
}

// contentCheckable reports whether a redacted line that replaced what can
// be put back: a value was given for every placeholder it lists, and it
// neither stripped a credential nor replaced another machine's host (which
// are not recorded). Any other line is checked by chain only.
func contentCheckable(redacted []string, opts VerifyOptions) bool {
	if len(redacted) == 0 {
		return false
	}
	for _, r := range redacted {
		switch {
		case r == "$REPO" && opts.Root != "", r == "$HOME" && opts.Home != "", r == HostPlaceholder && opts.Host != "":
		default:
			return false
		}
	}
	return true
}

func broken(line int, seq uint64, what string) error {
	if seq == 0 {
		return fmt.Errorf("%w: line %d %s", ErrJournalBroken, line, what)
	}
	return fmt.Errorf("%w: entry seq %d (line %d) %s", ErrJournalBroken, seq, line, what)
}

// duplicateKey reports the first object member, at any depth, that repeats
// a key of its object. The line is read token by token, so this costs no
// more memory than the line itself.
func duplicateKey(line []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	type frame struct {
		object bool
		keys   map[string]bool
		expect bool // the next string token is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false // not JSON: the caller reports it
		}
		top := (*frame)(nil)
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				if top != nil && top.object {
					top.expect = true
				}
				stack = append(stack, &frame{object: t == '{', keys: map[string]bool{}, expect: t == '{'})
			case '}', ']':
				stack = stack[:len(stack)-1]
				if len(stack) > 0 && stack[len(stack)-1].object {
					stack[len(stack)-1].expect = true
				}
			}
		default:
			if top != nil && top.object {
				if top.expect {
					k, _ := t.(string)
					if top.keys[k] {
						return k, true
					}
					top.keys[k] = true
					top.expect = false
				} else {
					top.expect = true
				}
			}
		}
		if len(stack) == 0 {
			return "", false
		}
	}
}
