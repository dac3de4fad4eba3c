package store

import (
	"bytes"

	"github.com/custody-sh/custody/machine"
	bolt "go.etcd.io/bbolt"
)

// GetResource returns the ledger entry with id.
func (s *Store) GetResource(id string) (machine.Resource, error) {
	return Load[machine.Resource](s, machine.KindResource, id)
}

// Resources returns every ledger entry, sorted by id.
func (s *Store) Resources() ([]machine.Resource, error) {
	return ListKind[machine.Resource](s, machine.KindResource)
}

// ResourceTransition is one ledger entry's state change.
type ResourceTransition = Change[machine.Resource]

// ResourcesOf returns the ledger entries of one worktree (every state),
// sorted by id: a prefix read of the ledger, whose ids are
// "<worktree>/<name>", so the cost is that worktree's entries.
func (s *Store) ResourcesOf(worktree string) ([]machine.Resource, error) {
	var out []machine.Resource
	err := s.view(func(tx *bolt.Tx) error {
		b, err := s.kindBucket(tx, machine.KindResource)
		if err != nil {
			return err
		}
		prefix := []byte(worktree + "/")
		c := b.Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			r, err := decodeRow[machine.Resource](machine.KindResource, string(k), v)
			if err != nil {
				return err
			}
			if r.Worktree == worktree {
				out = append(out, r)
			}
		}
		return nil
	})
	return out, err
}
