package store

import (
	"slices"
	"strings"

	"github.com/custody-sh/custody/machine"
)

// Bucket is one top-level bucket of the state file. A bucket with a Kind
// holds that kind's records: JSON objects carrying at least "id", "state",
// "rev" and "intent" (null or absent when there is none). The commit path,
// the intent index and Check treat every such bucket alike, so a new kind
// needs no code of its own here.
type Bucket struct {
	Name string
	// Kind is the record kind the bucket holds; "" for other buckets
	// (meta, journal, leases, plans, the intent index).
	Kind machine.Kind
	// Record returns a new value of the kind's Go record type, which every
	// record of the bucket must also decode into (doctor's typed check);
	// nil for a kind with none.
	Record func() any
}

// Migration takes a state file from schema To-1 to schema To. Up runs
// inside the single transaction of an upgrade: an error (or a crash)
// leaves the file exactly as it was.
type Migration struct {
	To   int
	Name string
	Up   func(m *Migrator) error
}

// Schema is the layout one custody binary reads and writes: its buckets
// and the ordered migrations that reach it from schema 1. Its version is
// 1 + len(Migrations). A Schema is a value: a test or a later kind extends
// a copy with With, never a shared registry.
type Schema struct {
	Buckets    []Bucket
	Migrations []Migration
}

// Bucket names of custody's own layout.
const (
	nameMeta    = "meta"
	nameRecords = "records"
	nameIntents = "intents"
	nameJournal = "journal"
	nameLeases  = "leases"
	nameLedger  = "ledger"
	namePlans   = "plans"
	// NameApprovals holds the approved custody.toml contents, keyed by the
	// sha256 of the file's bytes (schema 3 on).
	NameApprovals = "approvals"
	// NameArchives holds the archive records (schema 4 on): the third
	// persisted kind, keyed by archive id.
	NameArchives = "archives"
)

// DefaultSchema returns custody's own layout: worktree records, the
// resource ledger, archive records, and the shared meta, intent index,
// journal, leases, plans and approvals buckets, and the live and journal
// indexes.
func DefaultSchema() Schema {
	return Schema{
		Buckets: []Bucket{
			{Name: nameMeta}, {Name: nameRecords, Kind: machine.KindWorktree, Record: func() any { return &machine.Record{} }}, {Name: nameIntents},
			{Name: nameJournal}, {Name: nameLeases}, {Name: nameLedger, Kind: machine.KindResource, Record: func() any { return &machine.Resource{} }}, {Name: namePlans},
			{Name: NameApprovals}, {Name: NameArchives, Kind: machine.KindArchive, Record: func() any { return &machine.Archive{} }}, {Name: nameLive}, {Name: nameJournalIndex},
		},
		Migrations: defaultMigrations(),
	}
}

// Version is the schema number a store of s carries in its meta bucket.
func (s Schema) Version() int { return 1 + len(s.Migrations) }

// With returns a copy of s with bucket b added and migration m appended:
// how a new kind is registered. m.To must be s.Version()+1.
func (s Schema) With(b Bucket, m Migration) Schema {
	return Schema{Buckets: append(slices.Clone(s.Buckets), b), Migrations: append(slices.Clone(s.Migrations), m)}
}

// bucketOf returns the name of the bucket that holds kind's records.
func (s Schema) bucketOf(kind machine.Kind) (string, bool) {
	for _, b := range s.Buckets {
		if b.Kind != "" && b.Kind == kind {
			return b.Name, true
		}
	}
	return "", false
}

// hasPlainBucket reports whether name is a bucket of s that holds no
// records and is not the store's own (meta, journal, intent index).
func (s Schema) hasPlainBucket(name string) bool {
	switch name {
	case nameMeta, nameJournal, nameIntents, nameLive, nameJournalIndex:
		return false
	}
	for _, b := range s.Buckets {
		if b.Name == name && b.Kind == "" {
			return true
		}
	}
	return false
}

// kinds returns the record kinds of s in bucket order.
func (s Schema) kinds() []Bucket {
	var out []Bucket
	for _, b := range s.Buckets {
		if b.Kind != "" {
			out = append(out, b)
		}
	}
	return out
}

// intentKey is a record's key in the intent index: "<kind>/<id>". Every
// kind's records that carry an intent are indexed there (schema 2 on).
func intentKey(kind machine.Kind, id string) []byte { return []byte(string(kind) + "/" + id) }

// splitIntentKey is the inverse of intentKey.
func splitIntentKey(k []byte) (machine.Kind, string, bool) {
	kind, id, ok := strings.Cut(string(k), "/")
	return machine.Kind(kind), id, ok && kind != "" && id != ""
}
