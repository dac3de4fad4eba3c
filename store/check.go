package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/custody-sh/custody/machine"
	json "github.com/custody-sh/custody/machine/bytejson"
	bolt "go.etcd.io/bbolt"
)

// Problem is one inconsistency Check found.
type Problem struct {
	Where string `json:"where"`
	What  string `json:"what"`
	Fix   string `json:"fix,omitempty"`
	// Intent names the record and the intent when the problem is a
	// record's unfinished intent (fixed by custody resume); nil for every
	// other problem. It is for callers matching problems, not printed.
	Intent *ProblemIntent `json:"-"`
}

// ProblemIntent is the record whose unfinished intent a Problem reports.
type ProblemIntent struct {
	Kind   machine.Kind
	Record string
	// Intent is the intent's kind, as the record spells it.
	Intent machine.IntentKind
}

// Check reads the whole store and reports every problem, bucket by bucket
// of the store's schema: records of every kind that do not parse, hold
// unknown states, lack a revision or sit under another key; records whose
// intent disagrees with the intent index, and index entries that are not
// "<kind>/<id>" or name no record; leases that do not parse or name no
// worktree record; plans that are not JSON; meta without schema or
// repository id; and journal entries that break the hash chain. A record
// that carries an unfinished intent is reported too, with `custody resume`
// as the fix.
func (s *Store) Check() ([]Problem, error) {
	c := &checker{schema: s.schema}
	err := s.viewWalked(true, func(tx *bolt.Tx) error {
		var ints *bolt.Bucket
		c.guard("bucket "+nameIntents, func() { ints = c.bucket(tx, nameIntents) })
		for _, b := range s.schema.kinds() {
			c.guard("bucket "+b.Name, func() { c.kind(c.bucket(tx, b.Name), b, ints) })
		}
		c.guard("bucket "+nameIntents, func() { c.index(tx, ints) })
		c.guard("bucket "+nameLeases, func() { c.leases(tx) })
		c.guard("bucket "+namePlans, func() { c.plans(c.bucket(tx, namePlans)) })
		if tx.Bucket([]byte(NameApprovals)) != nil {
			c.guard("bucket "+NameApprovals, func() { c.approvals(tx.Bucket([]byte(NameApprovals))) })
		}
		c.guard("bucket "+nameMeta, func() { c.meta(c.bucket(tx, nameMeta)) })
		c.guard("bucket "+nameJournal, func() { c.journal(c.bucket(tx, nameJournal), c.bucket(tx, nameMeta)) })
		if live := tx.Bucket(bucketLive); live != nil {
			c.guard("bucket "+nameLive, func() { c.live(tx, live) })
		}
		if idx := tx.Bucket(bucketJournalIndex); idx != nil {
			c.guard("bucket "+nameJournalIndex, func() { c.journalIndex(c.bucket(tx, nameJournal), idx) })
		}
		return nil
	})
	return c.ps, err
}

// guard runs one bucket's check and turns a panic inside it (bbolt on a
// damaged page) into a problem of that bucket, so the other buckets are
// still checked.
func (c *checker) guard(where string, fn func()) {
	defer func() {
		if p := recover(); p != nil {
			c.add(where, "custody doctor --salvage", "cannot be read (%v)", p)
		}
	}()
	fn()
}

// checker collects Check's problems.
type checker struct {
	schema Schema
	ps     []Problem
}

func (c *checker) add(where, fix, format string, args ...any) {
	c.ps = append(c.ps, Problem{Where: where, What: fmt.Sprintf(format, args...), Fix: fix})
}

// bucket returns the named bucket, reporting it (and returning nil) when
// the file lacks it.
func (c *checker) bucket(tx *bolt.Tx, name string) *bolt.Bucket {
	b := tx.Bucket([]byte(name))
	if b == nil {
		c.add("bucket "+name, "", "is missing")
	}
	return b
}

// kindRecord is what every kind's record carries (see Bucket).
type kindRecord struct {
	ID     *string         `json:"id"`
	State  *machine.State  `json:"state"`
	Rev    *uint64         `json:"rev"`
	Intent json.RawMessage `json:"intent"`
}

func parseKindRecord(v []byte) (kindRecord, error) {
	var r kindRecord
	err := json.Unmarshal(v, &r)
	return r, err
}

func (r kindRecord) hasIntent() bool { return len(r.Intent) > 0 && string(r.Intent) != "null" }

// recordLabel names a record in a Problem: "record <id>" for a worktree (as
// doctor always printed it), "<kind> <id>" for every other kind.
func recordLabel(kind machine.Kind, id string) string {
	if kind == machine.KindWorktree {
		return "record " + id
	}
	return string(kind) + " " + id
}

