package store

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// seedStore makes a small valid store (meta, records, a journal entry, a
// plan) and returns its bytes.
func seedStore(tb testing.TB) []byte {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), FileName)
	s, err := Open(path, time.Second, true)
	if err != nil {
		tb.Fatal(err)
	}
	err = s.update(func(tx *bolt.Tx) error {
		for i := range 3 {
			id := fmt.Sprintf("w-%06d", i)
			if err := tx.Bucket(bucketRecords).Put([]byte(id), fmt.Appendf(nil, `{"id":%q,"state":"active","rev":1,"intent":null}`, id)); err != nil {
				return err
			}
			if err := appendJournal(tx, Entry{Record: id, Kind: "worktree", To: "active", Trigger: "created"}); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketPlans).Put([]byte("sha256:p"), []byte(`{}`))
	})
	if err != nil {
		tb.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// FuzzOpenStore writes the fuzzed bytes as a state file and runs every
// read a read-only command makes on it (the layout check Open makes, the
// repository id, records, intents, leases, the journal, Check): nothing
// may panic, fault or hang, every failure wraps ErrCorrupt or
// ErrUnreadable, and the file is left byte for byte as it was.
//
// The seeds are a valid store, its truncations and its pages zeroed one at
// a time; the fuzzer mutates from there.
func FuzzOpenStore(f *testing.F) {
	good := seedStore(f)
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add(good[:4096])
	f.Add([]byte{})
	for pg := 0; (pg+1)*4096 <= len(good); pg++ {
		d := bytes.Clone(good)
		clear(d[pg*4096 : (pg+1)*4096])
		f.Add(d)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// A hang is a failure the fuzzer must report with its input.
		hang := time.AfterFunc(20*time.Second, func() { panic("the reads of a damaged store hang") })
		defer hang.Stop()
		path := filepath.Join(t.TempDir(), FileName)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		s := &Store{path: path, timeout: time.Second, schema: DefaultSchema()}
		ok := func(op string, err error) {
			if err != nil && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrUnreadable) && !errors.Is(err, ErrSchemaNewer) {
				t.Fatalf("%s: %v, want ErrCorrupt, ErrUnreadable or ErrSchemaNewer", op, err)
			}
		}
		ok("layout", s.view(func(tx *bolt.Tx) error { return s.schema.checkLayout(tx) }))
		_, err := s.RepositoryID()
		ok("RepositoryID", err)
		_, err = s.List()
		ok("List", err)
		_, err = s.WithIntents()
		ok("WithIntents", err)
		_, err = s.Leases()
		ok("Leases", err)
		_, _, err = s.Head()
		ok("Head", err)
		ok("Journal", s.Journal("", func([]byte, Entry) error { return nil }))
		_, err = s.Check()
		ok("Check", err)
		after, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(after, data) {
			t.Fatalf("the reads changed the file (%v)", err)
		}
	})
}

// TestCheckGuardsEachBucket: a panic while one bucket is checked becomes a
// problem of that bucket, and the buckets after it are still checked.
func TestCheckGuardsEachBucket(t *testing.T) {
	t.Parallel()
	c := &checker{}
	c.guard("bucket records", func() { panic("bad page") })
	c.guard("bucket plans", func() { c.add("plan p", "", "does not parse as JSON") })
	want := []Problem{
		{Where: "bucket records", What: "cannot be read (bad page)", Fix: "custody doctor --salvage"},
		{Where: "plan p", What: "does not parse as JSON"},
	}
	if len(c.ps) != 2 || c.ps[0] != want[0] || c.ps[1] != want[1] {
		t.Fatalf("problems = %+v, want %+v", c.ps, want)
	}
}
