package store

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/custody-sh/custody/machine"
	bolt "go.etcd.io/bbolt"
)

// Errors of upgrading the store's schema.
var (
	// ErrMigrationFailed is returned when upgrading the state file to this
	// custody's schema failed: the upgrade's one transaction was rolled
	// back, so the file is exactly as it was. The error names the migration
	// that failed and the copy made before it ran.
	ErrMigrationFailed = errors.New("state file schema upgrade failed; nothing was changed")
)

// Upgrade is what a schema upgrade did when a store was opened.
type Upgrade struct {
	// From and To are the file's schema before and after.
	From int `json:"from"`
	To   int `json:"to"`
	// Backup is the copy of the file made before the upgrade ran
	// (state.db.bak-<From>, or .bak-<From>.<n> when that name was taken).
	Backup string `json:"backup"`
}

// failpointMigrateMidway is where a failpoint build dies inside the upgrade's
// transaction, after the first migration wrote and before the commit.
const failpointMigrateMidway = "store/migrate-midway"

// Failpoints lists every named point at which a `failpoint` build of store
// can be killed (CUSTODY_FAILPOINT=<name> sends SIGKILL to the process
// there). Crash tests loop over this list.
func Failpoints() []string { return []string{failpointMigrateMidway} }

// pauseWriteLocked is where a failpoint build holds a write transaction
// with the state file's lock taken (CUSTODY_PAUSE), so a test can show what
// another custody waiting for the lock says of its holder.
const pauseWriteLocked = "state/write-locked"

// PausePoints lists every named point at which a `failpoint` build of
// store can be held (CUSTODY_PAUSE=<name>, CUSTODY_PAUSE_DIR=<dir>).
func PausePoints() []string { return []string{pauseWriteLocked} }

// defaultMigrations lists custody's own migrations, oldest first.
func defaultMigrations() []Migration {
	return []Migration{
		{To: 2, Name: "index every kind's intents", Up: indexEveryKind},
		{To: 3, Name: "approvals of custody.toml", Up: createApprovals},
		{To: 4, Name: "the archives bucket", Up: func(m *Migrator) error { return m.CreateBucket(NameArchives) }},
		{To: 5, Name: "index live records and the journal by record", Up: indexRecordsAndJournal},
		{To: 6, Name: "worktree records say whether custody created their branch", Up: recordBranchOrigin},
		{To: 7, Name: "journal entries commit to their redactable values", Up: commitJournal},
	}
}

// contentSchema is the schema from which journal entries are committed.
const contentSchema = 7

// commitJournal is schema 7 (decision 0252): every journal entry written
// from now on is committed (sealEntry), so a redacted export authenticates
// every value it shows. The entries already written keep the rule they
// were written under and still verify byte for byte; the meta key
// content_authenticated_from records the seq of the first entry that will
// be committed, the journal bucket's next sequence number.
func commitJournal(m *Migrator) error {
	j, err := m.bucket(nameJournal)
	if err != nil {
		return err
	}
	return m.Put(nameMeta, keyContentFrom, []byte(strconv.FormatUint(j.Sequence()+1, 10)))
}

// ContentAuthenticatedFrom returns the seq from which the journal's
// entries are committed (schema 7): 1 for a store made at schema 7 or
// later; for an upgraded one, the first entry written after the upgrade.
func (s *Store) ContentAuthenticatedFrom() (uint64, error) {
	var from uint64
	err := s.view(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketMeta).Get(keyContentFrom)
		if v == nil {
			return nil
		}
		n, err := strconv.ParseUint(string(v), 10, 64)
		if err != nil {
			return fmt.Errorf("%w (content_authenticated_from %q)", ErrCorrupt, v)
		}
		from = n
		return nil
	})
	return from, err
}

// recordBranchOrigin is schema 6: a worktree record may carry
// branch_origin (decision 0243), and one that says `existing` names a
// branch custody did not create (new --checkout). A custody of schema 5
// would take such a record's interrupted creation for its own branch and
// delete the branch, so it must not open the file. Nothing is rewritten:
// a record without the member keeps the rule it was written under
// (machine.BranchOwned).
func recordBranchOrigin(*Migrator) error { return nil }

