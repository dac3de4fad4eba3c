package store_test

import (
	"bytes"
	"errors"
	"github.com/google/go-cmp/cmp"
	"io"
	"strings"
	"testing"

	"github.com/custody-sh/custody/store"
	"github.com/custody-sh/custody/store/storetest"
)

// exactJournal is a store with a few full lifecycles and its export.
func exactJournal(t *testing.T) (*store.Store, []byte) {
	t.Helper()
	return exactJournalOf(t, storetest.MustOpen(t))
}

// exactJournalFirstRule is exactJournal with entries of the first rule
// (a store of schema 6).
func exactJournalFirstRule(t *testing.T) (*store.Store, []byte) {
	t.Helper()
	return exactJournalOf(t, storetest.MustOpenFirstRule(t))
}

func exactJournalOf(t *testing.T, s *store.Store) (*store.Store, []byte) {
	t.Helper()
	for _, id := range []string{"a-000001", "b-000002"} {
		lifecycle(t, s, id, t0)
	}
	return s, export(t, s, store.ExportOptions{})
}

// TestVerifyRejectsDuplicateKeys: a line that repeats a member — at the top
// level, where the chain would hash one value while a reader sees another,
// or inside a nested object — does not verify, even when its hash was
// recomputed to match.
func TestVerifyRejectsDuplicateKeys(t *testing.T) {
	t.Parallel()
	_, out := exactJournal(t)
	lines := splitLines(out)
	for name, edit := range map[string]func([]byte) []byte{
		"top level": func(l []byte) []byte {
			return bytes.Replace(l, []byte(`{"`), []byte(`{"to":"tombstoned","`), 1)
		},
		"nested": func(l []byte) []byte {
			return bytes.Replace(l, []byte(`"intent":{`), []byte(`"intent":{"path":"/elsewhere",`), 1)
		},
	} {
		t.Run(name, func(t *testing.T) {
			i := -1
			for j, l := range lines {
				if e := edit(l); !bytes.Equal(e, l) && (name != "nested" || bytes.Contains(l, []byte(`"intent":{"`))) {
					i = j
					break
				}
			}
			if i < 0 {
				t.Fatal("no line to edit")
			}
			edited := append([][]byte{}, lines...)
			edited[i] = edit(lines[i])
			if name == "nested" {
				// The hash covers the nested bytes: forge it. At the top
				// level the stored hash still matches (the last value wins
				// when the body is read), which is the danger.
				edited = rechain(t, edited, i)
			}
			_, err := store.Verify(bytes.NewReader(joinLines(edited)), store.VerifyOptions{})
			if !errors.Is(err, store.ErrJournalBroken) || !strings.Contains(err.Error(), "repeats the member") {
				t.Fatalf("Verify of a line with a repeated member: %v, want ErrJournalBroken naming it", err)
			}
		})
	}
}

// endless yields n bytes of 'a' without holding them, and counts what was
// read.
type endless struct{ n, read int64 }

func (e *endless) Read(p []byte) (int, error) {
	if e.read >= e.n {
		return 0, io.EOF
	}
	k := min(int64(len(p)), e.n-e.read)
	for i := range p[:k] {
		p[i] = 'a'
	}
	e.read += k
	return int(k), nil
}

// TestVerifyLongLine: a 1 GB line is refused after reading at most a few
// MaxLine worth of it, in constant memory, naming the line.
func TestVerifyLongLine(t *testing.T) {
	t.Parallel()
	_, out := exactJournal(t)
	src := &endless{n: 1 << 30}
	_, err := store.Verify(io.MultiReader(bytes.NewReader(out), src), store.VerifyOptions{})
	if !errors.Is(err, store.ErrJournalBroken) || !strings.Contains(err.Error(), "is longer than") {
		t.Fatalf("Verify of an export ending in a 1 GB line: %v, want ErrJournalBroken (too long)", err)
	}
	if src.read > 4*store.MaxLine {
		t.Fatalf("Verify read %d bytes of the long line, want at most %d", src.read, 4*store.MaxLine)
	}
}

