package store

import (
	"encoding/json"
	"fmt"

	"github.com/custody-sh/custody/machine"
	bolt "go.etcd.io/bbolt"
)

// Leases returns every lease, by record id.
func (s *Store) Leases() (map[string]*machine.Lease, error) {
	out := map[string]*machine.Lease{}
	err := s.view(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketLeases).ForEach(func(k, v []byte) error {
			var l machine.Lease
			if err := json.Unmarshal(v, &l); err != nil {
				return fmt.Errorf("lease %s: %w (%v)", k, ErrCorrupt, err)
			}
			out[string(k)] = &l
			return nil
		})
	})
	return out, err
}

// PutLease stores (or replaces) the lease on its record.
func (s *Store) PutLease(l machine.Lease) error {
	return s.update(func(tx *bolt.Tx) error { return AcquireLease(l).apply(tx, s) })
}

// DropLease removes the lease on record id, if any.
func (s *Store) DropLease(id string) error {
	return s.update(func(tx *bolt.Tx) error { return ReleaseLease(id).apply(tx, s) })
}
