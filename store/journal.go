package store

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/custody-sh/custody/machine"
	json "github.com/custody-sh/custody/machine/bytejson"
	bolt "go.etcd.io/bbolt"
)

// Entry is one journal entry: one state change of one record of any kind,
// or (Event set) an event that is not a transition. Entries are
// append-only; each is chained to the previous by its Hash. An entry
// written since schema 7 is committed (sealEntry: a salt, the redact
// member, Hash = sha256(Prev || "2:" || root of its member digests), each
// redactable value entering through a salted commitment); one written
// before has Hash = sha256(Prev || sha256(canonical body)), where the
// canonical body is the entry's JSON object without "hash", keys sorted,
// compact. Both verify (Verifier).
type Entry struct {
	Seq     uint64    `json:"seq"`
	At      time.Time `json:"at"`
	Record  string    `json:"record"`
	Kind    string    `json:"kind"`
	From    string    `json:"from"`
	To      string    `json:"to"`
	Trigger string    `json:"trigger"`
	// Intent is the intent the record carries after the transition, as
	// the record's kind stores it: Kind says how to read it (a
	// machine.Intent for worktrees, a machine.ResourceIntent for
	// resources). null when there is none.
	Intent json.RawMessage `json:"intent"`
	// LegacyResourceIntent is where entries written before the intent
	// became kind-discriminated carried a resource's intent. It is read,
	// never written, so those entries still verify.
	LegacyResourceIntent json.RawMessage `json:"resource_intent,omitempty"`
	Proof                *machine.Proof  `json:"proof"`
	Observation          string          `json:"observation"`
	Outcome              string          `json:"outcome"`
	Actor                string          `json:"actor"`
	// Event names an entry that is not a transition (an observation, a
	// proposal, an approval); From, To and Trigger are then empty.
	Event string `json:"event,omitempty"`
	// Detail is the event's content.
	Detail json.RawMessage `json:"detail,omitempty"`
	Prev   string          `json:"prev"`
	Hash   string          `json:"hash,omitempty"`
}

// appendJournal chains e to the journal head and stores it under the next
// big-endian sequence number, in the caller's transaction.
func appendJournal(tx *bolt.Tx, e Entry) error {
	j := tx.Bucket(bucketJournal)
	meta := tx.Bucket(bucketMeta)
	seq, err := j.NextSequence()
	if err != nil {
		return err
	}
	e.Seq = seq
	e.Prev = string(meta.Get(keyJournalHead))
	e.Hash = ""
	raw, err := json.Marshal(e)
	if err != nil {
		return err
	}
	var line []byte
	if meta.Get(keyContentFrom) != nil {
		var hash string
		if line, hash, err = sealEntry(raw, e.Prev); err != nil {
			return err
		}
		e.Hash = hash
	} else {
		// A store of a schema before 7 (opened with an older Schema)
		// writes the first rule.
		body, err := canonicalBody(raw)
		if err != nil {
			return err
		}
		e.Hash = chainHash(e.Prev, digest(body))
		if line, err = json.Marshal(e); err != nil {
			return err
		}
	}
	if len(line) > MaxLine {
		return fmt.Errorf("journal entry %d of record %s is %d bytes, more than the %d an export may hold; nothing was written", seq, e.Record, len(line), MaxLine)
	}
	if err := j.Put(seqKey(seq), line); err != nil {
		return err
	}
	if err := indexJournal(tx, e.Record, seq); err != nil {
		return err
	}
	return meta.Put(keyJournalHead, []byte(e.Hash))
}

func seqKey(seq uint64) []byte {
	var k [8]byte
	binary.BigEndian.PutUint64(k[:], seq)
	return k[:]
}

// canonicalBody returns an entry's JSON object without its "hash" and
// "body_digest" members, with sorted keys and compact values.
func canonicalBody(raw []byte) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	delete(m, "hash")
	delete(m, "body_digest")
	return json.Marshal(m)
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func chainHash(prev, bodyDigest string) string {
	sum := sha256.Sum256([]byte(prev + "\n" + bodyDigest))
	return hex.EncodeToString(sum[:])
}

// Head returns the journal's last sequence number and hash.
func (s *Store) Head() (uint64, string, error) {
	var seq uint64
	var head string
	err := s.view(func(tx *bolt.Tx) error {
		head = string(tx.Bucket(bucketMeta).Get(keyJournalHead))
		k, _ := tx.Bucket(bucketJournal).Cursor().Last()
		if k != nil {
			seq = binary.BigEndian.Uint64(k)
		}
		return nil
	})
	return seq, head, err
}

// journalDropEvery is how many entries a read of the whole journal takes
// between two drops of what it touched of the state file (dropMapped): a
// few megabytes of pages.
const journalDropEvery = 8192

// Journal calls fn with every stored entry line of record (all records when
// record is ""), in order, inside one read transaction. The line is the
// stored canonical JSON; fn must not retain it. One record's entries are
// read through the journal index: the cost is theirs, not the journal's.
// A read of the whole journal holds no more of the state file in memory
// than the last few thousand entries' pages (dropMapped).
func (s *Store) Journal(record string, fn func(line []byte, e Entry) error) error {
	return s.view(func(tx *bolt.Tx) error {
		if record != "" {
			return recordJournal(tx, record, fn)
		}
		c := tx.Bucket(bucketJournal).Cursor()
		drop := dropMapped(tx)
		n := 0
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if n++; n%journalDropEvery == 0 {
				drop()
			}
			var e Entry
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("journal entry %d: %w (%v)", binary.BigEndian.Uint64(k), ErrCorrupt, err)
			}
			if record != "" && e.Record != record {
				continue
			}
			if err := fn(v, e); err != nil {
				return err
			}
		}
		return nil
	})
}
