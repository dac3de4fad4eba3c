package store

import (
	"errors"

	bolt "go.etcd.io/bbolt"

	json "github.com/custody-sh/custody/machine/bytejson"
)

// AppendEvents writes evs to the journal in order, chained like every
// entry, in one transaction: all of them or none.
func (s *Store) AppendEvents(evs []Event) error {
	entries := make([]Entry, 0, len(evs))
	for _, ev := range evs {
		if ev.Event == "" {
			return errors.New("store: an event needs a name")
		}
		var detail json.RawMessage
		if ev.Detail != nil {
			b, err := json.Marshal(ev.Detail)
			if err != nil {
				return err
			}
			detail = b
		}
		entries = append(entries, Entry{At: ev.At, Record: ev.Record, Kind: string(ev.Kind), Event: ev.Event, Detail: detail, Actor: ev.Actor})
	}
	return s.update(func(tx *bolt.Tx) error {
		for _, e := range entries {
			if err := appendJournal(tx, e); err != nil {
				return err
			}
		}
		return nil
	})
}
