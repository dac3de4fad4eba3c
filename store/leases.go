package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/custody-sh/custody/machine"
	json "github.com/custody-sh/custody/machine/bytejson"
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

// errLeaseUnchanged ends a lease transaction that has nothing to write, so
// it rolls back: no fsync, no journal entry.
var errLeaseUnchanged = errors.New("store: the lease is unchanged")

// LeaseChange is one session hook's lease operation on the tree at Path.
type LeaseChange struct {
	// Path is the tree's canonical path; the record must name it exactly.
	Path string
	// Key is git's admin key of the tree: a created tree's record id, so
	// its record is read directly; an adopted tree's record is found by
	// Path among the live records.
	Key     string
	Request machine.LeaseRequest
	// Hook, Agent and Actor go into the journal entry of a change.
	Hook  string
	Agent string
	Actor string
}

// LeaseResult is what ChangeLease found and did.
type LeaseResult struct {
	// Found says a live worktree record names Path; Record is it: its id,
	// kind, state and path, all a lease change reads (recordHead).
	Found    bool
	Record   machine.Record
	Decision machine.LeaseDecision
	// Lease is the record's lease after the change (nil when none).
	Lease *machine.Lease
}

// LeaseEvent is the journal detail of a lease change.
type LeaseEvent struct {
	Hook    string    `json:"hook"`
	Session string    `json:"session"`
	Agent   string    `json:"agent,omitempty"`
	Expires time.Time `json:"expires,omitzero"`
}

// ChangeLease finds the live worktree record of c.Path and decides and
// writes c's lease operation in one write transaction: the record's state
// and its current lease are read, machine.DecideLease decides over them,
// and the lease (put or deleted) and a journal entry ("lease-acquired",
// "lease-renewed", "lease-released") commit together, so the decision is a
// compare-and-swap on exactly what it read. A decision that writes nothing
// (a refusal, a renewal too recent to repeat, no record at Path) rolls the
// transaction back and costs no fsync.
func (s *Store) ChangeLease(c LeaseChange) (LeaseResult, error) {
	return s.changeLease(c, nil)
}

// changeLease is ChangeLease that first runs check (when set) in the
// transaction. A renewal (an agent's heartbeat) is decided first under
// the shared lock: one the request leaves as it is, between renewals, the
// common case, is answered without the write lock, the freelist or the
// holder note, and without making any other custody wait. Only a decision
// that writes opens the file for writing, where it is decided again over
// what that transaction reads. An acquire or a release, which mostly
// write, go to the write transaction at once.
func (s *Store) changeLease(c LeaseChange, check func(*bolt.Tx) error) (LeaseResult, error) {
	var res LeaseResult
	if !s.readOnly && c.Request.Op == machine.LeaseRenew {
		writes := false
		err := s.view(func(tx *bolt.Tx) error {
			var err error
			res, err = decideLeaseIn(tx, c, check)
			writes = err == nil && res.Decision.Writes()
			return err
		})
		switch {
		case errors.Is(err, errLeaseUnchanged):
			return res, nil
		case err != nil:
			return LeaseResult{}, err
		case !writes:
			return res, nil
		}
	}
	err := s.update(func(tx *bolt.Tx) error {
		var err error
		res, err = decideLeaseIn(tx, c, check)
		if err != nil {
			return err
		}
		d := res.Decision
		if !d.Writes() {
			return errLeaseUnchanged
		}
		ev := LeaseEvent{Hook: c.Hook, Session: c.Request.Session, Agent: c.Agent}
		switch {
		case d.Drop:
			if err := ReleaseLease(res.Record.ID).apply(tx, s); err != nil {
				return err
			}
			res.Lease = nil
		default:
			if err := AcquireLease(*d.Put).apply(tx, s); err != nil {
				return err
			}
			res.Lease, ev.Expires = d.Put, d.Put.Expires
		}
		detail, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		return appendJournal(tx, Entry{At: c.Request.Now.UTC(), Record: res.Record.ID, Kind: string(machine.KindWorktree),
			Event: "lease-" + string(d.Outcome), Detail: detail, Actor: c.Actor})
	})
	if errors.Is(err, errLeaseUnchanged) {
		err = nil
	}
	return res, err
}

