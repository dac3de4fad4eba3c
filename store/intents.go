package store

import (
	"bytes"
	"errors"

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

// IntentsQuiet reports whether resume has nothing to do: no record of any
// kind carries an intent (its bytes plainly name none, plainlyNoIntent) and
// the intent index is empty. Both are read in one transaction; the answer
// yes is kept with what stands for the file (in the Store and in the
// stamp), so while the file stays exactly so, later commands answer without
// reading a record (decision 0267). Any commit makes the file another, and
// the records are read again.
func (s *Store) IntentsQuiet() (bool, error) {
	quiet := false
	err := s.view(func(tx *bolt.Tx) error {
		cur := s.current.Load()
		txid := uint64(tx.ID())
		if cur != nil && cur.quiet && cur.txid == txid {
			quiet = true
			return nil
		}
		var err error
		if quiet, err = noIntentIn(tx, s.schema); err != nil || !quiet {
			return err
		}
		if cur != nil && cur.txid == txid {
			// Under bbolt's shared lock: no commit can come between the
			// read and the stamp.
			c := *cur
			c.quiet = true
			s.current.Store(&c)
			s.sound.Store(&c)
			s.stampDue.Store(nil)
			writeStamp(s.path, &c)
		}
		return nil
	})
	return quiet, err
}

// errIntentFound ends noIntentIn's scan at the first record that may carry
// an intent.
var errIntentFound = errors.New("a record may carry an intent")

// noIntentIn reports whether, in tx, the intent index is empty and no
// record of any kind of schema plainly carries an intent.
func noIntentIn(tx *bolt.Tx, schema Schema) (bool, error) {
	if ints := tx.Bucket(bucketIntents); ints != nil {
		if k, _ := ints.Cursor().First(); k != nil {
			return false, nil
		}
	}
	for _, b := range schema.kinds() {
		bk := tx.Bucket([]byte(b.Name))
		if bk == nil {
			continue
		}
		err := bk.ForEach(func(_, v []byte) error {
			if !plainlyNoIntent(v) {
				return errIntentFound
			}
			return nil
		})
		if errors.Is(err, errIntentFound) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
	}
	return true, nil
}
