package store

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/custody-sh/custody/machine"
	bolt "go.etcd.io/bbolt"
)

// GetResource returns the ledger entry with id.
func (s *Store) GetResource(id string) (machine.Resource, error) {
	var r machine.Resource
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketLedger).Get([]byte(id))
		if b == nil {
			return fmt.Errorf("ledger entry %s: %w", id, ErrNotFound)
		}
		if err := json.Unmarshal(b, &r); err != nil {
			return fmt.Errorf("ledger entry %s: %w (%v)", id, ErrCorrupt, err)
		}
		return nil
	})
	return r, err
}

// Resources returns every ledger entry, sorted by id.
func (s *Store) Resources() ([]machine.Resource, error) {
	var out []machine.Resource
	err := s.view(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketLedger).ForEach(func(k, v []byte) error {
			var r machine.Resource
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("ledger entry %s: %w (%v)", k, ErrCorrupt, err)
			}
			out = append(out, r)
			return nil
		})
	})
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, err
}

// ResourceTransition is one ledger entry's state change to persist.
type ResourceTransition struct {
	Before  machine.Resource
	After   machine.Resource
	Trigger machine.Trigger
	Outcome string
	Actor   string
}

// CommitResource persists t in one transaction: the ledger entry (by
// compare-and-swap on its revision) and its journal entry. ErrConflict means
// the entry changed since it was loaded and nothing was written.
func (s *Store) CommitResource(t ResourceTransition) error {
	return s.update(func(tx *bolt.Tx) error {
		l := tx.Bucket(bucketLedger)
		cur := l.Get([]byte(t.After.ID))
		switch {
		case cur == nil && t.Before.State != machine.StateNone:
			return fmt.Errorf("ledger entry %s: %w (it does not exist)", t.After.ID, ErrConflict)
		case cur != nil:
			if t.Before.State == machine.StateNone {
				return fmt.Errorf("ledger entry %s: %w (it already exists)", t.After.ID, ErrConflict)
			}
			var stored machine.Resource
			if err := json.Unmarshal(cur, &stored); err != nil {
				return fmt.Errorf("ledger entry %s: %w (%v)", t.After.ID, ErrCorrupt, err)
			}
			if stored.Rev != t.Before.Rev || stored.State != t.Before.State {
				return fmt.Errorf("ledger entry %s: %w (revision %d is now %d, %s)", t.After.ID, ErrConflict, t.Before.Rev, stored.Rev, stored.State)
			}
		}
		b, err := json.Marshal(t.After)
		if err != nil {
			return err
		}
		if err := l.Put([]byte(t.After.ID), b); err != nil {
			return err
		}
		return appendJournal(tx, Entry{
			At:             t.After.UpdatedAt,
			Record:         t.After.ID,
			Kind:           string(machine.KindResource),
			From:           t.Before.State.String(),
			To:             t.After.State.String(),
			Trigger:        string(t.Trigger),
			ResourceIntent: t.After.Intent,
			Outcome:        t.Outcome,
			Actor:          t.Actor,
		})
	})
}