// createApprovals is schema 3: the approvals bucket, where `custody trust`
// records the digest of each custody.toml content a person approved. A file
// of schema 2 had none: every custody.toml that declares commands needs
// approval once after the upgrade.
func createApprovals(m *Migrator) error { return m.CreateBucket(NameApprovals) }

// indexEveryKind is schema 2: the intent index, keyed by the bare worktree
// record id in schema 1 and blind to the ledger, is rebuilt from the records
// themselves under intentKey(kind, id) for every kind of schema 2, each
// value the record's "intent" as stored. A record that does not parse gets
// no entry (Check reports it).
func indexEveryKind(m *Migrator) error {
	var old [][]byte
	err := m.ForEach(nameIntents, func(k, _ []byte) error {
		old = append(old, bytes.Clone(k))
		return nil
	})
	if err != nil {
		return err
	}
	for _, k := range old {
		if err := m.Delete(nameIntents, k); err != nil {
			return err
		}
	}
	// The kinds as they were at schema 2, not as a later schema lists them:
	// a later kind's bucket does not exist yet at this step.
	for _, b := range []Bucket{{Name: nameRecords, Kind: machine.KindWorktree}, {Name: nameLedger, Kind: machine.KindResource}} {
		err := m.ForEach(b.Name, func(k, v []byte) error {
			rec, err := parseKindRecord(v)
			if err != nil || !rec.hasIntent() {
				return nil
			}
			return m.Put(nameIntents, intentKey(b.Kind, string(k)), rec.Intent)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// Migrator is what a Migration may do inside the upgrade's transaction. Its
// writes become visible only when every pending migration has succeeded.
type Migrator struct {
	tx *bolt.Tx
}

func (m *Migrator) bucket(name string) (*bolt.Bucket, error) {
	b := m.tx.Bucket([]byte(name))
	if b == nil {
		return nil, fmt.Errorf("no %s bucket", name)
	}
	return b, nil
}

// CreateBucket creates the top-level bucket name unless it exists.
func (m *Migrator) CreateBucket(name string) error {
	_, err := m.tx.CreateBucketIfNotExists([]byte(name))
	return err
}

// ForEach calls fn with every key and value of bucket, in key order, and
// stops at fn's first error. k and v are valid only during the call: copy
// them to keep them. fn must not write to bucket itself (collect the keys
// first, then write); it may write to other buckets.
func (m *Migrator) ForEach(bucket string, fn func(k, v []byte) error) error {
	b, err := m.bucket(bucket)
	if err != nil {
		return err
	}
	return b.ForEach(fn)
}

// Get returns a copy of the value under k in bucket, nil when there is none
// (or no such bucket).
func (m *Migrator) Get(bucket string, k []byte) []byte {
	b := m.tx.Bucket([]byte(bucket))
	if b == nil {
		return nil
	}
	return bytes.Clone(b.Get(k))
}

// Put stores v under k in bucket.
func (m *Migrator) Put(bucket string, k, v []byte) error {
	b, err := m.bucket(bucket)
	if err != nil {
		return err
	}
	return b.Put(k, v)
}

// Delete removes k from bucket; a missing key is no error.
func (m *Migrator) Delete(bucket string, k []byte) error {
	b, err := m.bucket(bucket)
	if err != nil {
		return err
	}
	return b.Delete(k)
}

// migrate upgrades the file from schema from to s.schema. It holds the
// write lock throughout: inside the one transaction it re-reads the schema
// (a concurrent custody may have upgraded the file already, and then it does
// nothing), copies the file aside, runs every pending migration and records
// the new schema. Any error rolls the transaction back.
func (s *Store) migrate(from int) error {
	to := s.schema.Version()
	var up *Upgrade
	err := s.write(func(tx *bolt.Tx) error {
		v, err := s.schema.versionOf(tx)
		if err != nil {
			return fmt.Errorf("%s: %w", s.path, err)
		}
		if v >= to {
			return nil // upgraded by another custody since we looked
		}
		backup, err := copyAside(s.path, v)
		if err != nil {
			return &migrationError{path: s.path, step: fmt.Sprintf("copying the file aside before the upgrade to schema %d", to), cause: err}
		}
		m := &Migrator{tx: tx}
		for i, mg := range s.schema.Migrations[v-1:] {
			if err := mg.Up(m); err != nil {
				return &migrationError{path: s.path, step: fmt.Sprintf("migration to schema %d (%s)", mg.To, mg.Name), cause: err, backup: backup}
			}
			if i == 0 {
				failpoint(failpointMigrateMidway)
			}
		}
		if err := tx.Bucket(bucketMeta).Put(keySchema, []byte(strconv.Itoa(to))); err != nil {
			return &migrationError{path: s.path, step: fmt.Sprintf("recording schema %d", to), cause: err, backup: backup}
		}
		up = &Upgrade{From: v, To: to, Backup: backup}
		return nil
	})
	var me *migrationError
	switch {
	case err == nil:
		s.upgraded = up
		return nil
	case errors.As(err, &me), errors.Is(err, ErrCorrupt), errors.Is(err, ErrSchemaNewer):
		return err
	case up != nil:
		// Every migration ran; the commit itself failed and bbolt rolled
		// it back.
		return &migrationError{path: s.path, step: fmt.Sprintf("committing the upgrade to schema %d", to), cause: err, backup: up.Backup}
	}
	return fmt.Errorf("upgrading schema %d to %d needs to write the file: %w", from, to, err)
}

// migrationError is ErrMigrationFailed: which step failed, why, and where
// the copy made before it is.
type migrationError struct {
	path, step string
	cause      error
	backup     string // "" when no copy was made
}

func (e *migrationError) Error() string {
	kept := "the file is as it was"
	if e.backup != "" {
		kept += "; a copy is at " + e.backup
	}
	return fmt.Sprintf("%s: %s failed: %v; nothing was changed (%s)", e.path, e.step, e.cause, kept)
}

func (e *migrationError) Unwrap() []error { return []error{ErrMigrationFailed, e.cause} }

// copyAside copies the state file at path, byte for byte, to
// <path>.bak-<schema> in the same directory, or to .bak-<schema>.1, .2, …
// when that name is taken: an existing copy is never overwritten. The copy
// and the directory are fsynced before it returns. The caller holds the
// file's write lock, so no custody changes the file while it is copied.
func copyAside(path string, schema int) (string, error) {
	src, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer src.Close()
	base := path + ".bak-" + strconv.Itoa(schema)
	for n := 0; n < 1000; n++ {
		name := base
		if n > 0 {
			name = base + "." + strconv.Itoa(n)
		}
		dst, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		if err := writeSynced(dst, src, filepath.Dir(path)); err != nil {
			_ = os.Remove(name)
			return "", fmt.Errorf("copy to %s: %w", name, err)
		}
		return name, nil
	}
	return "", fmt.Errorf("%s and .1 to .999 all exist", base)
}

// writeSynced copies src into dst, fsyncs and closes dst, then fsyncs dir.
func writeSynced(dst *os.File, src io.Reader, dir string) error {
	_, err := io.Copy(dst, src)
	if err == nil {
		err = dst.Sync()
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// validate refuses a Schema the store cannot run on: duplicate or missing
// buckets, two buckets of one kind, migrations out of order.
func (sc Schema) validate() error {
	names := map[string]bool{}
	kinds := map[machine.Kind]bool{}
	for _, b := range sc.Buckets {
		if b.Name == "" || names[b.Name] || (b.Kind != "" && kinds[b.Kind]) {
			return fmt.Errorf("store: invalid schema: bucket %q (kind %q) is empty or repeated", b.Name, b.Kind)
		}
		names[b.Name] = true
		if b.Kind != "" {
			kinds[b.Kind] = true
		}
	}
	for _, n := range []string{nameMeta, nameRecords, nameIntents, nameJournal, nameLeases, nameLedger, namePlans} {
		if !names[n] {
			return fmt.Errorf("store: invalid schema: it lacks the %s bucket", n)
		}
	}
	for i, m := range sc.Migrations {
		if m.To != i+2 || m.Up == nil {
			return fmt.Errorf("store: invalid schema: migration %d (%s) goes to schema %d, want %d with an Up", i, m.Name, m.To, i+2)
		}
	}
	return nil
}
