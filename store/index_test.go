package store_test

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	bolt "go.etcd.io/bbolt"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/store"
	"github.com/custody-sh/custody/store/storetest"
)

// TestIndexesAnswerAsTheScan: ListLive returns exactly List's records that
// are not tombstoned, and Journal of one record exactly the entries a scan
// of the whole journal finds for it, in order, over a store with records
// in every state and many tombstoned ones; Existing knows tombstoned
// records too. Strict (at cleanup) checks both indexes against the data.
func TestIndexesAnswerAsTheScan(t *testing.T) {
	t.Parallel()
	s := storetest.MustOpen(t)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 30 {
		lifecycle(t, s, fmt.Sprintf("gone-%06d", i), now) // tombstoned
	}
	active := newRecord("act-000001")
	active = mustCommit(t, s, step(active, machine.StateProvisioning, machine.TriggerCreate, now))
	active = mustCommit(t, s, step(active, machine.StateActive, machine.TriggerCreated, now))
	fin := newRecord("fin-000001")
	for _, e := range []struct {
		to machine.State
		tr machine.Trigger
	}{{machine.StateProvisioning, machine.TriggerCreate}, {machine.StateActive, machine.TriggerCreated}, {machine.StateFinished, machine.TriggerFinish}} {
		fin = mustCommit(t, s, step(fin, e.to, e.tr, now))
	}
	prov := mustCommit(t, s, step(newRecord("prov-000001"), machine.StateProvisioning, machine.TriggerCreate, now))

	all, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	var want []machine.Record
	for _, r := range all {
		if r.State != machine.StateTombstoned {
			want = append(want, r)
		}
	}
	got, err := s.ListLive()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ListLive (-scan +index):\n%s", diff)
	}
	if len(got) != 3 || got[0].ID != active.ID || got[1].ID != fin.ID || got[2].ID != prov.ID {
		t.Errorf("ListLive = %d records, want %s, %s and %s", len(got), active.ID, fin.ID, prov.ID)
	}

	for _, id := range []string{"gone-000007", fin.ID, "absent-000000"} {
		var scan, indexed []store.Entry
		if err := s.Journal("", func(_ []byte, e store.Entry) error {
			if e.Record == id {
				scan = append(scan, e)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := s.Journal(id, func(_ []byte, e store.Entry) error { indexed = append(indexed, e); return nil }); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(scan, indexed); diff != "" {
			t.Errorf("Journal(%s) (-scan +index):\n%s", id, diff)
		}
		if id != "absent-000000" && len(indexed) == 0 {
			t.Errorf("Journal(%s) is empty", id)
		}
	}
	ex, err := s.Existing([]string{"gone-000003", fin.ID, "absent-000000"})
	if diff := cmp.Diff(map[string]bool{"gone-000003": true, fin.ID: true}, ex); err != nil || diff != "" {
		t.Errorf("Existing: %v (-want +got):\n%s", err, diff)
	}
}

// TestCheckReportsIndexDamage: an index that disagrees with the data is a
// problem Check names: a live record missing from the live index, a
// tombstoned one in it, a key for no record, a journal entry missing from
// the journal index and a key that names no entry of its record.
func TestCheckReportsIndexDamage(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), store.FileName)
	s, err := store.Open(path, storetest.Timeout, true)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	lifecycle(t, s, "gone-000001", now)
	rec := mustCommit(t, s, step(newRecord("act-000001"), machine.StateProvisioning, machine.TriggerCreate, now))
	if ps := mustCheck(t, s); len(ps) != 1 { // the unfinished create intent only
		t.Fatalf("Check before the damage: %v", ps)
	}
	seqKey := func(n uint64) []byte {
		var k [8]byte
		binary.BigEndian.PutUint64(k[:], n)
		return k[:]
	}
	boltUpdate(t, path, func(tx *bolt.Tx) error {
		live, idx := tx.Bucket([]byte("live")), tx.Bucket([]byte("journal-by-record"))
		for _, err := range []error{
			live.Delete([]byte("worktree/" + rec.ID)),
			live.Put([]byte("worktree/gone-000001"), []byte{}),
			live.Put([]byte("worktree/nobody-000000"), []byte{}),
			idx.Delete(append([]byte("gone-000001\x00"), seqKey(2)...)),
			idx.Put(append([]byte("act-000001\x00"), seqKey(1)...), []byte{}),
		} {
			if err != nil {
				return err
			}
		}
		return nil
	})
	want := []store.Problem{
		{Where: "record act-000001", What: "carries an unfinished create intent", Fix: "custody resume",
			Intent: &store.ProblemIntent{Kind: "worktree", Record: "act-000001", Intent: "create"}},
		{Where: "record act-000001", What: "the live index disagrees with the record (state provisioning)"},
		{Where: "record gone-000001", What: "the live index disagrees with the record (state tombstoned)"},
		{Where: "live worktree/nobody-000000", What: "is indexed for a record that does not exist"},
		{Where: "journal entry 2", What: "is missing from the journal index (custody show would not list it)"},
		{Where: "journal index act-000001/1", What: "names no journal entry of that record"},
	}
	if diff := cmp.Diff(want, mustCheck(t, s), sortProblems); diff != "" {
		t.Errorf("Check of the damaged indexes (-want +got):\n%s", diff)
	}
}

// TestResourcesOfIsAPrefixRead: one worktree's ledger entries, in every
// state, are exactly those Resources lists for it, and no other
// worktree's (not even one whose id begins with this one's).
func TestResourcesOfIsAPrefixRead(t *testing.T) {
	t.Parallel()
	s := storetest.MustOpen(t)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, id := range []string{"a-000001/db", "a-000001/cache", "a-0000012/db", "b-000001/db"} {
		wt, name, _ := strings.Cut(id, "/")
		r := machine.Resource{ID: id, Worktree: wt, Name: name, Create: "true", Destroy: "true",
			State: machine.StateProvisioning, Rev: 1, CreatedAt: now, UpdatedAt: now}
		if err := store.CommitChange(s, store.ResourceTransition{After: r, Trigger: machine.TriggerDeclare, Outcome: "ok", Actor: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	all, err := s.Resources()
	if err != nil {
		t.Fatal(err)
	}
	var want []machine.Resource
	for _, r := range all {
		if r.Worktree == "a-000001" {
			want = append(want, r)
		}
	}
	got, err := s.ResourcesOf("a-000001")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" || len(got) != 2 {
		t.Errorf("ResourcesOf (-scan +prefix), %d entries:\n%s", len(got), diff)
	}
}
