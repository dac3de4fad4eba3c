// Package storetest opens throwaway stores for tests and checks them in
// strict mode when the test ends, in the spirit of bbolt's StrictMode and
// btesting.MustCreateDB: every record/intent invariant store.Check knows and
// the journal's hash chain, exported and verified offline against the head.
package storetest

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custody-sh/custody/store"
)

// Timeout is the lock timeout of the stores MustOpen returns.
const Timeout = 2 * time.Second

// MustOpen creates a fresh store under t.TempDir() and registers a cleanup
// that fails the test if the store is not consistent when the test ends (see
// Strict). A test that corrupts its store on purpose should call store.Open
// itself.
func MustOpen(t testing.TB) *store.Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "custody", store.FileName)
	s, err := store.Open(path, Timeout, true)
	if err != nil {
		t.Fatalf("storetest: open %s: %v", path, err)
	}
	t.Cleanup(func() { Strict(t, s) })
	return s
}

// MustOpenFirstRule is MustOpen for a store of schema 6, whose journal
// entries are written under the first rule (no commitments; decision
// 0252), as every journal written before schema 7 was: for tests of how
// such entries are exported, redacted and verified.
func MustOpenFirstRule(t testing.TB) *store.Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "custody", store.FileName)
	sc := store.DefaultSchema()
	sc.Migrations = sc.Migrations[:5]
	s, err := store.OpenWith(context.Background(), path, store.Options{Timeout: Timeout, Create: true, Schema: &sc})
	if err != nil {
		t.Fatalf("storetest: open %s at schema 6: %v", path, err)
	}
	t.Cleanup(func() { Strict(t, s) })
	return s
}

// Strict fails t (without stopping it) on every inconsistency of s:
//   - any store.Check problem, except records that carry an unfinished
//     intent, which a test may legitimately leave behind;
//   - a jsonl export of the journal that does not verify against the
//     store's head, or whose report disagrees with Head.
func Strict(t testing.TB, s *store.Store) {
	t.Helper()
	problems, err := s.Check()
	if err != nil {
		t.Errorf("storetest: check %s: %v", s.Path(), err)
		return
	}
	for _, p := range problems {
		if strings.Contains(p.What, "unfinished") {
			continue
		}
		t.Errorf("storetest: check %s: %s: %s", s.Path(), p.Where, p.What)
	}

	seq, head, err := s.Head()
	if err != nil {
		t.Errorf("storetest: journal head: %v", err)
		return
	}
	var buf bytes.Buffer
	if err := s.Export(&buf, store.ExportOptions{}); err != nil {
		t.Errorf("storetest: export the journal: %v", err)
		return
	}
	rep, err := store.Verify(&buf, store.VerifyOptions{Head: head})
	if err != nil {
		t.Errorf("storetest: verify the exported journal: %v", err)
		return
	}
	if rep.LastSeq != seq || uint64(rep.Entries) != seq || rep.Head != head || rep.Redacted != 0 {
		t.Errorf("storetest: verify report %+v disagrees with the journal head (seq %d, hash %q)", rep, seq, head)
	}
}
