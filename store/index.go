package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/custody-sh/custody/machine"
	json "github.com/custody-sh/custody/machine/bytejson"
	bolt "go.etcd.io/bbolt"
)

// The two indexes of schema 4, kept in the transaction of every write they
// describe, so that the everyday reads cost what they return: list and
// plan never touch a tombstoned record, and show never reads another
// record's journal.
const (
	// nameLive holds intentKey(kind, id) of every record that is not
	// tombstoned, with an empty value.
	nameLive = "live"
	// nameJournalIndex holds journalIndexKey(record, seq) of every journal
	// entry, with an empty value: the entries of one record in order.
	nameJournalIndex = "journal-by-record"
)

var (
	bucketLive         = []byte(nameLive)
	bucketJournalIndex = []byte(nameJournalIndex)
)

// journalIndexKey is an entry's key in the journal index: the record id, a
// NUL (no record id holds one), and the entry's big-endian sequence
// number, so one record's entries sort together and in order.
func journalIndexKey(record string, seq uint64) []byte {
	return append(append([]byte(record), 0), seqKey(seq)...)
}

// indexLive keeps the live index in step with one record.
func indexLive(tx *bolt.Tx, kind machine.Kind, h rowHeader) error {
	live := tx.Bucket(bucketLive)
	if h.State == machine.StateTombstoned {
		return live.Delete(intentKey(kind, h.ID))
	}
	return live.Put(intentKey(kind, h.ID), []byte{})
}

// indexJournal adds entry seq of record to the journal index.
func indexJournal(tx *bolt.Tx, record string, seq uint64) error {
	return tx.Bucket(bucketJournalIndex).Put(journalIndexKey(record, seq), []byte{})
}

// ListLiveKind returns every record of kind that is not tombstoned, sorted
// by id, read through the live index: tombstoned records are not read.
func ListLiveKind[R machine.Row](s *Store, kind machine.Kind) ([]R, error) {
	var out []R
	err := s.view(func(tx *bolt.Tx) error {
		b, err := s.kindBucket(tx, kind)
		if err != nil {
			return err
		}
		prefix := intentKey(kind, "")
		c := tx.Bucket(bucketLive).Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			_, id, ok := splitIntentKey(k)
			if !ok {
				continue
			}
			v := b.Get([]byte(id))
			if v == nil {
				continue // an index entry without its record: Check reports it
			}
			r, err := decodeRow[R](kind, id, v)
			if err != nil {
				return err
			}
			if r.RowState() == machine.StateTombstoned {
				continue // Check reports the stale entry
			}
			out = append(out, r)
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].RowID() < out[j].RowID() })
	return out, err
}

// ListLive returns every worktree record that is not tombstoned, sorted by
// id, without reading the tombstoned ones.
func (s *Store) ListLive() ([]machine.Record, error) {
	return ListLiveKind[machine.Record](s, machine.KindWorktree)
}

// Existing returns which of ids name a worktree record, in any state, in
// one read.
func (s *Store) Existing(ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	err := s.view(func(tx *bolt.Tx) error {
		b, err := s.kindBucket(tx, machine.KindWorktree)
		if err != nil {
			return err
		}
		for _, id := range ids {
			if id != "" && b.Get([]byte(id)) != nil {
				out[id] = true
			}
		}
		return nil
	})
	return out, err
}

// recordJournal calls fn with every journal entry of record, in order,
// through the journal index.
func recordJournal(tx *bolt.Tx, record string, fn func(line []byte, e Entry) error) error {
	j := tx.Bucket(bucketJournal)
	prefix := append([]byte(record), 0)
	c := tx.Bucket(bucketJournalIndex).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		if len(k) != len(prefix)+8 {
			continue // another record's id that starts with this one and a NUL: none can
		}
		seq := binary.BigEndian.Uint64(k[len(prefix):])
		v := j.Get(k[len(prefix):])
		if v == nil {
			return fmt.Errorf("journal entry %d of record %s: %w (indexed, but not in the journal)", seq, record, ErrCorrupt)
		}
		var e Entry
		if err := json.Unmarshal(v, &e); err != nil {
			return fmt.Errorf("journal entry %d: %w (%v)", seq, ErrCorrupt, err)
		}
		if e.Record != record {
			return fmt.Errorf("journal entry %d: %w (indexed under record %s, but of %s)", seq, ErrCorrupt, record, e.Record)
		}
		if err := fn(v, e); err != nil {
			return err
		}
	}
	return nil
}

// indexRecordsAndJournal is schema 4: the live index and the journal index
// are built from the records and the journal themselves. A record or an
// entry that does not parse gets no entry (Check reports it).
func indexRecordsAndJournal(m *Migrator) error {
	for _, name := range []string{nameLive, nameJournalIndex} {
		if err := m.CreateBucket(name); err != nil {
			return err
		}
	}
	return rebuildIndexes(m.tx, []Bucket{{Name: nameRecords, Kind: machine.KindWorktree}, {Name: nameLedger, Kind: machine.KindResource}})
}

// rebuildIndexes empties the live and journal indexes and fills them again
// from the records of kinds and from the journal, in tx.
func rebuildIndexes(tx *bolt.Tx, kinds []Bucket) error {
	for _, name := range [][]byte{bucketLive, bucketJournalIndex} {
		if tx.Bucket(name) != nil {
			if err := tx.DeleteBucket(name); err != nil {
				return err
			}
		}
		if _, err := tx.CreateBucket(name); err != nil {
			return err
		}
	}
	for _, k := range kinds {
		b := tx.Bucket([]byte(k.Name))
		if b == nil {
			continue
		}
		err := b.ForEach(func(id, v []byte) error {
			var h rowHeader
			if json.Unmarshal(v, &h) != nil || h.ID != string(id) {
				return nil
			}
			return indexLive(tx, k.Kind, h)
		})
		if err != nil {
			return err
		}
	}
	return tx.Bucket(bucketJournal).ForEach(func(k, v []byte) error {
		var e Entry
		if len(k) != 8 || json.Unmarshal(v, &e) != nil {
			return nil
		}
		return indexJournal(tx, e.Record, binary.BigEndian.Uint64(k))
	})
}
