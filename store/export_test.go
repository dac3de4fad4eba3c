package store_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/google/go-cmp/cmp"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/store"
	"github.com/custody-sh/custody/store/storetest"
)

var seedFlag = flag.Uint64("seed", 0, "seed of the randomized journal tests (0: pick one and print it)")

func export(t testing.TB, s *store.Store, opts store.ExportOptions) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := s.Export(&buf, opts); err != nil {
		t.Fatalf("export %+v: %v", opts, err)
	}
	return buf.Bytes()
}

// splitLines splits an export into its lines, without the newlines.
func splitLines(b []byte) [][]byte {
	return bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
}

func joinLines(lines [][]byte) []byte {
	var b []byte
	for _, l := range lines {
		b = append(append(b, l...), '\n')
	}
	return b
}

// rechain recomputes the hashes of lines[from:] (and the prev links after
// them), as someone forging the journal from entry from+1 on would.
func rechain(t testing.TB, lines [][]byte, from int) [][]byte {
	t.Helper()
	out := make([][]byte, len(lines))
	copy(out, lines)
	for i := from; i < len(out); i++ {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(out[i], &m); err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			var prev map[string]json.RawMessage
			if err := json.Unmarshal(out[i-1], &prev); err != nil {
				t.Fatal(err)
			}
			m["prev"] = prev["hash"]
		}
		var prevHash string
		if err := json.Unmarshal(m["prev"], &prevHash); err != nil {
			t.Fatal(err)
		}
		hash, ok := store.EntryHash(mustMarshal(t, m), prevHash)
		if !ok {
			t.Fatalf("line %d cannot be rehashed", i+1)
		}
		h, _ := json.Marshal(hash)
		m["hash"] = h
		out[i] = mustMarshal(t, m)
	}
	return out
}

