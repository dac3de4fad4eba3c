package store

import (
	"errors"
	"fmt"
	"time"

	"github.com/custody-sh/custody/machine"
	json "github.com/custody-sh/custody/machine/bytejson"
	bolt "go.etcd.io/bbolt"
)

// Change is one transition of one record of any kind, to persist.
type Change[R machine.Row] struct {
	// Before is the record as loaded: its zero value (StateNone, rev 0) for
	// a record the transition creates.
	Before R
	// After is the record after the transition (the kind's Next).
	After   R
	Trigger machine.Trigger
	// At is the journal entry's time; zero means After's "updated_at".
	At time.Time
	// Observation is the fingerprint of the observation the guard held
	// over.
	Observation string
	Proof       *machine.Proof
	Outcome     string
	Actor       string
	// Side are writes that must commit atomically with the transition
	// (a lease acquired or released, a port claimed); any of them failing
	// writes nothing at all.
	Side []SideWrite
}

// SideWrite is one write made in the transaction of a transition. Only
// the store makes them (ClaimPort, AcquireLease, ReleaseLease, PutValue),
// so each one keeps its bucket's rules.
type SideWrite struct {
	name  string
	apply func(tx *bolt.Tx, s *Store) error
}

// rowHeader is what the commit path reads of any kind's stored record.
type rowHeader struct {
	ID        string          `json:"id"`
	State     machine.State   `json:"state"`
	Rev       uint64          `json:"rev"`
	Intent    json.RawMessage `json:"intent"`
	UpdatedAt time.Time       `json:"updated_at"`
}

func (h rowHeader) hasIntent() bool { return len(h.Intent) > 0 && string(h.Intent) != "null" }

// Commit persists one worktree transition; see CommitChange.
func (s *Store) Commit(t Transition) error { return CommitChange(s, t) }

// Transition is one worktree record's state change.
type Transition = Change[machine.Record]

// CommitChange persists c in one transaction: the record, by
// compare-and-swap on its (revision, state); its entry in the intent index;
// c's side writes; and a journal entry chained to the previous one. It is
// the one commit path of every kind. ErrConflict means the stored record is
// not c.Before (or exists when c creates it) and nothing was written.
func CommitChange[R machine.Row](s *Store, c Change[R]) error {
	return CommitChanges(s, []Change[R]{c})
}

// CommitChanges persists cs in order in one transaction, each as
// CommitChange persists it: all of them or, when any fails (a conflict, a
// side write), none. A change may follow another of the same record: it
// is compared against what the one before it wrote.
func CommitChanges[R machine.Row](s *Store, cs []Change[R]) error {
	type prepared struct {
		name  string
		kind  machine.Kind
		after []byte
		h     rowHeader
		at    time.Time
	}
	ps := make([]prepared, 0, len(cs))
	for _, c := range cs {
		kind := c.After.RowKind()
		name, ok := s.schema.bucketOf(kind)
		if !ok {
			return fmt.Errorf("%s %s: %w (no bucket holds %s records)", kind, c.After.RowID(), ErrUnknownKind, kind)
		}
		after, err := json.Marshal(c.After)
		if err != nil {
			return err
		}
		var h rowHeader
		if err := json.Unmarshal(after, &h); err != nil {
			return fmt.Errorf("%s %s: the record does not marshal as a custody record: %w", kind, c.After.RowID(), err)
		}
		if h.ID != c.After.RowID() || h.State != c.After.RowState() || h.Rev != c.After.RowRev() {
			panic(fmt.Sprintf("store: %s record %s marshals id/state/rev %q/%s/%d, not %q/%s/%d",
				kind, c.After.RowID(), h.ID, h.State, h.Rev, c.After.RowID(), c.After.RowState(), c.After.RowRev()))
		}
		at := c.At
		if at.IsZero() {
			at = h.UpdatedAt
		}
		ps = append(ps, prepared{name: name, kind: kind, after: after, h: h, at: at})
	}
	return s.update(func(tx *bolt.Tx) error {
		for i, p := range ps {
			c := cs[i]
			b := tx.Bucket([]byte(p.name))
			id := []byte(p.h.ID)
			if err := compareAndSwap(p.kind, p.h.ID, b.Get(id), c.Before.RowRev(), c.Before.RowState()); err != nil {
				return err
			}
			for _, w := range c.Side {
				if err := w.apply(tx, s); err != nil {
					return fmt.Errorf("%s %s: %s: %w", p.kind, p.h.ID, w.name, err)
				}
			}
			if err := b.Put(id, p.after); err != nil {
				return err
			}
			if err := indexIntent(tx, p.kind, p.h); err != nil {
				return err
			}
			if err := indexLive(tx, p.kind, p.h); err != nil {
				return err
			}
			var intent json.RawMessage
			if p.h.hasIntent() {
				intent = p.h.Intent
			}
			if err := appendJournal(tx, Entry{
				At: p.at, Record: p.h.ID, Kind: string(p.kind),
				From: c.Before.RowState().String(), To: c.After.RowState().String(), Trigger: string(c.Trigger),
				Intent: intent, Proof: c.Proof, Observation: c.Observation, Outcome: c.Outcome, Actor: c.Actor,
			}); err != nil {
				return err
			}
		}
		return nil
	})
}