// TestVerifyTrailingNewline: an export verifies with its final newline,
// without it, with CRLF line ends and with a blank last line; a blank line
// in the middle does not.
func TestVerifyTrailingNewline(t *testing.T) {
	t.Parallel()
	_, out := exactJournal(t)
	want, err := store.Verify(bytes.NewReader(out), store.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for name, in := range map[string][]byte{
		"no final newline": bytes.TrimSuffix(out, []byte("\n")),
		"crlf":             bytes.ReplaceAll(out, []byte("\n"), []byte("\r\n")),
	} {
		if got, err := store.Verify(bytes.NewReader(in), store.VerifyOptions{}); err != nil || !cmp.Equal(got, want) {
			t.Errorf("%s: %+v, %v; want %+v", name, got, err, want)
		}
	}
	if got, err := store.Verify(bytes.NewReader(append(bytes.Clone(out), '\n')), store.VerifyOptions{}); err != nil || !cmp.Equal(got, want) {
		t.Errorf("an export with a blank last line: %+v, %v; want %+v (0227: blank lines after the last entry carry nothing)", got, err, want)
	}
	first := bytes.IndexByte(out, '\n') + 1
	middle := append(append(bytes.Clone(out[:first]), '\n'), out[first:]...)
	if _, err := store.Verify(bytes.NewReader(middle), store.VerifyOptions{}); !errors.Is(err, store.ErrJournalBroken) {
		t.Errorf("an export with a blank line between entries: %v, want ErrJournalBroken", err)
	}
}

// TestVerifyRedactedContent: a redacted line lists what it redacted, and an
// auditor given the home directory and repository root checks its content,
// not only its chain: an edit that chain-only verification cannot see
// (the chain hashes the original body's digest) is found.
func TestVerifyRedactedContent(t *testing.T) {
	t.Parallel()
	s, _ := exactJournalFirstRule(t)
	const home = "/home/ada"
	red := export(t, s, store.ExportOptions{Redact: &store.Redactor{Home: home, Root: testRoot, Host: "host"}})
	if !bytes.Contains(red, []byte(`"redacted":["$REPO","$HOST"]`)) {
		t.Fatalf("a redacted line does not say what it redacted:\n%s", red)
	}
	opts := store.VerifyOptions{Redacted: true, Home: home, Root: testRoot, Host: "host"}
	rep, err := store.Verify(bytes.NewReader(red), opts)
	if err != nil || rep.Redacted == 0 || rep.ContentChecked != rep.Redacted {
		t.Fatalf("Verify with the home and root: %+v, %v; want every redacted entry's content checked", rep, err)
	}
	lines := splitLines(red)
	i := -1
	for j, l := range lines {
		if bytes.Contains(l, []byte(`"body_digest"`)) && bytes.Contains(l, []byte(`"actor":"`)) {
			i = j
		}
	}
	if i < 0 {
		t.Fatal("no redacted entry")
	}
	lines[i] = bytes.Replace(lines[i], []byte(`"actor":"`), []byte(`"actor":"mallory `), 1)
	forged := joinLines(lines)
	if _, err := store.Verify(bytes.NewReader(forged), store.VerifyOptions{Redacted: true}); err != nil {
		t.Fatalf("chain-only verification was expected to miss the edit (that is what content checking adds): %v", err)
	}
	if _, err := store.Verify(bytes.NewReader(forged), opts); !errors.Is(err, store.ErrJournalBroken) || !strings.Contains(err.Error(), "does not match its body_digest") {
		t.Fatalf("Verify with the home and root of an edited redacted line: %v, want ErrJournalBroken", err)
	}
}

// TestVerifyRedactedPartialValues: an auditor given some of the replaced
// values checks by content exactly the lines whose every placeholder they
// can put back; the rest (a host they were not given) are checked by chain
// only, never reported changed.
func TestVerifyRedactedPartialValues(t *testing.T) {
	t.Parallel()
	s, _ := exactJournalFirstRule(t)
	const home = "/home/ada"
	red := export(t, s, store.ExportOptions{Redact: &store.Redactor{Home: home, Root: testRoot, Host: "host"}})
	rep, err := store.Verify(bytes.NewReader(red), store.VerifyOptions{Redacted: true, Home: home, Root: testRoot})
	if err != nil {
		t.Fatalf("Verify without the host: %v", err)
	}
	withHost := bytes.Count(red, []byte(`"$HOST"]`)) + bytes.Count(red, []byte(`"$HOST",`))
	if withHost == 0 || rep.ContentChecked != rep.Redacted-withHost {
		t.Errorf("Verify without the host: %+v; want the %d lines naming $HOST checked by chain only, the other redacted ones by content", rep, withHost)
	}
}
