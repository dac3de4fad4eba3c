package store_test

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/store"
	"github.com/custody-sh/custody/store/storetest"
)

// TestCommitChangesAllOrNone: a batch of transitions commits in order in
// one transaction, each following the one before of the same record (a
// whole life, created to tombstoned), chained in the journal as one
// commit each would chain them; a batch whose third transition conflicts
// writes nothing at all, not even the two before it.
func TestCommitChangesAllOrNone(t *testing.T) {
	t.Parallel()
	s := storetest.MustOpen(t)
	trs := life("a-000001", t0)
	if err := store.CommitChanges(s, trs); err != nil {
		t.Fatal(err)
	}
	lines := journal(t, s, "")
	if len(lines) != len(trs) {
		t.Fatalf("the journal holds %d entries after a batch of %d", len(lines), len(trs))
	}
	for i, jl := range lines {
		if jl.entry.Seq != uint64(i+1) || jl.entry.To != trs[i].After.State.String() || jl.entry.Trigger != string(trs[i].Trigger) {
			t.Errorf("entry %d is %+v, want seq %d to %s by %s", i, jl.entry, i+1, trs[i].After.State, trs[i].Trigger)
		}
		if i > 0 && jl.entry.Prev != lines[i-1].entry.Hash {
			t.Errorf("entry %d chains to %s, not to entry %d's hash %s", i, jl.entry.Prev, i-1, lines[i-1].entry.Hash)
		}
	}
	var out bytes.Buffer
	if err := s.Export(&out, store.ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Verify(bytes.NewReader(out.Bytes()), store.VerifyOptions{}); err != nil {
		t.Errorf("the batch's journal does not verify: %v", err)
	}
	if rec, err := s.Get("a-000001"); err != nil || rec.State != machine.StateTombstoned {
		t.Errorf("after the batch the record is %+v, %v; want tombstoned", rec, err)
	}

	bad := life("b-000002", t0.Add(time.Hour))
	bad[2].Before.Rev += 7 // the third compares against a revision never stored
	if err := store.CommitChanges(s, bad); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a batch with a conflicting transition: %v, want ErrConflict", err)
	}
	if n := len(journal(t, s, "")); n != len(trs) {
		t.Errorf("the refused batch left the journal at %d entries, want %d", n, len(trs))
	}
	if _, err := s.Get("b-000002"); err == nil {
		t.Error("the refused batch created its record")
	}
}
