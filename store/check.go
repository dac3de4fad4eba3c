package store

import (
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/custody-sh/custody/machine"
	bolt "go.etcd.io/bbolt"
)

// Problem is one inconsistency Check found.
type Problem struct {
	Where string `json:"where"`
	What  string `json:"what"`
	Fix   string `json:"fix,omitempty"`
}

// Check reads the whole store and reports every problem: records that do
// not parse or hold unknown states, intents that disagree with their
// record, and journal entries that break the hash chain.
func (s *Store) Check() ([]Problem, error) {
	var ps []Problem
	add := func(where, fix, format string, args ...any) {
		ps = append(ps, Problem{Where: where, What: fmt.Sprintf(format, args...), Fix: fix})
	}
	err := s.view(func(tx *bolt.Tx) error {
		ints := tx.Bucket(bucketIntents)
		err := tx.Bucket(bucketRecords).ForEach(func(k, v []byte) error {
			var rec machine.Record
			if err := json.Unmarshal(v, &rec); err != nil {
				add("record "+string(k), "", "does not parse: %v", err)
				return nil
			}
			if !rec.State.Valid() {
				add("record "+string(k), "", "unknown state %q", rec.State)
			}
			if rec.ID != string(k) {
				add("record "+string(k), "", "is stored under the wrong key (id %q)", rec.ID)
			}
			hasIntent := ints.Get(intentKey(machine.KindWorktree, string(k))) != nil
			if (rec.Intent != nil) != hasIntent {
				add("record "+string(k), "custody resume", "intent index disagrees with the record")
			}
			if rec.Intent != nil {
				add("record "+string(k), "custody resume", "carries an unfinished %s intent", rec.Intent.Kind)
			}
			return nil
		})
		if err != nil {
			return err
		}
		recs := tx.Bucket(bucketRecords)
		err = ints.ForEach(func(k, _ []byte) error {
			kind, id, _ := splitIntentKey(k)
			if kind != machine.KindWorktree {
				return nil
			}
			if recs.Get([]byte(id)) == nil {
				add("intent "+string(k), "", "is indexed for a record that does not exist")
			}
			return nil
		})
		if err != nil {
			return err
		}
		var prev string
		var want uint64 = 1
		c := tx.Bucket(bucketJournal).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			var e Entry
			if err := json.Unmarshal(v, &e); err != nil {
				add(fmt.Sprintf("journal entry %d", binary.BigEndian.Uint64(k)), "", "does not parse: %v", err)
				return nil
			}
			body, err := canonicalBody(v)
			if err != nil || e.Seq != want || e.Prev != prev || chainHash(e.Prev, digest(body)) != e.Hash {
				add(fmt.Sprintf("journal entry %d", e.Seq), "", "breaks the hash chain")
				return nil
			}
			prev, want = e.Hash, want+1
		}
		if head := string(tx.Bucket(bucketMeta).Get(keyJournalHead)); head != prev {
			add("journal head", "", "meta head %q is not the last entry's hash %q", head, prev)
		}
		return nil
	})
	return ps, err
}
