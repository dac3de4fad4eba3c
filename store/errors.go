// Package store keeps custody's state in one bbolt file per repository:
// records, intents, the hash-chained journal, leases, the resource ledger
// and applied plans.
//
// Write ordering rules (DESIGN §7):
//   - every state change, its intent and its journal entry commit in one
//     transaction (Commit);
//   - no transaction is ever held across an external command: the database
//     is opened per transaction and closed again, so a concurrent custody
//     waits at most one transaction for the file lock;
//   - records change only by compare-and-swap on their revision.
package store

import "errors"

// Errors of opening the store. Each says what happened to the data.
var (
	// ErrSchemaNewer is returned when the state file was written by a newer
	// custody; nothing was changed.
	ErrSchemaNewer = errors.New("state file schema is newer than this custody; nothing was changed")
	// ErrCorrupt is returned when the state file cannot be read as a custody
	// store (not bbolt, truncated, or missing its buckets); nothing was
	// changed.
	ErrCorrupt = errors.New("state file is corrupt or not a custody store; nothing was changed")
	// ErrLockTimeout is returned when another process held the state file
	// for longer than the lock timeout. The error says whether this command
	// had committed anything before (then custody resume settles it) or
	// nothing was changed.
	ErrLockTimeout = errors.New("state file stayed locked by another process")
	// ErrUnreadable is returned when the state file exists but cannot be
	// opened (permissions, a read-only filesystem, too many open files); it
	// is not corrupt and nothing was changed.
	ErrUnreadable = errors.New("state file cannot be opened; nothing was changed")
	// ErrNotInitialized is returned when a read finds no state file.
	ErrNotInitialized = errors.New("no state file yet")
)

// Errors of writing.
var (
	// ErrConflict is returned when a record changed between load and commit
	// (its revision moved); the transaction wrote nothing.
	ErrConflict = errors.New("record changed concurrently; nothing was written")
	// ErrNotFound is returned when a record does not exist.
	ErrNotFound = errors.New("no such record")
	// ErrUnknownKind is returned when a record's kind has no bucket in the
	// store's schema; nothing was written.
	ErrUnknownKind = errors.New("no bucket holds records of this kind; nothing was written")
	// ErrReadOnly is returned when a store opened read-only
	// (Options.ReadOnly) is asked to write: the command that opened it
	// declared that it only reads. Nothing was written.
	ErrReadOnly = errors.New("the state file was opened read-only, for a command that only reads; nothing was written")
)

// Errors of reading a journal export.
var (
	// ErrJournalBroken is returned when an exported journal does not verify:
	// an entry was changed, dropped, inserted or reordered.
	ErrJournalBroken = errors.New("journal does not verify")
)