// kind checks every record of one registered kind's bucket: it decodes
// into the kind's Go record type when the kind registers one (reg.Record),
// and its intent agrees with the index.
func (c *checker) kind(b *bolt.Bucket, reg Bucket, ints *bolt.Bucket) {
	kind := reg.Kind
	if b == nil {
		return
	}
	_ = b.ForEach(func(k, v []byte) error {
		where := recordLabel(kind, string(k))
		rec, err := parseKindRecord(v)
		if err == nil && reg.Record != nil {
			err = json.Unmarshal(v, reg.Record())
		}
		if err != nil {
			c.add(where, "", "does not parse: %v", err)
			return nil
		}
		if rec.State == nil || !rec.State.Valid() {
			var st machine.State
			if rec.State != nil {
				st = *rec.State
			}
			c.add(where, "", "unknown state %q", st)
		}
		switch {
		case rec.ID == nil:
			c.add(where, "", "has no id")
		case *rec.ID != string(k):
			c.add(where, "", "is stored under the wrong key (id %q)", *rec.ID)
		}
		if rec.Rev == nil {
			c.add(where, "", "has no revision")
		}
		indexed := ints != nil && ints.Get(intentKey(kind, string(k))) != nil
		if ints != nil && rec.hasIntent() != indexed {
			c.add(where, "custody resume", "intent index disagrees with the record")
		}
		if rec.hasIntent() {
			var in struct {
				Kind string `json:"kind"`
			}
			if err := json.Unmarshal(rec.Intent, &in); err != nil {
				c.add(where, "", "its intent does not parse: %v", err)
			} else {
				c.ps = append(c.ps, Problem{Where: where, What: fmt.Sprintf("carries an unfinished %s intent", in.Kind), Fix: "custody resume",
					Intent: &ProblemIntent{Kind: kind, Record: string(k), Intent: machine.IntentKind(in.Kind)}})
			}
		}
		return nil
	})
}

// index checks that every intent index key names a record of a known kind.
// (A record without intent that is indexed is reported by kind.)
func (c *checker) index(tx *bolt.Tx, ints *bolt.Bucket) {
	if ints == nil {
		return
	}
	_ = ints.ForEach(func(k, _ []byte) error {
		where := "intent " + string(k)
		kind, id, ok := splitIntentKey(k)
		if !ok {
			c.add(where, "", "is not a <kind>/<id> key (a schema-1 index entry?)")
			return nil
		}
		name, known := c.schema.bucketOf(kind)
		if !known {
			c.add(where, "", "names kind %q, which this custody does not know", kind)
			return nil
		}
		if b := tx.Bucket([]byte(name)); b == nil || b.Get([]byte(id)) == nil {
			c.add(where, "", "is indexed for a record that does not exist")
		}
		return nil
	})
}

// leases checks that every lease parses and names an existing worktree
// record.
func (c *checker) leases(tx *bolt.Tx) {
	b := c.bucket(tx, nameLeases)
	if b == nil {
		return
	}
	var recs *bolt.Bucket
	if name, ok := c.schema.bucketOf(machine.KindWorktree); ok {
		recs = tx.Bucket([]byte(name))
	}
	_ = b.ForEach(func(k, v []byte) error {
		where := "lease " + string(k)
		var l machine.Lease
		if err := json.Unmarshal(v, &l); err != nil {
			c.add(where, "", "does not parse: %v", err)
			return nil
		}
		if l.Record != string(k) {
			c.add(where, "", "is stored under the wrong key (record %q)", l.Record)
		}
		if recs == nil || recs.Get(k) == nil {
			c.add(where, "", "names a record that does not exist")
		}
		return nil
	})
}

// plans checks that every stored plan is JSON.
func (c *checker) plans(b *bolt.Bucket) {
	if b == nil {
		return
	}
	_ = b.ForEach(func(k, v []byte) error {
		if !json.Valid(v) {
			c.add("plan "+string(k), "", "does not parse as JSON")
		}
		return nil
	})
}

// approvals checks that every approval is keyed by a sha256 digest (64
// lowercase hex) and holds JSON.
func (c *checker) approvals(b *bolt.Bucket) {
	_ = b.ForEach(func(k, v []byte) error {
		if !isHexDigest(string(k)) {
			c.add("approval "+strconv.Quote(string(k)), "custody trust", "is not keyed by a sha256 digest of custody.toml")
		}
		if !json.Valid(v) {
			c.add("approval "+strconv.Quote(string(k)), "custody trust", "does not parse as JSON")
		}
		return nil
	})
}

// isHexDigest reports whether s is 64 lowercase hex digits.
func isHexDigest(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return false
		}
	}
	return true
}

// meta checks the schema version and the repository id.
func (c *checker) meta(m *bolt.Bucket) {
	if m == nil {
		return
	}
	if _, err := strconv.Atoi(string(m.Get(keySchema))); err != nil {
		c.add("meta", "", "schema version %q is not a number", m.Get(keySchema))
	}
	if len(m.Get(keyRepoID)) == 0 {
		c.add("meta", "", "has no repository id")
	}
}

