package store_test

import (
	"bytes"
	"context"
	"errors"
	"github.com/google/go-cmp/cmp"
	bolt "go.etcd.io/bbolt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

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

// TestRedactByStructure: redaction goes by the entry's structure, not by a
// prefix: paths under /srv, /mnt and another user's home are replaced like
// any path, as are hosts, users, remote URLs with credentials and command
// lines, with a non-UTF-8 byte and a leading dash in a path; a string that
// only starts with the repository root but is no path member (a note) is
// kept as it is, and so is the path of build output deleted inside a
// tree (unless it holds a credential). The redacted export verifies with no value given, and a
// page shows each redacted value as its kind's placeholder.
func TestRedactByStructure(t *testing.T) {
	t.Parallel()
	s := storetest.MustOpen(t)
	detail := map[string]any{
		"path":         "/srv/build/out dir",
		"legacy_dir":   "/mnt/data/-tree\xff",
		"files":        []string{"/home/other/src/a.go", "/home/other/src/b.go"},
		"host":         "build-7.example.org",
		"url":          "https://deploy:s3cr3t@git.example.org/r.git",
		"command":      "make -C /srv/build",
		"note":         testRoot + "-dirty is kept as written",
		"reason":       "PGPASSWORD=hunter2 psql failed",
		"observations": []map[string]any{{"path": "/mnt/x", "size": 3}},
		// Build output a removal deleted is named inside the tree: kept,
		// unless it holds a credential.
		"discarded": []map[string]any{{"path": "crates/x/target", "kind": "cargo-target"}, {"path": "node_modules", "kind": "node-modules"},
			{"path": "TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789/x", "kind": "disposable"}},
		"nested": map[string]any{"discarded": map[string]any{"dir": "/mnt/y"}},
	}
	if err := s.AppendEvent(store.Event{Record: "a-000001", Kind: "worktree", Event: "observation", At: t0, Detail: detail, Actor: "ada@build-7"}); err != nil {
		t.Fatal(err)
	}
	_, head := mustHead(t, s)
	red := export(t, s, store.ExportOptions{Redact: &store.Redactor{}})
	for _, w := range []string{"/srv", "/mnt", "/home/other", "build-7", "s3cr3t", "git.example.org", "make -C", "ada@", "hunter2", `"salt"`} {
		if bytes.Contains(red, []byte(w)) {
			t.Errorf("the redacted export shows %q:\n%s", w, red)
		}
	}
	if !bytes.Contains(red, []byte(testRoot+"-dirty is kept as written")) {
		t.Errorf("a note that starts with the repository root was changed:\n%s", red)
	}
	rep, err := store.Verify(bytes.NewReader(red), store.VerifyOptions{Head: head, Redacted: true})
	if err != nil {
		t.Fatalf("Verify --redacted: %v", err)
	}
	for _, w := range []string{`"path":"crates/x/target"`, `"path":"node_modules"`} {
		if !bytes.Contains(red, []byte(w)) {
			t.Errorf("the redacted export lacks the build output deleted inside the tree, %s:\n%s", w, red)
		}
	}
	want := map[string]int{store.RedactPath: 6, store.RedactHost: 1, store.RedactUser: 1, store.RedactURL: 1, store.RedactCommand: 1, store.RedactSecret: 2}
	if !cmp.Equal(rep.RedactedFields, want) {
		t.Errorf("redacted fields = %v, want %v", rep.RedactedFields, want)
	}
	md := export(t, s, store.ExportOptions{Format: "md", Redact: &store.Redactor{}})
	if bytes.Contains(md, []byte("ada@")) || !bytes.Contains(md, []byte("| observation")) && !bytes.Contains(md, []byte("a-000001")) {
		t.Errorf("the redacted markdown export:\n%s", md)
	}
	if again := export(t, s, store.ExportOptions{Redact: &store.Redactor{}}); !bytes.Equal(again, red) {
		t.Errorf("redacting the same journal twice gave two exports:\n%s\n%s", red, again)
	}
	shown := store.DisplayLine(bytes.TrimSpace(red))
	for _, w := range []string{`"path":"$PATH"`, `"host":"$HOST"`, `"actor":"$USER@$HOST"`, `"url":"$URL"`, `"command":"$COMMAND"`, `"reason":"[redacted]"`} {
		if !bytes.Contains(shown, []byte(w)) {
			t.Errorf("the displayed line lacks %s:\n%s", w, shown)
		}
	}
}

// TestCheckFirstRuleAfterContentFrom: doctor (Check) reports an entry of
// the first rule at or after content_authenticated_from: this custody
// never writes one there.
func TestCheckFirstRuleAfterContentFrom(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "custody", store.FileName)
	sc := store.DefaultSchema()
	sc.Migrations = sc.Migrations[:5]
	old, err := store.OpenWith(context.Background(), path, store.Options{Timeout: storetest.Timeout, Create: true, Schema: &sc})
	if err != nil {
		t.Fatal(err)
	}
	lifecycle(t, old, "a-000001", t0)
	s, err := store.Open(path, storetest.Timeout, false)
	if err != nil {
		t.Fatal(err)
	}
	if ps := mustCheck(t, s); len(ps) != 0 {
		t.Fatalf("Check after the upgrade: %+v", ps)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("meta")).Put([]byte("content_authenticated_from"), []byte("2"))
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	ps := mustCheck(t, s)
	if len(ps) != 1 || ps[0].Where != "journal entry 2" || !strings.Contains(ps[0].What, "committed from seq 2") {
		t.Errorf("Check = %+v, want journal entry 2 named as written under the first rule", ps)
	}
}
