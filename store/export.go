package store

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/custody-sh/custody/machine"
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
				if err := json.Unmarshal(red, &e2); err == nil {
					e = e2
				}
			}
			line = red
		}
		switch opts.Format {
		case "", "jsonl":
			bw.Write(line)
			return bw.WriteByte('\n')
		case "md":
			_, err := fmt.Fprintf(bw, "| %d | %s | %s | %s | %s | %s | %s | %s |\n", e.Seq, e.At.UTC().Format("2006-01-02T15:04:05Z"),
				mdCell(e.Record), e.From, e.To, e.Trigger, mdCell(e.Outcome), e.Hash[:min(12, len(e.Hash))])
			return err
		}
		return fmt.Errorf("unknown export format %q (want jsonl or md)", opts.Format)
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}

func mdCell(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ") }

// Redactor replaces the home directory and the repository root with
// placeholders and strips credentials from URLs.
type Redactor struct {
	Home string
	Root string
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
	return machine.RedactCredentials(s)
}

func (r *Redactor) line(line []byte) ([]byte, error) {
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

// unredact undoes the placeholders of a redacted line (not a stripped
// credential) with the values an auditor was given, trying each value
// both as it reads and as JSON escapes it, and reports whether one of
// them gives back the body whose digest (want) the chain vouches for.
func unredact(line []byte, want string, home, root string) bool {
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
}

// MaxLine is the longest journal line, in bytes, that Verify reads (and
// the journal stores): Verify runs in constant memory whatever it is fed.
const MaxLine = 1 << 20

// VerifyReport summarizes a verified export.
type VerifyReport struct {
	Entries  int `json:"entries"`
	Redacted int `json:"redacted"`
	// ContentChecked counts the redacted entries whose content Verify
	// checked by putting back VerifyOptions.Home and Root.
	ContentChecked int    `json:"content_checked"`
	Head           string `json:"head"`
	LastSeq        uint64 `json:"last_seq"`
}

// Verify checks an exported journal offline, streaming it. It returns a
// report, or an error wrapping ErrJournalBroken that names the first entry
// that was changed, dropped, inserted or reordered.
func Verify(r io.Reader, opts VerifyOptions) (VerifyReport, error) {
	var rep VerifyReport
	br := bufio.NewReaderSize(r, MaxLine+2)
	var lastSeq uint64
	var lastHash string
	for lineNo := 1; ; lineNo++ {
		line, err := br.ReadSlice('\n')
		if len(line) == 0 && errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			return rep, broken(lineNo, 0, fmt.Sprintf("is longer than %d bytes (no journal entry is); it was not read further", MaxLine))
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return rep, err
		}
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		if len(line) == 0 {
			return rep, broken(lineNo, 0, "is empty")
		}
		if len(line) > MaxLine {
			return rep, broken(lineNo, 0, fmt.Sprintf("is longer than %d bytes (no journal entry is)", MaxLine))
		}
		if key, dup := duplicateKey(line); dup {
			return rep, broken(lineNo, 0, fmt.Sprintf("repeats the member %q (canonical JSON has each key once; a reader could see either value)", key))
		}
		var head struct {
			Seq        *uint64 `json:"seq"`
			Prev       *string `json:"prev"`
			Hash       string  `json:"hash"`
			BodyDigest string  `json:"body_digest"`
		}
		if err := json.Unmarshal(line, &head); err != nil || head.Seq == nil || head.Prev == nil || head.Hash == "" {
			return rep, broken(lineNo, 0, "is not a journal entry (it needs seq, prev and hash)")
		}
		seq := *head.Seq
		body, err := canonicalBody(line)
		if err != nil {
			return rep, broken(lineNo, seq, "is not a JSON object")
		}
		d := digest(body)
		if head.BodyDigest != "" {
			if !opts.Redacted {
				return rep, broken(lineNo, seq, "carries body_digest, so its content cannot be checked; if this is a redacted export, verify it with --redacted")
			}
			d = head.BodyDigest
			rep.Redacted++
			if opts.Home != "" || opts.Root != "" {
				if !unredact(line, d, opts.Home, opts.Root) {
					return rep, broken(lineNo, seq, "was changed: with the home directory and repository root put back, its content does not match its body_digest")
				}
				rep.ContentChecked++
			}
		}
		if chainHash(*head.Prev, d) != head.Hash {
			return rep, broken(lineNo, seq, "was changed: its hash does not match its content")
		}
		want := lastSeq + 1
		switch {
		case opts.AllowGaps && seq > lastSeq:
		case seq <= lastSeq:
			return rep, broken(lineNo, seq, fmt.Sprintf("is out of order or repeated: expected seq %d (an entry was inserted or reordered)", want))
		case seq > want:
			return rep, broken(lineNo, seq, fmt.Sprintf("follows a gap: entries %d to %d were dropped", want, seq-1))
		case *head.Prev != lastHash:
			return rep, broken(lineNo, seq, "does not chain to the entry before it (an entry was inserted, replaced or reordered)")
		}
		lastSeq, lastHash = seq, head.Hash
		rep.Entries++
	}
	rep.Head, rep.LastSeq = lastHash, lastSeq
	if opts.Head != "" && opts.Head != lastHash {
		return rep, fmt.Errorf("%w: the export ends at seq %d with hash %s, not at the head %s: entries were dropped from the end", ErrJournalBroken, lastSeq, short(lastHash), short(opts.Head))
	}
	return rep, nil
}

func broken(line int, seq uint64, what string) error {
	if seq == 0 {
		return fmt.Errorf("%w: line %d %s", ErrJournalBroken, line, what)
	}
	return fmt.Errorf("%w: entry seq %d (line %d) %s", ErrJournalBroken, seq, line, what)
}

func short(h string) string {
	if len(h) > 16 {
		return h[:16]
	}
	if h == "" {
		return "(empty)"
	}
	return h
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