// journal checks the hash chain from the first entry to the meta head, and
// stops at the first entry that breaks it. Entries a salvage event names
// as lost are no break: the entry after them need only verify itself.
func (c *checker) journal(j, meta *bolt.Bucket) {
	if j == nil || meta == nil {
		return
	}
	lost := salvagedLoss(j)
	var prev string
	var want uint64 = 1
	// From content_authenticated_from on, every entry is committed
	// (decision 0252): one of the first rule there was not written by
	// this custody.
	committedFrom, _ := strconv.ParseUint(string(meta.Get(keyContentFrom)), 10, 64)
	cur := j.Cursor()
	for k, v := cur.First(); k != nil; k, v = cur.Next() {
		var e Entry
		if err := json.Unmarshal(v, &e); err != nil {
			c.add(fmt.Sprintf("journal entry %d", binary.BigEndian.Uint64(k)), "", "does not parse: %v", err)
			return
		}
		if committedFrom != 0 && e.Seq >= committedFrom && !isCommitted(v) {
			c.add(fmt.Sprintf("journal entry %d", e.Seq), "", "is written under the first rule, but entries are committed from seq %d on (content_authenticated_from)", committedFrom)
			return
		}
		own := e.Seq == binary.BigEndian.Uint64(k) && entryHashOK(v, e.Prev, e.Hash)
		// A salvage event accounts for the entries it names as lost: the
		// entry after them cannot chain to them, and that is no new break.
		linked := e.Seq == want && e.Prev == prev || e.Seq >= want && lost[e.Seq-1]
		if !own || !linked {
			c.add(fmt.Sprintf("journal entry %d", e.Seq), "", "breaks the hash chain")
			return
		}
		prev, want = e.Hash, e.Seq+1
	}
	if head := string(meta.Get(keyJournalHead)); head != prev {
		c.add("journal head", "", "meta head %q is not the last entry's hash %q", head, prev)
	}
}

// salvagedLoss returns the journal sequence numbers that salvage events
// (see Salvage) recorded as lost.
func salvagedLoss(j *bolt.Bucket) map[uint64]bool {
	lost := map[uint64]bool{}
	_ = j.ForEach(func(_, v []byte) error {
		if !bytes.Contains(v, []byte(`"event":"salvage"`)) {
			return nil
		}
		var e struct {
			Event  string `json:"event"`
			Detail struct {
				LostJournal []uint64 `json:"lost_journal"`
			} `json:"detail"`
		}
		if json.Unmarshal(v, &e) == nil && e.Event == "salvage" {
			for _, s := range e.Detail.LostJournal {
				lost[s] = true
			}
		}
		return nil
	})
	return lost
}

// live checks the live index against the records: every record that is
// not tombstoned is indexed, and every index key names one.
func (c *checker) live(tx *bolt.Tx, live *bolt.Bucket) {
	for _, b := range c.schema.kinds() {
		rb := tx.Bucket([]byte(b.Name))
		if rb == nil {
			continue
		}
		_ = rb.ForEach(func(k, v []byte) error {
			var h rowHeader
			if json.Unmarshal(v, &h) != nil || h.ID != string(k) {
				return nil // kind reports it
			}
			indexed := live.Get(intentKey(b.Kind, string(k))) != nil
			if tomb := h.State == machine.StateTombstoned; tomb == indexed {
				c.add(recordLabel(b.Kind, string(k)), "", "the live index disagrees with the record (state %s)", h.State)
			}
			return nil
		})
	}
	_ = live.ForEach(func(k, _ []byte) error {
		kind, id, ok := splitIntentKey(k)
		name, known := c.schema.bucketOf(kind)
		if !ok || !known {
			c.add("live "+string(k), "", "is not a <kind>/<id> key of a known kind")
			return nil
		}
		if b := tx.Bucket([]byte(name)); b == nil || b.Get([]byte(id)) == nil {
			c.add("live "+string(k), "", "is indexed for a record that does not exist")
		}
		return nil
	})
}

// journalIndex checks the journal index against the journal: every entry
// is indexed under its record, and every index key names an entry of that
// record.
func (c *checker) journalIndex(j, idx *bolt.Bucket) {
	if j == nil {
		return
	}
	_ = j.ForEach(func(k, v []byte) error {
		var e Entry
		if len(k) != 8 || json.Unmarshal(v, &e) != nil {
			return nil // journal reports it
		}
		if idx.Get(journalIndexKey(e.Record, binary.BigEndian.Uint64(k))) == nil {
			c.add(fmt.Sprintf("journal entry %d", binary.BigEndian.Uint64(k)), "", "is missing from the journal index (custody show would not list it)")
		}
		return nil
	})
	_ = idx.ForEach(func(k, _ []byte) error {
		i := bytes.IndexByte(k, 0)
		if i < 0 || len(k) != i+9 {
			c.add(fmt.Sprintf("journal index %q", k), "", "is not a <record>\\x00<seq> key")
			return nil
		}
		var e Entry
		v := j.Get(k[i+1:])
		if v == nil || json.Unmarshal(v, &e) != nil || e.Record != string(k[:i]) {
			c.add(fmt.Sprintf("journal index %s/%d", k[:i], binary.BigEndian.Uint64(k[i+1:])), "", "names no journal entry of that record")
		}
		return nil
	})
}
