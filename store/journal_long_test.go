package store_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/store"
	"github.com/custody-sh/custody/store/storetest"
)

// TestJournalReadsALongJournalWhole: a read of every entry of a journal
// longer than the stretch it reads between two drops of the state file's
// pages (one of them and a part) gives every entry, in order, each line
// the entry the store chained, and the export of it verifies.
func TestJournalReadsALongJournalWhole(t *testing.T) {
	t.Parallel()
	s := storetest.MustOpen(t)
	const n = 8192 + 500
	at := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	batch := make([]store.Event, 0, n)
	for i := range n {
		batch = append(batch, store.Event{Record: fmt.Sprintf("r%06d", i/5), Kind: machine.KindWorktree, Event: "swept",
			At: at.Add(time.Duration(i) * time.Second), Actor: "test@host", Detail: map[string]any{"i": i, "path": fmt.Sprintf("/p/caf\xe9/%d", i)}})
	}
	if err := s.AppendEvents(batch); err != nil {
		t.Fatal(err)
	}
	var seqs []uint64
	if err := s.Journal("", func(line []byte, e store.Entry) error {
		if !bytes.Contains(line, []byte(fmt.Sprintf(`"i":%d`, len(seqs)))) {
			return fmt.Errorf("entry %d is %s", len(seqs), line)
		}
		seqs = append(seqs, e.Seq)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(seqs) != n {
		t.Fatalf("read %d entries of %d", len(seqs), n)
	}
	for i, q := range seqs {
		if q != seqs[0]+uint64(i) {
			t.Fatalf("entry %d has seq %d after %d", i, q, seqs[0])
		}
	}
	var out bytes.Buffer
	if err := s.Export(&out, store.ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Verify(bytes.NewReader(out.Bytes()), store.VerifyOptions{}); err != nil {
		t.Fatalf("the export of the long journal does not verify: %v", err)
	}
}
