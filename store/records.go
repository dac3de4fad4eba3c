package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/custody-sh/custody/machine"
	bolt "go.etcd.io/bbolt"
)

// Get returns the record with id.
func (s *Store) Get(id string) (machine.Record, error) {
	var rec machine.Record
	err := s.view(func(tx *bolt.Tx) error {
		r, err := getRecord(tx, id)
		rec = r
		return err
	})
	return rec, err
}

func getRecord(tx *bolt.Tx, id string) (machine.Record, error) {
	var rec machine.Record
	b := tx.Bucket(bucketRecords).Get([]byte(id))
	if b == nil {
		return rec, fmt.Errorf("record %s: %w", id, ErrNotFound)
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return rec, fmt.Errorf("record %s: %w (%v)", id, ErrCorrupt, err)
	}
	return rec, nil
}

// List returns every record, sorted by id.
func (s *Store) List() ([]machine.Record, error) {
	var out []machine.Record
	err := s.view(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketRecords).ForEach(func(k, v []byte) error {
			var rec machine.Record
			if err := json.Unmarshal(v, &rec); err != nil {
				return fmt.Errorf("record %s: %w (%v)", k, ErrCorrupt, err)
			}
			out = append(out, rec)
			return nil
		})
	})
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, err
}

// Transition is one state change to persist.
type Transition struct {
	// Before is the record as loaded (zero Rev for a new record).
	Before machine.Record
	// After is machine.Next's result.
	After   machine.Record
	Trigger machine.Trigger
	// Observation is the fingerprint of the observation the guard held
	// over.
	Observation string
	Proof       *machine.Proof
	Outcome     string
	Actor       string
}

// Commit persists t in one transaction: the record (by compare-and-swap on
// its revision), its intent index, and a journal entry chained to the
// previous one. It returns ErrConflict, writing nothing, if the stored record
// is not t.Before.
func (s *Store) Commit(t Transition) error {
	return s.update(func(tx *bolt.Tx) error {
		recs := tx.Bucket(bucketRecords)
		cur := recs.Get([]byte(t.After.ID))
		switch {
		case cur == nil && t.Before.Rev != 0:
			return fmt.Errorf("record %s: %w (it no longer exists)", t.After.ID, ErrConflict)
		case cur == nil && t.Before.State != machine.StateNone:
			return fmt.Errorf("record %s: %w (it does not exist)", t.After.ID, ErrConflict)
		case cur != nil:
			var stored machine.Record
			if err := json.Unmarshal(cur, &stored); err != nil {
				return fmt.Errorf("record %s: %w (%v)", t.After.ID, ErrCorrupt, err)
			}
			if t.Before.State == machine.StateNone {
				return fmt.Errorf("record %s: %w (it already exists)", t.After.ID, ErrConflict)
			}
			if stored.Rev != t.Before.Rev || stored.State != t.Before.State {
				return fmt.Errorf("record %s: %w (revision %d is now %d, %s)", t.After.ID, ErrConflict, t.Before.Rev, stored.Rev, stored.State)
			}
		}
		if cur == nil && t.After.Port != 0 {
			// A new record's port must be free among live records: checked
			// here, in the transaction that claims it.
			err := recs.ForEach(func(k, v []byte) error {
				var o machine.Record
				if json.Unmarshal(v, &o) == nil && o.State != machine.StateTombstoned && o.Port == t.After.Port {
					return fmt.Errorf("record %s: %w (port %d is held by %s)", t.After.ID, ErrConflict, o.Port, o.ID)
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		b, err := json.Marshal(t.After)
		if err != nil {
			return err
		}
		if err := recs.Put([]byte(t.After.ID), b); err != nil {
			return err
		}
		ints := tx.Bucket(bucketIntents)
		if t.After.Intent != nil {
			ib, err := json.Marshal(t.After.Intent)
			if err != nil {
				return err
			}
			if err := ints.Put([]byte(t.After.ID), ib); err != nil {
				return err
			}
		} else if err := ints.Delete([]byte(t.After.ID)); err != nil {
			return err
		}
		return appendJournal(tx, Entry{
			At:          t.After.UpdatedAt,
			Record:      t.After.ID,
			Kind:        string(t.After.Kind),
			From:        t.Before.State.String(),
			To:          t.After.State.String(),
			Trigger:     string(t.Trigger),
			Intent:      t.After.Intent,
			Proof:       t.Proof,
			Observation: t.Observation,
			Outcome:     t.Outcome,
			Actor:       t.Actor,
		})
	})
}

// WithIntents returns the records that carry an intent, sorted by id.
func (s *Store) WithIntents() ([]machine.Record, error) {
	var out []machine.Record
	err := s.view(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketIntents).ForEach(func(k, _ []byte) error {
			rec, err := getRecord(tx, string(k))
			if errors.Is(err, ErrNotFound) {
				return nil // an index entry without its record: Check reports it
			}
			if err != nil {
				return err
			}
			out = append(out, rec)
			return nil
		})
	})
	return out, err
}