// decideLeaseIn runs check (when set), then reads in tx the live worktree
// record of c and its lease and decides c's request over them
// (machine.DecideLease). No such record is errLeaseUnchanged with an empty
// result.
func decideLeaseIn(tx *bolt.Tx, c LeaseChange, check func(*bolt.Tx) error) (LeaseResult, error) {
	var res LeaseResult
	if check != nil {
		if err := check(tx); err != nil {
			return res, err
		}
	}
	rec, ok, err := recordAt(tx, c.Key, c.Path)
	if err != nil || !ok {
		if err == nil {
			err = errLeaseUnchanged
		}
		return res, err
	}
	res.Found, res.Record = true, rec
	var cur *machine.Lease
	if v := tx.Bucket(bucketLeases).Get([]byte(rec.ID)); v != nil {
		cur = new(machine.Lease)
		if err := json.Unmarshal(v, cur); err != nil {
			return res, fmt.Errorf("lease %s: %w (%v)", rec.ID, ErrCorrupt, err)
		}
	}
	res.Lease = cur
	res.Decision = machine.DecideLease(rec, cur, c.Request)
	return res, nil
}

// recordHead is the part of a worktree record a lease change reads.
// Decoding only it spares every hook building encoding/json's decoder of
// the whole record (its intent, evidence and proofs); the value is still
// checked to be JSON to its end.
type recordHead struct {
	ID    string        `json:"id"`
	Kind  machine.Kind  `json:"kind"`
	State machine.State `json:"state"`
	Path  string        `json:"path"`
}

// recordAt returns the live worktree record whose path is path: the record
// with id key when it names path, else the one live record that does.
func recordAt(tx *bolt.Tx, key, path string) (machine.Record, bool, error) {
	b := tx.Bucket(bucketRecords)
	decode := func(id string) (machine.Record, bool, error) {
		v := b.Get([]byte(id))
		if v == nil {
			return machine.Record{}, false, nil
		}
		var h recordHead
		if err := json.Unmarshal(v, &h); err != nil {
			return machine.Record{}, false, fmt.Errorf("worktree %s: %w (%v)", id, ErrCorrupt, err)
		}
		r := machine.Record{ID: h.ID, Kind: h.Kind, State: h.State, Path: h.Path}
		return r, r.State != machine.StateTombstoned && r.Path == path, nil
	}
	if key != "" {
		if r, ok, err := decode(key); err != nil || ok {
			return r, ok, err
		}
	}
	prefix := intentKey(machine.KindWorktree, "")
	c := tx.Bucket(bucketLive).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		_, id, ok := splitIntentKey(k)
		if !ok || id == key {
			continue
		}
		if r, ok, err := decode(id); err != nil || ok {
			return r, ok, err
		}
	}
	return machine.Record{}, false, nil
}

// errLeaseNeedsOpen ends a lease transaction on a file of an older schema:
// the caller opens it with OpenContext, which upgrades it, and tries again.
var errLeaseNeedsOpen = errors.New("store: the state file needs an upgrade first")

// ChangeLeaseAt is ChangeLease on the state file at path, for a hook that
// must not make an agent wait: it checks the file's schema and buckets
// inside the lease's own transactions (a read, then a write only when the
// lease changes), where OpenContext would open it once more; the pages are
// walked at most once (see precheck), not at all when the stamp beside the
// file names it (0264). A file
// of an older schema takes the ordinary way (OpenContext upgrades it). It
// returns the store, for what the hook writes next; nil when there is none.
func ChangeLeaseAt(ctx context.Context, path string, timeout time.Duration, c LeaseChange) (LeaseResult, *Store, error) {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return LeaseResult{}, nil, fmt.Errorf("%s: %w", path, ErrNotInitialized)
	}
	s := &Store{path: path, timeout: timeout, ctx: ctx, schema: DefaultSchema()}
	res, err := s.changeLease(c, func(tx *bolt.Tx) error {
		v, err := s.schema.versionOf(tx)
		switch {
		case err == nil && v < s.schema.Version():
			return errLeaseNeedsOpen
		case err == nil:
			err = s.schema.checkLayout(tx)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		return nil
	})
	if !errors.Is(err, errLeaseNeedsOpen) {
		return res, s, err
	}
	if s, err = OpenContext(ctx, path, timeout, false); err != nil {
		return LeaseResult{}, nil, err
	}
	res, err = s.ChangeLease(c)
	return res, s, err
}