func mustMarshal(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestExportVerifies(t *testing.T) {
	t.Parallel()
	s := storetest.MustOpen(t)
	trs := interleaved(t, s)
	seq, head := mustHead(t, s)
	out := export(t, s, store.ExportOptions{Format: "jsonl"})
	if def := export(t, s, store.ExportOptions{}); !bytes.Equal(def, out) {
		t.Errorf("the default format is not jsonl")
	}
	lines := splitLines(out)
	if len(lines) != len(trs) {
		t.Fatalf("export has %d lines for %d commits", len(lines), len(trs))
	}
	for i, jl := range journal(t, s, "") {
		if !bytes.Equal(lines[i], jl.line) {
			t.Errorf("export line %d is not the stored entry:\n%s\n%s", i+1, lines[i], jl.line)
		}
	}
	rep, err := store.Verify(bytes.NewReader(out), store.VerifyOptions{Head: head})
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	want := store.VerifyReport{Entries: len(trs), Head: head, LastSeq: seq, ContentFrom: 1}
	if !cmp.Equal(rep, want) {
		t.Errorf("Verify report = %+v, want %+v", rep, want)
	}
}

// TestVerifyFindsEdits edits a valid export of 9 entries and checks that
// Verify fails with ErrJournalBroken naming the first bad entry.
func TestVerifyFindsEdits(t *testing.T) {
	t.Parallel()
	s := storetest.MustOpen(t)
	n := len(interleaved(t, s))
	_, head := mustHead(t, s)
	orig := splitLines(export(t, s, store.ExportOptions{}))
	if n < 6 || len(orig) != n {
		t.Fatalf("want at least 6 entries, have %d lines for %d commits", len(orig), n)
	}
	const k = 3 // the entry (seq and line, 1-based) the edits are about

	// replace changes the first match of re in line k.
	replace := func(re, with string) func([][]byte) [][]byte {
		return func(lines [][]byte) [][]byte {
			loc := regexp.MustCompile(re).FindIndex(lines[k-1])
			if loc == nil {
				t.Fatalf("line %d has no %s: %s", k, re, lines[k-1])
			}
			l := lines[k-1]
			lines[k-1] = append(append(append([]byte(nil), l[:loc[0]]...), with...), l[loc[1]:]...)
			return lines
		}
	}
	tests := []struct {
		name   string
		edit   func(lines [][]byte) [][]byte
		noHead bool
		// want are substrings of the error; "" means the export must verify.
		want []string
	}{
		{name: "unchanged", edit: func(l [][]byte) [][]byte { return l }},
		{name: "unchanged without head", edit: func(l [][]byte) [][]byte { return l }, noHead: true},
		{name: "change to", edit: replace(`"to":"[a-z]+"`, `"to":"tombstoned"`), want: []string{"seq 3 (line 3)", "changed"}},
		{name: "change from", edit: replace(`"from":"[a-z]+"`, `"from":"active"`), want: []string{"seq 3 (line 3)", "changed"}},
		{name: "change record", edit: replace(`"record":"a-`, `"record":"c-`), want: []string{"seq 3 (line 3)", "changed"}},
		{name: "change at", edit: replace(`"at":"2026`, `"at":"2025`), want: []string{"seq 3 (line 3)", "changed"}},
		{name: "change outcome", edit: replace(`"outcome":"`, `"outcome":"x`), want: []string{"seq 3 (line 3)", "changed"}},
		{name: "change seq", edit: replace(`"seq":3`, `"seq":4`), want: []string{"line 3", "changed"}},
		{name: "change prev", edit: replace(`"prev":"[0-9a-f]`, `"prev":"x`), want: []string{"seq 3 (line 3)", "changed"}},
		{name: "change hash", edit: replace(`"hash":"[0-9a-f]`, `"hash":"x`), want: []string{"seq 3 (line 3)", "changed"}},
		{name: "add a field", edit: replace(`^\{`, `{"extra":1,`), want: []string{"seq 3 (line 3)", "changed"}},
		{name: "add an unknown field", edit: replace(`"seq":3`, `"seq":3,"Seq":3`), want: []string{"line 3", "changed"}},
		{
			name: "change and rechain", noHead: true,
			edit: func(l [][]byte) [][]byte { return rechain(t, replace(`"to":"[a-z]+"`, `"to":"tombstoned"`)(l), k-1) },
		},
		{
			name: "change and rechain with head",
			edit: func(l [][]byte) [][]byte { return rechain(t, replace(`"to":"[a-z]+"`, `"to":"tombstoned"`)(l), k-1) },
			want: []string{"not at the head"},
		},
		{
			name: "drop entry", edit: func(l [][]byte) [][]byte { return append(l[:k-1:k-1], l[k:]...) },
			want: []string{"seq 4 (line 3)", "3 to 3 were dropped"},
		},
		{
			name: "drop first entry", edit: func(l [][]byte) [][]byte { return l[1:] },
			want: []string{"seq 2 (line 1)", "1 to 1 were dropped"},
		},
		{
			name: "drop two entries", edit: func(l [][]byte) [][]byte { return append(l[:k-1:k-1], l[k+1:]...) },
			want: []string{"seq 5 (line 3)", "3 to 4 were dropped"},
		},
		{name: "drop last entry without head", edit: func(l [][]byte) [][]byte { return l[:len(l)-1] }, noHead: true},
		{
			name: "drop last entry", edit: func(l [][]byte) [][]byte { return l[:len(l)-1] },
			want: []string{fmt.Sprintf("ends at seq %d", n-1), "dropped from the end"},
		},
		{
			name: "drop everything", edit: func(l [][]byte) [][]byte { return nil },
			want: []string{"ends at seq 0", "dropped from the end"},
		},
		{
			name: "insert a duplicate", edit: func(l [][]byte) [][]byte { return insertLine(l, k, l[k-1]) },
			want: []string{"seq 3 (line 4)", "repeated"},
		},
		{
			name: "insert a duplicate further on", edit: func(l [][]byte) [][]byte { return insertLine(l, k+2, l[k-1]) },
			want: []string{"seq 3 (line 6)", "repeated"},
		},
		{
			name: "swap entries", edit: func(l [][]byte) [][]byte { l[k-1], l[k] = l[k], l[k-1]; return l },
			want: []string{"seq 4 (line 3)"},
		},
		{
			name: "move the last entry first", edit: func(l [][]byte) [][]byte { return append([][]byte{l[len(l)-1]}, l[:len(l)-1]...) },
			want: []string{fmt.Sprintf("seq %d (line 1)", n)},
		},
		{
			name: "replace with another store's entry", edit: func(l [][]byte) [][]byte {
				l[k-1] = splitLines(export(t, otherJournal(t), store.ExportOptions{}))[k-1]
				return l
			},
			want: []string{"seq 3 (line 3)", "does not chain"},
		},
		{
			name: "append garbage", edit: func(l [][]byte) [][]byte { return append(l, []byte("garbage")) },
			want: []string{fmt.Sprintf("line %d is not a journal entry", n+1)},
		},
		{
			name: "append a JSON object", edit: func(l [][]byte) [][]byte { return append(l, []byte(`{"seq":99}`)) },
			want: []string{fmt.Sprintf("line %d is not a journal entry", n+1)},
		},
		{
			name: "insert an empty line", edit: func(l [][]byte) [][]byte { return insertLine(l, k, nil) },
			want: []string{fmt.Sprintf("line %d is blank, and an entry follows it", k+1)},
		},
		{
			name: "insert a line of spaces", edit: func(l [][]byte) [][]byte { return insertLine(l, k, []byte(" \t")) },
			want: []string{fmt.Sprintf("line %d is blank, and an entry follows it", k+1)},
		},
		{
			name: "blank lines, then an entry, at the end", edit: func(l [][]byte) [][]byte {
				last := l[len(l)-1]
				return append(append(l[:len(l)-1], nil, nil), last)
			},
			want: []string{fmt.Sprintf("line %d is blank, and an entry follows it", n)},
		},
		{
			name: "a blank first line", edit: func(l [][]byte) [][]byte { return insertLine(l, 0, nil) },
			want: []string{"line 1 is blank, and an entry follows it"},
		},
		{
			name: "truncate a line", edit: func(l [][]byte) [][]byte { l[k-1] = l[k-1][:len(l[k-1])/2]; return l },
			want: []string{"line 3 is not a journal entry"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			lines := make([][]byte, len(orig))
			for i := range orig {
				lines[i] = bytes.Clone(orig[i])
			}
			in := joinLines(tt.edit(lines))
			opts := store.VerifyOptions{Head: head}
			if tt.noHead {
				opts.Head = ""
			}
			rep, err := store.Verify(bytes.NewReader(in), opts)
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Verify = %v, want it to pass", err)
				}
				return
			}
			if !errors.Is(err, store.ErrJournalBroken) {
				t.Fatalf("Verify = %+v, %v; want an error wrapping ErrJournalBroken", rep, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Verify error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// TestVerifyBlankLinesAfter: what an export's line endings may be, one
// rule for every reader: CRLF, a last line without a newline and blank
// lines after the last entry verify, with the same head and count.
func TestVerifyBlankLinesAfter(t *testing.T) {
	t.Parallel()
	orig := splitLines(export(t, otherJournal(t), store.ExportOptions{}))
	want, err := store.Verify(bytes.NewReader(joinLines(orig)), store.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	plain := joinLines(orig)
	crlf := bytes.ReplaceAll(plain, []byte("\n"), []byte("\r\n"))
	for name, in := range map[string][]byte{
		"no final newline":             bytes.TrimSuffix(plain, []byte("\n")),
		"a blank line after":           append(bytes.Clone(plain), '\n'),
		"blank lines after":            append(bytes.Clone(plain), "\n\n\n"...),
		"a blank line without newline": append(bytes.Clone(plain), "  "...),
		"spaces, tabs and CR after":    append(bytes.Clone(plain), " \t\n\r\n\t"...),
		"CRLF":                         crlf,
		"CRLF and a blank CRLF line":   append(bytes.Clone(crlf), "\r\n"...),
		"CRLF without a final newline": bytes.TrimSuffix(crlf, []byte("\r\n")),
		"mixed LF and CRLF":            append(bytes.Clone(plain[:bytes.IndexByte(plain, '\n')]), append([]byte("\r"), plain[bytes.IndexByte(plain, '\n'):]...)...),
	} {
		got, err := store.Verify(bytes.NewReader(in), store.VerifyOptions{Head: want.Head})
		if err != nil || !cmp.Equal(got, want) {
			t.Errorf("%s: Verify = %+v, %v; want %+v", name, got, err, want)
		}
	}
	for name, in := range map[string][]byte{
		"only a blank line, given a head": []byte("\n"),
	} {
		if got, err := store.Verify(bytes.NewReader(in), store.VerifyOptions{Head: want.Head}); err == nil {
			t.Errorf("%s: Verify = %+v, want an error (it ends at no head)", name, got)
		}
	}
}

// insertLine returns l with v inserted at index i (without aliasing l).
func insertLine(l [][]byte, i int, v []byte) [][]byte {
	out := append([][]byte(nil), l[:i]...)
	out = append(out, v)
	return append(out, l[i:]...)
}

// otherJournal is a second store with the same commits at other times.
func otherJournal(t testing.TB) *store.Store {
	s := storetest.MustOpen(t)
	a := newRecord("a-000001")
	for i, e := range []struct {
		to machine.State
		tr machine.Trigger
	}{
		{machine.StateProvisioning, machine.TriggerCreate},
		{machine.StateActive, machine.TriggerCreated},
		{machine.StateFinished, machine.TriggerFinish},
	} {
		a = mustCommit(t, s, step(a, e.to, e.tr, t0.Add(time.Duration(i)*time.Hour)))
	}
	return s
}

func TestVerifyLineEndings(t *testing.T) {
	t.Parallel()
	s := storetest.MustOpen(t)
	interleaved(t, s)
	seq, head := mustHead(t, s)
	out := export(t, s, store.ExportOptions{})
	for name, in := range map[string][]byte{
		"crlf":                  bytes.ReplaceAll(out, []byte("\n"), []byte("\r\n")),
		"no final newline":      bytes.TrimSuffix(out, []byte("\n")),
		"as exported":           out,
		"one entry, no newline": splitLines(out)[0],
	} {
		wantSeq, wantHead := seq, head
		if name == "one entry, no newline" {
			var e store.Entry
			if err := json.Unmarshal(in, &e); err != nil {
				t.Fatal(err)
			}
			wantSeq, wantHead = 1, e.Hash
		}
		rep, err := store.Verify(bytes.NewReader(in), store.VerifyOptions{Head: wantHead})
		if err != nil || rep.LastSeq != wantSeq || rep.Entries != int(wantSeq) {
			t.Errorf("%s: Verify = %+v, %v; want %d entries", name, rep, err, wantSeq)
		}
	}
	if rep, err := store.Verify(strings.NewReader(""), store.VerifyOptions{}); err != nil || rep.Entries != 0 {
		t.Errorf("Verify of an empty export = %+v, %v; want no entries and no error", rep, err)
	}
}

// secretURL is a remote URL with credentials, as a careless outcome might
// carry it.
const secretURL = "https://user:secret@host/x"

func TestExportRedacted(t *testing.T) {
	t.Parallel()
	const home = "/home/ada"
	s := storetest.MustOpenFirstRule(t)
	rec := newRecord("r-000001") // its path is under testRoot, under home
	var trs []store.Transition
	for i, e := range []struct {
		to machine.State
		tr machine.Trigger
	}{
		{machine.StateProvisioning, machine.TriggerCreate},
		{machine.StateActive, machine.TriggerCreated},
		{machine.StateFinished, machine.TriggerFinish},
		{machine.StateRemoving, machine.TriggerRemove},
		{machine.StateTombstoned, machine.TriggerRemoved},
	} {
		tr := step(rec, e.to, e.tr, t0.Add(time.Duration(i)*time.Minute))
		switch i {
		case 2:
			tr.Outcome = "pushed to " + secretURL + " and ssh://git:tok3n@example.org/r.git"
		case 3:
			tr.Actor = home + "/bin/agent"
		case 4:
			tr.Outcome = "ok" // nothing to redact on this line but the intent's path
		}
		rec = mustCommit(t, s, tr)
		trs = append(trs, tr)
	}
	_, head := mustHead(t, s)
	plain := export(t, s, store.ExportOptions{})
	for _, w := range []string{testRoot, home, "secret", "tok3n"} {
		if !bytes.Contains(plain, []byte(w)) {
			t.Fatalf("the unredacted export lacks %q; the test is not testing redaction", w)
		}
	}

	red := export(t, s, store.ExportOptions{Redact: &store.Redactor{Home: home, Root: testRoot, Host: "host"}})
	for _, w := range []string{testRoot, home, "secret", "user:", "tok3n", "git:", "example.org", `"host":"host"`} {
		if bytes.Contains(red, []byte(w)) {
			t.Errorf("the redacted export still contains %q:\n%s", w, red)
		}
	}
	for _, w := range []string{"$REPO/.worktrees/r-000001", "$HOME/bin/agent", "https://$HOST/x", "ssh://$OTHER_HOST/r.git", `"host":"$HOST"`} {
		if !bytes.Contains(red, []byte(w)) {
			t.Errorf("the redacted export lacks %q:\n%s", w, red)
		}
	}
	redLines := splitLines(red)
	if len(redLines) != len(trs) {
		t.Fatalf("the redacted export has %d lines for %d entries", len(redLines), len(trs))
	}
	redacted := 0
	for i, l := range redLines {
		var e store.Entry
		if err := json.Unmarshal(l, &e); err != nil {
			t.Fatalf("redacted line %d does not parse: %v", i+1, err)
		}
		if bytes.Contains(l, []byte(`"body_digest"`)) {
			redacted++
		}
	}
	if _, err := store.Verify(bytes.NewReader(red), store.VerifyOptions{Head: head}); !errors.Is(err, store.ErrJournalBroken) {
		t.Errorf("Verify of a redacted export without Redacted: %v, want ErrJournalBroken", err)
	}
	rep, err := store.Verify(bytes.NewReader(red), store.VerifyOptions{Head: head, Redacted: true})
	if err != nil {
		t.Fatalf("Verify of the redacted export: %v", err)
	}
	if rep.Redacted == 0 || rep.Redacted != redacted || rep.Entries != len(trs) || rep.Head != head {
		t.Errorf("Verify report %+v; want %d entries, %d redacted, head %s", rep, len(trs), redacted, head)
	}

	// The redacted markdown view hides the same things.
	md := export(t, s, store.ExportOptions{Format: "md", Redact: &store.Redactor{Home: home, Root: testRoot}})
	for _, w := range []string{testRoot, home, "secret", "tok3n"} {
		if bytes.Contains(md, []byte(w)) {
			t.Errorf("the redacted md export still contains %q:\n%s", w, md)
		}
	}
}

// TestExportRedactsJSONEscapedRoot redacts a repository root that JSON
// escapes on the way into the journal (&, <, >, ", \). The decoded export
// must not contain the root, just like any other root.
func TestExportRedactsJSONEscapedRoot(t *testing.T) {
	t.Parallel()
	for _, root := range []string{`/srv/R&D/repo`, `/srv/<team>/repo`, `/srv/a"b/repo`, `/srv/a\b/repo`} {
		t.Run(root, func(t *testing.T) {
			t.Parallel()
			s := storetest.MustOpenFirstRule(t)
			rec := newRecord("e-000001")
			rec.Path = root + "/.worktrees/e-000001"
			mustCommit(t, s, step(rec, machine.StateProvisioning, machine.TriggerCreate, t0))
			red := export(t, s, store.ExportOptions{Redact: &store.Redactor{Root: root}})
			var decoded map[string]any
			if err := json.Unmarshal(bytes.TrimSpace(red), &decoded); err != nil {
				t.Fatal(err)
			}
			if flat := fmt.Sprint(decoded); strings.Contains(flat, root) {
				t.Errorf("the redacted export still names the root %q: %s", root, red)
			}
			if _, err := store.Verify(bytes.NewReader(red), store.VerifyOptions{Redacted: true}); err != nil {
				t.Errorf("Verify of the redacted export: %v", err)
			}
		})
	}
}

// TestVerifyCountsClaimedDigests documents the trust a redacted line asks
// for: a line that carries body_digest is checked by chain only, so an edit
// behind a claimed digest verifies and is counted as redacted. A caller that
// exported without --redact must treat Redacted > 0 as a failure.
func TestVerifyCountsClaimedDigests(t *testing.T) {
	t.Parallel()
	s := storetest.MustOpenFirstRule(t)
	interleaved(t, s)
	_, head := mustHead(t, s)
	lines := splitLines(export(t, s, store.ExportOptions{}))
	var m map[string]json.RawMessage
	if err := json.Unmarshal(lines[2], &m); err != nil {
		t.Fatal(err)
	}
	body := map[string]json.RawMessage{}
	for k, v := range m {
		if k != "hash" {
			body[k] = v
		}
	}
	m["body_digest"] = mustMarshal(t, sha256hex(mustMarshal(t, body)))
	m["to"] = []byte(`"tombstoned"`)
	lines[2] = mustMarshal(t, m)
	// A full export's verify refuses a line that claims its digest: the
	// claim would let an edited entry pass.
	_, err := store.Verify(bytes.NewReader(joinLines(lines)), store.VerifyOptions{Head: head})
	if !errors.Is(err, store.ErrJournalBroken) || !strings.Contains(err.Error(), "seq 3") {
		t.Fatalf("Verify of a full export with a claimed digest: %v, want ErrJournalBroken naming seq 3", err)
	}
	rep, err := store.Verify(bytes.NewReader(joinLines(lines)), store.VerifyOptions{Head: head, Redacted: true})
	if err != nil {
		t.Fatalf("Verify --redacted: %v", err)
	}
	if rep.Redacted != 1 {
		t.Errorf("Verify report %+v: the line with a claimed digest is not counted as redacted", rep)
	}
}

func TestExportMarkdown(t *testing.T) {
	t.Parallel()
	s := storetest.MustOpen(t)
	trs := interleaved(t, s)
	md := string(export(t, s, store.ExportOptions{Format: "md"}))
	lines := strings.Split(strings.TrimSuffix(md, "\n"), "\n")
	if len(lines) != 2+len(trs) {
		t.Fatalf("md export has %d lines, want a header, a separator and %d rows:\n%s", len(lines), len(trs), md)
	}
	if !strings.HasPrefix(lines[0], "| seq |") || !strings.Contains(lines[0], "| hash |") {
		t.Errorf("md header row = %q", lines[0])
	}
	if !regexp.MustCompile(`^\|(---\|)+$`).MatchString(lines[1]) || strings.Count(lines[1], "|") != strings.Count(lines[0], "|") {
		t.Errorf("md separator row = %q", lines[1])
	}
	cols := strings.Count(lines[0], "|")
	for i, tr := range trs {
		row := lines[2+i]
		want := fmt.Sprintf("| %d | %s | %s | %s | %s | %s |", i+1, tr.After.UpdatedAt.Format(time.RFC3339), tr.After.ID, tr.Before.State, tr.After.State, tr.Trigger)
		if !strings.HasPrefix(row, want) {
			t.Errorf("md row %d = %q, want it to start %q", i+1, row, want)
		}
		if strings.Count(row, "|") != cols {
			t.Errorf("md row %d has %d cells, the header %d: %q", i+1, strings.Count(row, "|"), cols, row)
		}
	}
	if _, err := store.Verify(strings.NewReader(md), store.VerifyOptions{}); !errors.Is(err, store.ErrJournalBroken) {
		t.Errorf("Verify of an md export = %v, want ErrJournalBroken (md is a view, not a verifiable export)", err)
	}
	if err := s.Export(&bytes.Buffer{}, store.ExportOptions{Format: "xml"}); err == nil {
		t.Errorf("Export with format xml succeeded")
	}
}

func TestExportRecord(t *testing.T) {
	t.Parallel()
	s := storetest.MustOpen(t)
	trs := interleaved(t, s)
	for _, id := range []string{"a-000001", "b-000002"} {
		out := export(t, s, store.ExportOptions{Record: id})
		lines := splitLines(out)
		var want int
		for _, tr := range trs {
			if tr.After.ID == id {
				want++
			}
		}
		if len(lines) != want {
			t.Fatalf("export of %s has %d lines, want %d", id, len(lines), want)
		}
		for i, l := range lines {
			var e store.Entry
			if err := json.Unmarshal(l, &e); err != nil || e.Record != id {
				t.Errorf("export of %s line %d is about %q (%v)", id, i+1, e.Record, err)
			}
		}
		if _, err := store.Verify(bytes.NewReader(out), store.VerifyOptions{}); !errors.Is(err, store.ErrJournalBroken) {
			t.Errorf("Verify of the %s export without AllowGaps = %v, want ErrJournalBroken", id, err)
		}
		rep, err := store.Verify(bytes.NewReader(out), store.VerifyOptions{AllowGaps: true})
		if err != nil || rep.Entries != want {
			t.Errorf("Verify of the %s export with AllowGaps = %+v, %v; want %d entries", id, rep, err, want)
		}

		// Gaps are allowed, edits and reordering still are not.
		edited := bytes.Replace(out, []byte(`"trigger":"create"`), []byte(`"trigger":"created"`), 1)
		if _, err := store.Verify(bytes.NewReader(edited), store.VerifyOptions{AllowGaps: true}); !errors.Is(err, store.ErrJournalBroken) {
			t.Errorf("Verify of an edited %s export with AllowGaps = %v, want ErrJournalBroken", id, err)
		}
		lines[0], lines[1] = lines[1], lines[0]
		if _, err := store.Verify(bytes.NewReader(joinLines(lines)), store.VerifyOptions{AllowGaps: true}); !errors.Is(err, store.ErrJournalBroken) {
			t.Errorf("Verify of a reordered %s export with AllowGaps = %v, want ErrJournalBroken", id, err)
		}
	}
}

// walk is the worktree machine's edges, for random walks.
var walk = map[machine.State][]struct {
	to machine.State
	tr machine.Trigger
}{
	machine.StateNone:         {{machine.StateProvisioning, machine.TriggerCreate}},
	machine.StateProvisioning: {{machine.StateActive, machine.TriggerCreated}, {machine.StateTombstoned, machine.TriggerDiscard}, {machine.StateTombstoned, machine.TriggerAbandon}},
	machine.StateActive:       {{machine.StateFinished, machine.TriggerFinish}, {machine.StateFinished, machine.TriggerExpire}, {machine.StateRelocating, machine.TriggerRelocate}},
	machine.StateFinished:     {{machine.StateActive, machine.TriggerReopen}, {machine.StateRemoving, machine.TriggerRemove}},
	machine.StateRelocating:   {{machine.StateActive, machine.TriggerRelocated}},
	machine.StateRemoving:     {{machine.StateTombstoned, machine.TriggerRemoved}, {machine.StateFinished, machine.TriggerRetreat}},
}

// testSeed returns the -seed flag or a fresh seed, and logs it.
func testSeed(t testing.TB) uint64 {
	seed := *seedFlag
	if seed == 0 {
		seed = rand.Uint64()
	}
	t.Logf("seed %d (rerun with -seed=%d)", seed, seed)
	return seed
}

// valueStringBytes returns the offsets of the bytes inside the line's
// string values (not keys, not quotes).
func valueStringBytes(line []byte) []int {
	var out []int
	for i := 0; i < len(line); i++ {
		if line[i] != '"' {
			continue
		}
		start := i + 1
		j := start
		for ; j < len(line) && line[j] != '"'; j++ {
			if line[j] == '\\' {
				j++
			}
		}
		k := j + 1
		for k < len(line) && line[k] == ' ' {
			k++
		}
		if k >= len(line) || line[k] != ':' {
			for p := start; p < j; p++ {
				out = append(out, p)
			}
		}
		i = j
	}
	return out
}

// TestJournalProperty commits random walks of a few records, some commits
// stale, and checks that the export verifies and replays to the stored
// records, and that any single byte changed inside a string value of any
// line is caught at that line.
func TestJournalProperty(t *testing.T) {
	t.Parallel()
	seed := testSeed(t)
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	rounds, mutations := 6, 200
	if testing.Short() {
		rounds, mutations = 2, 50
	}
	for round := range rounds {
		s := storetest.MustOpen(t)
		recs := make([]machine.Record, 1+rng.IntN(4))
		for i := range recs {
			recs[i] = newRecord(fmt.Sprintf("p-%06d", i))
		}
		now := t0
		commits := 0
		for range 6 + rng.IntN(20) {
			i := rng.IntN(len(recs))
			edges := walk[recs[i].State]
			if len(edges) == 0 {
				continue
			}
			e := edges[rng.IntN(len(edges))]
			now = now.Add(time.Duration(1+rng.IntN(3600)) * time.Second)
			tr := step(recs[i], e.to, e.tr, now)
			if rng.IntN(5) == 0 && recs[i].Rev > 0 {
				stale := tr
				stale.Before.Rev--
				if err := s.Commit(stale); !errors.Is(err, store.ErrConflict) {
					t.Fatalf("round %d: stale commit = %v, want ErrConflict", round, err)
				}
			}
			recs[i] = mustCommit(t, s, tr)
			commits++
		}

		seq, head := mustHead(t, s)
		out := export(t, s, store.ExportOptions{})
		rep, err := store.Verify(bytes.NewReader(out), store.VerifyOptions{Head: head})
		if err != nil {
			t.Fatalf("round %d: Verify: %v", round, err)
		}
		if rep.Entries != commits || rep.LastSeq != seq || seq != uint64(commits) {
			t.Fatalf("round %d: %d commits, head seq %d, report %+v", round, commits, seq, rep)
		}

		// Replay: the last entry of each record names its stored state,
		// and it has as many entries as revisions.
		replayed := map[string]struct {
			state string
			n     uint64
		}{}
		lines := splitLines(out)
		for _, l := range lines {
			var e store.Entry
			if err := json.Unmarshal(l, &e); err != nil {
				t.Fatal(err)
			}
			r := replayed[e.Record]
			if r.n > 0 && e.From != r.state {
				t.Errorf("round %d: entry %d of %s goes from %s, the replay is at %s", round, e.Seq, e.Record, e.From, r.state)
			}
			r.state, r.n = e.To, r.n+1
			replayed[e.Record] = r
		}
		for _, rec := range recs {
			if rec.Rev == 0 {
				continue
			}
			got := mustGet(t, s, rec.ID)
			if r := replayed[rec.ID]; r.state != got.State.String() || r.n != got.Rev {
				t.Errorf("round %d: %s replays to %s after %d entries, stored %s rev %d", round, rec.ID, r.state, r.n, got.State, got.Rev)
			}
		}

		for range mutations {
			li := rng.IntN(len(lines))
			pos := valueStringBytes(lines[li])
			p := pos[rng.IntN(len(pos))]
			b := byte(rng.IntN(255))
			if b >= lines[li][p] {
				b++
			}
			mutated := make([][]byte, len(lines))
			copy(mutated, lines)
			mutated[li] = bytes.Clone(lines[li])
			mutated[li][p] = b
			_, err := store.Verify(bytes.NewReader(joinLines(mutated)), store.VerifyOptions{})
			if !errors.Is(err, store.ErrJournalBroken) {
				t.Fatalf("round %d: line %d byte %d %q -> %q: Verify = %v, want ErrJournalBroken\n%s",
					round, li+1, p, lines[li][p], b, err, mutated[li])
			}
			if !regexp.MustCompile(fmt.Sprintf(`\bline %d\b`, li+1)).MatchString(err.Error()) {
				t.Fatalf("round %d: line %d byte %d %q -> %q: Verify error %q does not name line %d",
					round, li+1, p, lines[li][p], b, err, li+1)
			}
		}
	}
}

// FuzzVerify feeds arbitrary bytes to Verify: it never panics, fails only
// with ErrJournalBroken, and what it accepts it accepts again with the same
// report, including against the head it reported.
//
// The seeds are kept small (two short entries): the fuzzer minimizes every
// new input it finds, which is quadratic in the input's length, and a long
// export would spend a short run minimizing.
func FuzzVerify(f *testing.F) {
	s := storetest.MustOpen(f)
	a, b := newRecord("a-000001"), newRecord("b-000002")
	for _, r := range []machine.Record{a, b} {
		tr := step(r, machine.StateProvisioning, machine.TriggerCreate, t0)
		tr.After.Intent, tr.Observation, tr.Outcome, tr.Actor = nil, "", "", ""
		mustCommit(f, s, tr)
	}
	out := export(f, s, store.ExportOptions{})
	f.Add(out, false)
	f.Add(out[:len(out)/2], false)
	f.Add(bytes.Replace(out, []byte(`"to":"provisioning"`), []byte(`"to":"removing"`), 1), false)
	f.Add(export(f, s, store.ExportOptions{Record: a.ID}), true)
	f.Add(export(f, s, store.ExportOptions{Redact: &store.Redactor{Home: "/home/ada", Root: testRoot}}), false)
	f.Add(export(f, s, store.ExportOptions{Format: "md"}), false)
	f.Add([]byte{}, false)
	f.Add([]byte("\n"), true)
	f.Add([]byte(`{"seq":1,"prev":"","hash":"00"}`), false)
	// Duplicate keys, at the top and nested, in either order: never accepted.
	first := bytes.SplitAfter(out, []byte("\n"))[0]
	f.Add(bytes.Replace(out, []byte(`{"seq":1,`), []byte(`{"seq":1,"seq":1,`), 1), false)
	f.Add(bytes.Replace(out, []byte(`"to":"provisioning"`), []byte(`"to":"provisioning","to":"removing"`), 1), false)
	f.Add(bytes.Replace(first, []byte(`"to":"provisioning"`), []byte(`"to":"removing","to":"provisioning"`), 1), true)
	f.Fuzz(func(t *testing.T, data []byte, allowGaps bool) {
		opts := store.VerifyOptions{AllowGaps: allowGaps}
		rep, err := store.Verify(bytes.NewReader(data), opts)
		if err != nil {
			if !errors.Is(err, store.ErrJournalBroken) {
				t.Fatalf("Verify failed without ErrJournalBroken: %v", err)
			}
			return
		}
		again, err := store.Verify(bytes.NewReader(data), opts)
		if err != nil || !cmp.Equal(again, rep) {
			t.Fatalf("Verify accepted, then said %+v, %v (first %+v)", again, err, rep)
		}
		opts.Head = rep.Head
		if withHead, err := store.Verify(bytes.NewReader(data), opts); (rep.Head != "" && err != nil) || (err == nil && !cmp.Equal(withHead, rep)) {
			t.Fatalf("Verify against its own head %q = %+v, %v (first %+v)", rep.Head, withHead, err, rep)
		}
		if rep.Redacted > rep.Entries || (!allowGaps && rep.LastSeq != uint64(rep.Entries)) {
			t.Fatalf("inconsistent report %+v", rep)
		}
	})
}

func sha256hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TestExportRedactedHostCase: a host name that differs from this machine's
// only in case is redacted as another host, so a verify given --host (which
// puts back exactly that name) never reports the line changed.
func TestExportRedactedHostCase(t *testing.T) {
	t.Parallel()
	s := storetest.MustOpenFirstRule(t)
	rec := newRecord("r-000001")
	tr := step(rec, machine.StateProvisioning, machine.TriggerCreate, time.Unix(1700000000, 0))
	tr.Outcome = "pushed to https://Build-Host/x and https://build-host/y"
	mustCommit(t, s, tr)
	_, head := mustHead(t, s)
	red := export(t, s, store.ExportOptions{Redact: &store.Redactor{Root: testRoot, Host: "build-host"}})
	for _, w := range []string{"Build-Host", "build-host"} {
		if bytes.Contains(red, []byte(w)) {
			t.Errorf("the redacted export still contains %q:\n%s", w, red)
		}
	}
	if !bytes.Contains(red, []byte("https://$OTHER_HOST/x")) || !bytes.Contains(red, []byte("https://$HOST/y")) {
		t.Errorf("want the other-case host as $OTHER_HOST and the exact one as $HOST:\n%s", red)
	}
	if _, err := store.Verify(bytes.NewReader(red), store.VerifyOptions{Head: head, Redacted: true, Root: testRoot, Host: "build-host"}); err != nil {
		t.Errorf("Verify with the host put back: %v", err)
	}
}
