package store_test

import (
	"os"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/store"
	"github.com/custody-sh/custody/store/storetest"
)

// TestReindexIntents: the intent index is rebuilt from the records when it
// disagrees (a schema-1 bare key, an entry of a record without an intent,
// a missing entry); CarryingIntents reads the records whatever the index
// holds; a second rebuild changes nothing.
func TestReindexIntents(t *testing.T) {
	t.Parallel()
	s := openPlain(t)
	rec := mustCommit(t, s, step(newRecord("a-000001"), machine.StateProvisioning, machine.TriggerCreate, t0))
	mustCommit(t, s, step(newRecord("b-000002"), machine.StateProvisioning, machine.TriggerCreate, t0))
	db, err := bolt.Open(s.Path(), 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		ints := tx.Bucket([]byte("intents"))
		v := ints.Get([]byte("worktree/a-000001"))
		for _, err := range []error{
			ints.Delete([]byte("worktree/a-000001")), ints.Put([]byte("a-000001"), v), // a schema-1 key
			ints.Delete([]byte("worktree/b-000002")), // a lost entry
			ints.Put([]byte("worktree/z-000009"), v), // an entry of no record
		} {
			if err != nil {
				return err
			}
		}
		return nil
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	got, err := store.CarryingIntents[machine.Record](s, machine.KindWorktree)
	if err != nil || len(got) != 2 || got[0].ID != rec.ID || got[1].ID != "b-000002" {
		t.Fatalf("CarryingIntents = %v, %v; want both records", got, err)
	}
	if n, err := s.ReindexIntents(); err != nil || n != 4 {
		t.Errorf("ReindexIntents fixed %d (%v), want 4 (two deleted, two put)", n, err)
	}
	for _, p := range mustCheck(t, s) {
		if p.Fix != "custody resume" {
			t.Errorf("after the rebuild: %s: %s", p.Where, p.What)
		}
	}
	if n, err := s.ReindexIntents(); err != nil || n != 0 {
		t.Errorf("a second ReindexIntents fixed %d (%v), want 0", n, err)
	}
	if ws, err := s.WithIntents(); err != nil || len(ws) != 2 {
		t.Errorf("the rebuilt index lists %v, %v", ws, err)
	}
}

// TestIntentsQuiet: resume's "nothing to do" is what the records and the
// index say, for every version of the file: none at first; a record
// carrying an intent makes it no, for this Store and the next command's;
// once the intent is gone it is yes again, and the next command reads it
// from the stamp; a write by another program (an index entry put in by
// hand) makes the file another, and the answer is read again.
func TestIntentsQuiet(t *testing.T) {
	t.Parallel()
	s := openPlain(t)
	quiet := func(s *store.Store, want bool, when string) {
		t.Helper()
		got, err := s.IntentsQuiet()
		if err != nil || got != want {
			t.Fatalf("%s: IntentsQuiet = %v, %v; want %v", when, got, err, want)
		}
	}
	next := func() *store.Store {
		n, err := store.Open(s.Path(), storetest.Timeout, false)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	quiet(s, true, "an empty state file")
	rec := mustCommit(t, s, step(newRecord("a-000001"), machine.StateProvisioning, machine.TriggerCreate, t0))
	quiet(s, false, "a record carries a create intent")
	quiet(next(), false, "the next command, a record carries a create intent")
	mustCommit(t, s, step(rec, machine.StateActive, machine.TriggerCreated, t0.Add(time.Second)))
	quiet(s, true, "the intent is gone")
	quiet(s, true, "asked again")
	if b, err := os.ReadFile(s.Path() + ".checked"); err != nil || !strings.HasSuffix(strings.TrimSpace(strings.Fields(string(b))[10]), "1") {
		t.Fatalf("the stamp after a quiet answer: %q, %v; want its quiet flag set", b, err)
	}
	quiet(next(), true, "the next command, the intent gone")
	db, err := bolt.Open(s.Path(), 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("intents")).Put([]byte("worktree/z-000009"), []byte(`{"kind":"create"}`))
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	quiet(s, false, "an index entry put in by another program")
	quiet(next(), false, "the next command, an index entry put in by another program")
}
