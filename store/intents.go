package store

import (
	"bytes"

	"github.com/custody-sh/custody/machine"
	json "github.com/custody-sh/custody/machine/bytejson"
	bolt "go.etcd.io/bbolt"
)

// CarryingIntents returns the records of kind that carry an intent, read
// from the records themselves (not the intent index), sorted by id. Resume
// uses it: the records are the source of truth, so an intent the index
// lacks (written by an older custody after this file was upgraded) is
// still found.
func CarryingIntents[R machine.Row](s *Store, kind machine.Kind) ([]R, error) {
	return listRowsSkipping[R](s, kind, plainlyNoIntent, rowHeader.hasIntent)
}

// plainlyNoIntent reports whether a stored record's bytes show, without
// decoding them, that it carries no intent: no member anywhere in them is
// named intent. custody omits a record's empty intent, so a record without
// one (every tombstone) holds no such name. The decoder matches names
// without regard to case (and keeps underscores and dashes), and a name
// could be written with \u escapes: bytes holding "intent" in any case, or
// any \u escape, are decoded in full. A quote inside a string is escaped,
// so a string value cannot pass for the name. Resume reads every record
// for its intents (the records are the truth): this keeps that read from
// decoding them all.
func plainlyNoIntent(v []byte) bool {
	if bytes.Contains(v, []byte(`\u`)) {
		return false
	}
	for i := 0; i+8 <= len(v); i++ {
		if v[i] == '"' && v[i+7] == '"' && bytes.EqualFold(v[i+1:i+7], []byte("intent")) {
			return false
		}
	}
	return true
}

// ReindexIntents makes the intent index exactly what the records of every
// kind say: an entry "<kind>/<id>" holding the intent of each record that
// carries one, and nothing else (no schema-1 bare keys, no entries of
// records that no longer carry an intent). It reads first and writes only
// when something differs, and reports how many entries it put or deleted.
// It is idempotent; every resume runs it.
func (s *Store) ReindexIntents() (int, error) {
	var stale bool
	if err := s.view(func(tx *bolt.Tx) error {
		var err error
		_, stale, err = s.indexDiff(tx)
		return err
	}); err != nil || !stale {
		return 0, err
	}
	fixed := 0
	err := s.update(func(tx *bolt.Tx) error {
		want, stale, err := s.indexDiff(tx)
		if err != nil || !stale {
			return err
		}
		ints := tx.Bucket(bucketIntents)
		var drop [][]byte
		err = ints.ForEach(func(k, v []byte) error {
			if w, ok := want[string(k)]; !ok || !bytes.Equal(w, v) {
				drop = append(drop, bytes.Clone(k))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range drop {
			if err := ints.Delete(k); err != nil {
				return err
			}
			fixed++
		}
		for k, v := range want {
			if ints.Get([]byte(k)) == nil {
				if err := ints.Put([]byte(k), v); err != nil {
					return err
				}
				fixed++
			}
		}
		return nil
	})
	return fixed, err
}

// indexDiff returns the index the records call for and whether the stored
// one differs from it.
func (s *Store) indexDiff(tx *bolt.Tx) (map[string][]byte, bool, error) {
	want := map[string][]byte{}
	for _, b := range s.schema.kinds() {
		bk := tx.Bucket([]byte(b.Name))
		if bk == nil {
			continue
		}
		err := bk.ForEach(func(k, v []byte) error {
			if plainlyNoIntent(v) {
				return nil
			}
			var h rowHeader
			if json.Unmarshal(v, &h) == nil && h.hasIntent() && h.ID == string(k) {
				want[string(intentKey(b.Kind, h.ID))] = bytes.Clone(h.Intent)
			}
			return nil
		})
		if err != nil {
			return nil, false, err
		}
	}
	ints := tx.Bucket(bucketIntents)
	n, stale := 0, false
	err := ints.ForEach(func(k, v []byte) error {
		n++
		if w, ok := want[string(k)]; !ok || !bytes.Equal(w, v) {
			stale = true
		}
		return nil
	})
	return want, stale || n != len(want), err
}
