package store_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/custody-sh/custody/store"
	"github.com/custody-sh/custody/store/storetest"
)

// TestUpgradeToCommittedJournal: a journal written at schema 6 keeps its
// entries byte for byte through the upgrade to schema 7, which records the
// seq from which entries are committed; the entries written after it are
// committed. An unredacted export verifies whole; a redacted one verifies
// with no value given, reports from which seq content is authenticated,
// and an edit of a visible value of a committed entry is named (entry and
// member), while the same edit of an entry of the first rule is caught
// only with --home/--root/--host (the old rule, unchanged).
func TestUpgradeToCommittedJournal(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "custody", store.FileName)
	sc := store.DefaultSchema()
	sc.Migrations = sc.Migrations[:5]
	old, err := store.OpenWith(context.Background(), path, store.Options{Timeout: storetest.Timeout, Create: true, Schema: &sc})
	if err != nil {
		t.Fatal(err)
	}
	lifecycle(t, old, "a-000001", t0)
	before := export(t, old, store.ExportOptions{})
	n := bytes.Count(before, []byte("\n"))

	s, err := store.Open(path, storetest.Timeout, false)
	if err != nil {
		t.Fatalf("upgrade: %v", err)
	}
	t.Cleanup(func() { storetest.Strict(t, s) })
	if from, err := s.ContentAuthenticatedFrom(); err != nil || from != uint64(n+1) {
		t.Fatalf("ContentAuthenticatedFrom = %d, %v; want %d", from, err, n+1)
	}
	lifecycle(t, s, "b-000002", t0)
	plain := export(t, s, store.ExportOptions{})
	if !bytes.HasPrefix(plain, before) {
		t.Fatalf("the entries written before the upgrade changed:\n%s\n%s", before, plain)
	}
	_, head := mustHead(t, s)
	rep, err := store.Verify(bytes.NewReader(plain), store.VerifyOptions{Head: head})
	if err != nil || rep.ContentFrom != uint64(n+1) {
		t.Fatalf("Verify of the unredacted export = %+v, %v; want content authenticated from %d", rep, err, n+1)
	}

	red := export(t, s, store.ExportOptions{Redact: &store.Redactor{Root: testRoot, Home: "/home/ada", Host: "host"}})
	rep, err = store.Verify(bytes.NewReader(red), store.VerifyOptions{Head: head, Redacted: true})
	if err != nil {
		t.Fatalf("Verify --redacted: %v", err)
	}
	if rep.ContentFrom != uint64(n+1) || rep.ChainOnly == 0 || rep.ChainOnly > n || rep.ContentChecked != rep.Entries-n || rep.RedactedFields[store.RedactPath] == 0 {
		t.Errorf("Verify --redacted = %+v; want up to %d redacted entries by chain only, the rest by content, from seq %d", rep, n, n+1)
	}
	if bytes.Contains(red[len(before):], []byte(testRoot)) || bytes.Contains(red[len(before):], []byte(`"salt"`)) {
		t.Errorf("the committed part of the redacted export shows a path or a salt:\n%s", red)
	}

	lines := splitLines(red)
	// A committed entry's outcome changed: named, with no secret.
	forged := append([][]byte{}, lines...)
	last := len(forged) - 1
	forged[last] = bytes.Replace(forged[last], []byte(`"outcome":"`), []byte(`"outcome":"kept `), 1)
	_, err = store.Verify(bytes.NewReader(joinLines(forged)), store.VerifyOptions{Head: head, Redacted: true})
	if !errors.Is(err, store.ErrJournalBroken) || !strings.Contains(err.Error(), "seq "+strconv.Itoa(last+1)) || !strings.Contains(err.Error(), `member "outcome"`) {
		t.Errorf("Verify of a changed outcome = %v; want the entry and the member named", err)
	}
	// A committed line passed off as a redacted line of the first rule
	// (body_digest in place of its digests) does not verify.
	forged = append([][]byte{}, lines...)
	forged[last] = bytes.Replace(forged[last], []byte(`"member_digests":`), []byte(`"body_digest":"`+strings.Repeat("0", 64)+`","x":`), 1)
	if _, err := store.Verify(bytes.NewReader(joinLines(forged)), store.VerifyOptions{Head: head, Redacted: true}); !errors.Is(err, store.ErrJournalBroken) {
		t.Errorf("Verify of a committed line turned into the first rule = %v; want ErrJournalBroken", err)
	}
}