// compareAndSwap checks the stored record cur against the (rev, state) the
// caller loaded.
func compareAndSwap(kind machine.Kind, id string, cur []byte, rev uint64, state machine.State) error {
	switch {
	case cur == nil && rev != 0:
		return fmt.Errorf("%s %s: %w (it no longer exists)", kind, id, ErrConflict)
	case cur == nil && state != machine.StateNone:
		return fmt.Errorf("%s %s: %w (it does not exist)", kind, id, ErrConflict)
	case cur == nil:
		return nil
	case state == machine.StateNone:
		return fmt.Errorf("%s %s: %w (it already exists)", kind, id, ErrConflict)
	}
	var stored rowHeader
	if err := json.Unmarshal(cur, &stored); err != nil {
		return fmt.Errorf("%s %s: %w (%v)", kind, id, ErrCorrupt, err)
	}
	if stored.Rev != rev || stored.State != state {
		return fmt.Errorf("%s %s: %w (revision %d is now %d, %s)", kind, id, ErrConflict, rev, stored.Rev, stored.State)
	}
	return nil
}

// indexIntent keeps the intent index in step with one record.
func indexIntent(tx *bolt.Tx, kind machine.Kind, h rowHeader) error {
	ints := tx.Bucket(bucketIntents)
	if h.hasIntent() {
		return ints.Put(intentKey(kind, h.ID), h.Intent)
	}
	return ints.Delete(intentKey(kind, h.ID))
}

// ClaimPort is the side write of a record that takes port: it fails with
// ErrConflict when a live worktree record already holds it.
func ClaimPort(id string, port int) SideWrite {
	return SideWrite{name: fmt.Sprintf("claim port %d", port), apply: func(tx *bolt.Tx, _ *Store) error {
		if port == 0 {
			return nil
		}
		return tx.Bucket(bucketRecords).ForEach(func(k, v []byte) error {
			var o machine.Record
			if string(k) != id && json.Unmarshal(v, &o) == nil && o.State != machine.StateTombstoned && o.Port == port {
				return fmt.Errorf("%w (port %d is held by %s)", ErrConflict, port, o.ID)
			}
			return nil
		})
	}}
}

// AcquireLease is the side write that stores (or replaces) l.
func AcquireLease(l machine.Lease) SideWrite {
	return SideWrite{name: "acquire lease", apply: func(tx *bolt.Tx, _ *Store) error {
		b, err := json.Marshal(l)
		if err != nil {
			return err
		}
		return tx.Bucket(bucketLeases).Put([]byte(l.Record), b)
	}}
}

// ReleaseLease is the side write that drops the lease on record id.
func ReleaseLease(id string) SideWrite {
	return SideWrite{name: "release lease", apply: func(tx *bolt.Tx, _ *Store) error {
		return tx.Bucket(bucketLeases).Delete([]byte(id))
	}}
}

// PutValue is the side write that stores value (as JSON) under key in one
// of the schema's buckets that holds no records (plans, an approval).
func PutValue(bucket, key string, value any) SideWrite {
	return SideWrite{name: "put " + bucket + "/" + key, apply: func(tx *bolt.Tx, s *Store) error {
		if !s.schema.hasPlainBucket(bucket) {
			return fmt.Errorf("%w (%s is not a bucket side writes may use)", ErrUnknownKind, bucket)
		}
		b, err := json.Marshal(value)
		if err != nil {
			return err
		}
		return tx.Bucket([]byte(bucket)).Put([]byte(key), b)
	}}
}

// Event is a journal entry that is not a transition: an observation, a
// proposal, an approval. It names the record it is about, if any.
type Event struct {
	Record string
	Kind   machine.Kind
	// Event names what happened ("observation", "proposal", "approval").
	Event  string
	At     time.Time
	Detail any
	Actor  string
}

// AppendEvent writes ev to the journal, chained like every entry, with
// side writes in the same transaction.
func (s *Store) AppendEvent(ev Event, side ...SideWrite) error {
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
	return s.update(func(tx *bolt.Tx) error {
		for _, w := range side {
			if err := w.apply(tx, s); err != nil {
				return fmt.Errorf("event %s: %s: %w", ev.Event, w.name, err)
			}
		}
		return appendJournal(tx, Entry{At: ev.At, Record: ev.Record, Kind: string(ev.Kind), Event: ev.Event,
			Detail: detail, Actor: ev.Actor})
	})
}
