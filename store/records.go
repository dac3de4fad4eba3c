package store

import (
	"fmt"
	"sort"

	"github.com/custody-sh/custody/machine"
	json "github.com/custody-sh/custody/machine/bytejson"
	bolt "go.etcd.io/bbolt"
)

// Load returns the record of kind with id.
func Load[R machine.Row](s *Store, kind machine.Kind, id string) (R, error) {
	var r R
	err := s.view(func(tx *bolt.Tx) error {
		b, err := s.kindBucket(tx, kind)
		if err != nil {
			return err
		}
		r, err = decodeRow[R](kind, id, b.Get([]byte(id)))
		return err
	})
	return r, err
}

// ListKind returns every record of kind, sorted by id.
func ListKind[R machine.Row](s *Store, kind machine.Kind) ([]R, error) {
	return listRows[R](s, kind, func(rowHeader) bool { return true })
}

// listRows returns the records of kind whose header keep accepts, sorted by
// id. A record whose header does not parse is kept, so decoding it reports
// the corruption.
func listRows[R machine.Row](s *Store, kind machine.Kind, keep func(rowHeader) bool) ([]R, error) {
	return listRowsSkipping[R](s, kind, nil, keep)
}

// listRowsSkipping is listRows that first drops, undecoded, each record
// whose stored bytes skip accepts (nil accepts none).
func listRowsSkipping[R machine.Row](s *Store, kind machine.Kind, skip func([]byte) bool, keep func(rowHeader) bool) ([]R, error) {
	var out []R
	err := s.view(func(tx *bolt.Tx) error {
		b, err := s.kindBucket(tx, kind)
		if err != nil {
			return err
		}
		return b.ForEach(func(k, v []byte) error {
			if skip != nil && skip(v) {
				return nil
			}
			var h rowHeader
			if json.Unmarshal(v, &h) == nil && !keep(h) {
				return nil
			}
			r, err := decodeRow[R](kind, string(k), v)
			if err != nil {
				return err
			}
			out = append(out, r)
			return nil
		})
	})
	sort.Slice(out, func(i, j int) bool { return out[i].RowID() < out[j].RowID() })
	return out, err
}

// WithIntentsOf returns the records of kind that carry an intent, read
// through the intent index, sorted by id.
func WithIntentsOf[R machine.Row](s *Store, kind machine.Kind) ([]R, error) {
	var out []R
	err := s.view(func(tx *bolt.Tx) error {
		b, err := s.kindBucket(tx, kind)
		if err != nil {
			return err
		}
		prefix := intentKey(kind, "")
		c := tx.Bucket(bucketIntents).Cursor()
		for k, _ := c.Seek(prefix); k != nil && len(k) > len(prefix) && string(k[:len(prefix)]) == string(prefix); k, _ = c.Next() {
			_, id, _ := splitIntentKey(k)
			v := b.Get([]byte(id))
			if v == nil {
				continue // an index entry without its record: Check reports it
			}
			r, err := decodeRow[R](kind, id, v)
			if err != nil {
				return err
			}
			out = append(out, r)
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].RowID() < out[j].RowID() })
	return out, err
}

func (s *Store) kindBucket(tx *bolt.Tx, kind machine.Kind) (*bolt.Bucket, error) {
	name, ok := s.schema.bucketOf(kind)
	if !ok {
		return nil, fmt.Errorf("%w (no bucket holds %s records)", ErrUnknownKind, kind)
	}
	return tx.Bucket([]byte(name)), nil
}

func decodeRow[R machine.Row](kind machine.Kind, id string, v []byte) (R, error) {
	var r R
	if v == nil {
		return r, fmt.Errorf("%s %s: %w", kind, id, ErrNotFound)
	}
	if err := json.Unmarshal(v, &r); err != nil {
		return r, fmt.Errorf("%s %s: %w (%v)", kind, id, ErrCorrupt, err)
	}
	return r, nil
}

// Get returns the worktree record with id.
func (s *Store) Get(id string) (machine.Record, error) {
	return Load[machine.Record](s, machine.KindWorktree, id)
}

// List returns every worktree record, sorted by id.
func (s *Store) List() ([]machine.Record, error) {
	return ListKind[machine.Record](s, machine.KindWorktree)
}

// WithIntents returns the worktree records that carry an intent, sorted by
// id.
func (s *Store) WithIntents() ([]machine.Record, error) {
	return WithIntentsOf[machine.Record](s, machine.KindWorktree)
}
