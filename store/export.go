package store

import (
	"bufio"
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
	return json.Marshal(m)
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
}

// VerifyReport summarizes a verified export.
type VerifyReport struct {
	Entries  int    `json:"entries"`
	Redacted int    `json:"redacted"`
	Head     string `json:"head"`
	LastSeq  uint64 `json:"last_seq"`
}

// Verify checks an exported journal offline, streaming it. It returns a
// report, or an error wrapping ErrJournalBroken that names the first entry
// that was changed, dropped, inserted or reordered.
func Verify(r io.Reader, opts VerifyOptions) (VerifyReport, error) {
	var rep VerifyReport
	br := bufio.NewReaderSize(r, 64<<10)
	var lastSeq uint64
	var lastHash string
	for lineNo := 1; ; lineNo++ {
		line, err := br.ReadBytes('\n')
		if len(line) == 0 && errors.Is(err, io.EOF) {
			break
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return rep, err
		}
		line = []byte(strings.TrimRight(string(line), "\r\n"))
		if len(line) == 0 {
			return rep, broken(lineNo, 0, "is empty")
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
