package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/lockholder"
	"github.com/custody-sh/custody/observe/safefile"
	"github.com/custody-sh/custody/observe/writable"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// SchemaVersion is the schema DefaultSchema writes: the layout this custody
// reads and writes unless a caller opens the store with another Schema.
const SchemaVersion = 7

// FileName is the state file's name inside <common-dir>/custody/.
const FileName = "state.db"

// Bucket names of DefaultSchema, as bbolt keys.
var (
	bucketMeta    = []byte(nameMeta)
	bucketRecords = []byte(nameRecords)
	bucketIntents = []byte(nameIntents)
	bucketJournal = []byte(nameJournal)
	bucketLeases  = []byte(nameLeases)
	bucketLedger  = []byte(nameLedger)
	bucketPlans   = []byte(namePlans)
)

// Meta keys.
var (
	keySchema      = []byte("schema")
	keyRepoID      = []byte("repository_id")
	keyJournalHead = []byte("journal_head")
	// keyContentFrom is the seq of the first journal entry written under
	// the committed rule (schema 7 on): from it on a redacted export
	// authenticates every value it shows.
	keyContentFrom = []byte("content_authenticated_from")
)

// Store is one repository's state file. It holds no open handle: each
// transaction opens the file, takes the lock (waiting up to Timeout), runs
// and closes it again.
type Store struct {
	path    string
	timeout time.Duration
	// ctx, when set, interrupts a wait for the lock.
	ctx context.Context
	// schema is the layout this store reads and writes.
	schema Schema
	// upgraded is the schema upgrade this Open ran, if any.
	upgraded *Upgrade
	// committed counts the write transactions this Store committed, so a
	// lock timeout after some of them never claims nothing was changed.
	committed atomic.Int64
	// readOnly refuses every write (Options.ReadOnly).
	readOnly bool
	// sound is the state file as this Store's last walk found it sound:
	// an open that finds the file exactly so skips the walk.
	sound atomic.Pointer[checked]
	// stampDue is a walk's result not yet written as the stamp
	// (checked_stamp.go): written once a transaction on what was walked
	// ends without changing the file, so a file custody refuses (a bad
	// schema, a missing bucket) gets no stamp, and nothing new beside it.
	stampDue atomic.Pointer[checked]
	// current is what stood for the state file at the last open: what
	// precheck found or trusted (nil when nothing did).
	current atomic.Pointer[checked]
}

// Options tunes OpenWith.
type Options struct {
	// Timeout bounds each wait for the file lock.
	Timeout time.Duration
	// Create makes the file (with a fresh random repository id) when it does
	// not exist.
	Create bool
	// Schema is the layout to read and write; nil means DefaultSchema().
	Schema *Schema
	// ReadOnly opens the store for a command that only reads: it is never
	// created (Create is ignored) and every later write is ErrReadOnly, so
	// no transaction takes the exclusive lock or writes the holder note.
	// A file of an older schema is still upgraded first (the upgrade is
	// what lets this custody read it at all), when the file system lets
	// it be; where it does not, the open is a *writable.Error that says
	// the upgrade must write.
	ReadOnly bool
}

// Path returns the state file's path.
func (s *Store) Path() string { return s.path }

// Open returns the store at path, creating it (with a fresh random
// repository id) when create is set and it does not exist. It upgrades an
// older schema (see OpenWith), checks the schema version and the buckets,
// and never changes an existing file it cannot read.
func Open(path string, timeout time.Duration, create bool) (*Store, error) {
	return OpenContext(context.Background(), path, timeout, create)
}

// OpenContext is Open whose waits for the file lock (now and in every later
// transaction) end when ctx is done.
func OpenContext(ctx context.Context, path string, timeout time.Duration, create bool) (*Store, error) {
	return OpenWith(ctx, path, Options{Timeout: timeout, Create: create})
}

// OpenWith opens the store at path with the layout opts.Schema. A file of an
// older schema is first copied aside (state.db.bak-<schema>) and then
// upgraded in one transaction (see Upgraded); a newer schema is
// ErrSchemaNewer, a file that is not a custody store ErrCorrupt, and in
// both cases nothing was changed. Waits for the file lock end when ctx is
// done.
func OpenWith(ctx context.Context, path string, opts Options) (*Store, error) {
	schema := DefaultSchema()
	if opts.Schema != nil {
		schema = *opts.Schema
	}
	if err := schema.validate(); err != nil {
		return nil, err
	}
	s := &Store{path: path, timeout: opts.Timeout, ctx: ctx, schema: schema, readOnly: opts.ReadOnly}
	// The state directory is a directory of its own, never a symlink to
	// one elsewhere (safefile.DirBelow); the file itself is opened without
	// following a symlink (boltOpenFile).
	dir := filepath.Dir(path)
	if err := safefile.DirBelow(filepath.Dir(dir), dir, false, 0o755); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		if !opts.Create || opts.ReadOnly {
			return nil, fmt.Errorf("%s: %w", path, ErrNotInitialized)
		}
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			return nil, fmt.Errorf("create the state directory: %w", err)
		}
		if err := safefile.DirBelow(filepath.Dir(dir), dir, true, 0o755); err != nil {
			return nil, fmt.Errorf("create the state directory: %w", err)
		}
		if err := s.initialize(); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// check reads the version and, once no upgrade is due (or one ran),
	// checks the layout.
	var version int
	var migrated bool
	check := func(tx *bolt.Tx) error {
		v, err := schema.versionOf(tx)
		if version = v; err == nil && (v == schema.Version() || migrated) {
			err = schema.checkLayout(tx)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		return nil
	}
	err := s.view(check)
	if err == nil && version < schema.Version() && opts.ReadOnly {
		// Asked before the upgrade takes the write lock, so a read-only
		// file system is named as such, with what needed the write.
		if werr := writable.Check(filepath.Dir(path)); werr != nil {
			return nil, fmt.Errorf("%s has schema %d, older than this custody's %d, and is upgraded (a copy kept beside it) before this custody can read it: %w",
				path, version, schema.Version(), werr)
		}
	}
	if err == nil && version < schema.Version() {
		if err = s.migrate(version); err == nil {
			migrated = true
			err = s.view(check)
		}
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Upgraded returns the schema upgrade the Open that returned s ran, or nil
// when the file already had s's schema (or another process upgraded it
// first). The value is a copy.
func (s *Store) Upgraded() *Upgrade {
	if s.upgraded == nil {
		return nil
	}
	u := *s.upgraded
	return &u
}

func (s *Store) initialize() error {
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return err
	}
	return s.write(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketMeta) != nil {
			return nil // another process initialized it first
		}
		for _, b := range s.schema.Buckets {
			if _, err := tx.CreateBucketIfNotExists([]byte(b.Name)); err != nil {
				return err
			}
		}
		m := tx.Bucket(bucketMeta)
		if err := m.Put(keySchema, []byte(strconv.Itoa(s.schema.Version()))); err != nil {
			return err
		}
		if s.schema.Version() >= contentSchema {
			if err := m.Put(keyContentFrom, []byte("1")); err != nil {
				return err
			}
		}
		return m.Put(keyRepoID, []byte(hex.EncodeToString(id[:])))
	})
}

// versionOf reads the file's schema version: ErrCorrupt when it has none
// custody ever wrote, ErrSchemaNewer when it is newer than sc.
func (sc Schema) versionOf(tx *bolt.Tx) (int, error) {
	m := tx.Bucket(bucketMeta)
	if m == nil {
		return 0, fmt.Errorf("%w (no meta bucket)", ErrCorrupt)
	}
	v, err := strconv.Atoi(string(m.Get(keySchema)))
	if err != nil {
		return 0, fmt.Errorf("%w (schema version %q)", ErrCorrupt, m.Get(keySchema))
	}
	if v < 1 {
		return 0, fmt.Errorf("%w (schema version %d is not one custody ever wrote)", ErrCorrupt, v)
	}
	if v > sc.Version() {
		return 0, fmt.Errorf("%w (schema %d, this custody knows %d)", ErrSchemaNewer, v, sc.Version())
	}
	return v, nil
}

// checkLayout checks a file of sc's own version: every bucket of sc and the
// repository id are there.
func (sc Schema) checkLayout(tx *bolt.Tx) error {
	v, err := sc.versionOf(tx)
	if err != nil {
		return err
	}
	if v != sc.Version() {
		return fmt.Errorf("%w (schema %d, expected %d after the upgrade)", ErrCorrupt, v, sc.Version())
	}
	for _, b := range sc.Buckets {
		if tx.Bucket([]byte(b.Name)) == nil {
			return fmt.Errorf("%w (no %s bucket)", ErrCorrupt, b.Name)
		}
	}
	if len(tx.Bucket(bucketMeta).Get(keyRepoID)) == 0 {
		return fmt.Errorf("%w (no repository id)", ErrCorrupt)
	}
	return nil
}

func (s *Store) open(readOnly, full bool) (*bolt.DB, *os.File, error) {
	// Wait for the lock in short slices, so an interrupt ends the wait:
	// first for the shared lock precheck reads the pages under, then for
	// bbolt's, within one deadline.
	deadline := time.Now().Add(s.timeout)
	shared := func(f *os.File) error {
		for {
			held, err := sharedLockNow(f)
			if err != nil || held {
				return nil // a file that takes no lock is checked as it is
			}
			if s.ctx != nil && s.ctx.Err() != nil {
				return fmt.Errorf("%s: %w%s (interrupted while waiting: %w)", s.path, ErrLockTimeout, s.changedSoFar(), s.ctx.Err())
			}
			if !time.Now().Before(deadline) {
				return fmt.Errorf("%s: %w%s (waited %s; %w)", s.path, ErrLockTimeout, s.changedSoFar(), s.timeout, s.lockHolder())
			}
			time.Sleep(min(max(time.Until(deadline), time.Millisecond), 20*time.Millisecond))
		}
	}
	var known *checked
	if !full {
		if known = s.sound.Load(); known == nil {
			known = readStamp(s.path)
		}
	}
	found, stands, err := precheck(s.path, readOnly, shared, known)
	if err != nil {
		return nil, nil, err
	}
	s.current.Store(stands)
	if found != nil {
		s.sound.Store(found)
	}
	s.stampDue.Store(found)
	var db *bolt.DB
	var file *os.File // the file bbolt opened, locked and maps
	for {
		slice := min(max(time.Until(deadline), 20*time.Millisecond), 200*time.Millisecond)
		db, err = boltOpen(s.path, &bolt.Options{Timeout: slice, ReadOnly: readOnly, OpenFile: func(p string, flag int, _ os.FileMode) (*os.File, error) {
			f, err := boltOpenFile(p, flag, 0)
			file = f
			return f, err
		}})
		if !errors.Is(err, berrors.ErrTimeout) {
			break
		}
		if s.ctx != nil && s.ctx.Err() != nil {
			return nil, nil, fmt.Errorf("%s: %w%s (interrupted while waiting: %w)", s.path, ErrLockTimeout, s.changedSoFar(), s.ctx.Err())
		}
		if !time.Now().Before(deadline) {
			return nil, nil, fmt.Errorf("%s: %w%s (waited %s; %w)", s.path, ErrLockTimeout, s.changedSoFar(), s.timeout, s.lockHolder())
		}
	}
	if err != nil {
		if w, ok := writable.Classify(err); ok && !readOnly {
			// Opening for writing on a read-only file system: said as such,
			// naming the state file, whatever this command had written.
			at := *w
			at.Path = s.path
			return nil, nil, fmt.Errorf("%w%s", &at, s.changedSoFar())
		}
		if errors.Is(err, ErrCorrupt) || errors.Is(err, berrors.ErrInvalid) || errors.Is(err, berrors.ErrVersionMismatch) ||
			errors.Is(err, berrors.ErrChecksum) || errors.Is(err, berrors.ErrInvalidMapping) {
			return nil, nil, fmt.Errorf("%s: %w (%w)", s.path, ErrCorrupt, err)
		}
		return nil, nil, fmt.Errorf("%s: %w: %w", s.path, ErrUnreadable, err)
	}
	if !readOnly {
		s.noteHolder()
	}
	return db, file, nil
}

// boltOpen is bolt.Open with a panic (a damaged page read while opening)
// turned into ErrCorrupt, opening the file with boltOpenFile unless opts
// says otherwise.
func boltOpen(path string, opts *bolt.Options) (db *bolt.DB, err error) {
	defer func() {
		if p := recover(); p != nil {
			db, err = nil, fmt.Errorf("%w (%v)", ErrCorrupt, p)
		}
	}()
	if opts.OpenFile == nil {
		opts.OpenFile = boltOpenFile
	}
	return bolt.Open(path, 0o600, opts)
}

// holderFile records which process last took the write lock, so a lock
// timeout can name who holds it.
func (s *Store) holderFile() string { return s.path + ".holder" }

// noteHolder writes who took the write lock. The note is advisory: a
// symlink, FIFO or anything else not a regular file at the holder path is
// left as it is and never written through.
func (s *Store) noteHolder() {
	host, _ := os.Hostname()
	line := machine.HolderNote(os.Getpid(), host, os.Args, time.Now())
	_ = safefile.Write(s.holderFile(), []byte(line), 0o644)
}

// maxHolderNote bounds what is read of the holder note.
const maxHolderNote = 4 << 10

// HolderError says who holds the state file's lock when a wait for it
// timed out; it is wrapped in the ErrLockTimeout error. Custody is true
// only when a holder is known to be custody: the process whose holder
// note says it took the write lock, or one running this very executable.
type HolderError struct {
	Desc    string
	Custody bool
}

// Error is the description: "held by another custody: pid N on HOST
// (ARGS) since TIME", "held by pid N (ARGS), which is not custody", or,
// where the kernel's table of locks cannot be read, who last took the
// write lock, without claiming it still holds it.
func (e *HolderError) Error() string { return e.Desc }

// lockHolder says who holds the state file's lock now, from the kernel's
// table of locks (lockholder.Holders), each holder named as custody only
// when it is one; where that table cannot be read, it says so and names
// the last custody that took the write lock, from the holder note. The
// note is read only from a regular file of bounded size, its control
// characters escaped, so a planted file cannot hang custody or print what
// it points to.
func (s *Store) lockHolder() *HolderError {
	note := ""
	if b, err := safefile.Read(s.holderFile(), maxHolderNote); err == nil {
		note = machine.EscapeControl(strings.TrimSpace(string(b)))
	}
	notePID := holderNotePID(note)
	procs, err := lockholder.Holders(s.path)
	if err != nil || len(procs) == 0 {
		why := "it let go as the wait ended"
		if err != nil {
			why = err.Error()
		}
		last := "no custody noted taking it"
		if note != "" {
			last = "the last custody to take it for writing was pid " + strings.TrimPrefix(note, "pid ")
		}
		return &HolderError{Desc: "the process holding it could not be identified (" + why + "); " + last}
	}
	self, _ := os.Executable()
	var parts []string
	custody := false
	for _, p := range procs {
		cmd := "its command line unreadable"
		if len(p.Args) > 0 {
			cmd = machine.HolderCommand(p.Args)
		}
		switch {
		case p.PID == notePID && note != "":
			custody = true
			parts = append(parts, "another custody: "+note)
		case p.Exe != "" && self != "" && sameFile(p.Exe, self):
			custody = true
			parts = append(parts, fmt.Sprintf("another custody: pid %d (%s)", p.PID, cmd))
		default:
			parts = append(parts, fmt.Sprintf("pid %d (%s), which is not custody", p.PID, cmd))
		}
	}
	return &HolderError{Desc: "held by " + strings.Join(parts, "; "), Custody: custody}
}

// holderNotePID is the pid a holder note names ("pid N on ..."), 0 when
// it names none.
func holderNotePID(note string) int {
	rest, ok := strings.CutPrefix(note, "pid ")
	if !ok {
		return 0
	}
	n, _, _ := strings.Cut(rest, " ")
	pid, err := strconv.Atoi(n)
	if err != nil {
		return 0
	}
	return pid
}

// sameFile reports whether paths a and b name the same file.
func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// update runs fn in one write transaction on a freshly opened file;
// ErrReadOnly, with nothing opened, on a store opened read-only.
func (s *Store) update(fn func(*bolt.Tx) error) error {
	if s.readOnly {
		return fmt.Errorf("%s: %w", s.path, ErrReadOnly)
	}
	return s.write(fn)
}

// write runs fn in one write transaction on a freshly opened file, whatever
// the store was opened for: only creating the file and upgrading its
// schema call it directly. A fault on the mapped file is a panic
// (debug.SetPanicOnFault) and a panic inside bbolt (a corrupt page) is
// turned into ErrCorrupt.
func (s *Store) write(fn func(*bolt.Tx) error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	db, file, err := s.open(false, false)
	if err != nil {
		return err
	}
	stood := s.current.Load()
	pause(pauseWriteLocked)
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: %w (%v)", s.path, ErrCorrupt, p)
		}
		if cerr := db.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	var txid uint64
	var same bool
	if err := db.Update(func(tx *bolt.Tx) error {
		// Under bbolt's exclusive lock: the file it holds is the one
		// precheck found or trusted, at the transaction id it saw, or
		// another writer came between precheck's lock and bbolt's.
		txid = uint64(tx.ID())
		same = stands(stood, file, txid-1)
		return fn(tx)
	}); err != nil {
		if errors.Is(err, errLeaseUnchanged) {
			s.writeStampDue() // rolled back: the file is as walked
		}
		return err
	}
	s.committed.Add(1)
	s.trustCommit(file, txid, same)
	return nil
}

// stands reports whether c stands for the file f as it is, at transaction
// id txid, for a writer (the freelist checked).
func stands(c *checked, f *os.File, txid uint64) bool {
	if c == nil || f == nil || !c.freelist || c.txid != txid {
		return false
	}
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	id, ok := statID(fi)
	return ok && id == c.id
}

// trustCommit records the state file as the commit of transaction txid
// just left it, while bbolt's exclusive lock is still held: this Store's
// next open, and the next command's first (through the stamp), need not
// walk it (checked.committed). It looks at f, the file bbolt wrote (not
// whatever the path names now), and only when the commit started from the
// file this open found sound (same): else the next open walks.
func (s *Store) trustCommit(f *os.File, txid uint64, same bool) {
	s.stampDue.Store(nil)
	forget := func() {
		s.sound.Store(nil)
		s.current.Store(nil)
	}
	if !same || f == nil {
		forget()
		return
	}
	fi, err := f.Stat()
	if err != nil {
		forget()
		return
	}
	id, ok := statID(fi)
	if !ok {
		forget()
		return
	}
	c := &checked{id: id, txid: txid, freelist: true, walkedAt: time.Now(), committed: true}
	s.sound.Store(c)
	s.current.Store(c)
	writeStamp(s.path, c)
}

// writeStampDue writes the stamp of the walk this Store's last open made,
// if it made one and it is not written yet.
func (s *Store) writeStampDue() {
	if c := s.stampDue.Swap(nil); c != nil {
		writeStamp(s.path, c)
	}
}

// Committed is how many write transactions this Store has committed: the
// changes the command holding it made to the state file so far.
func (s *Store) Committed() int64 { return s.committed.Load() }

// changedSoFar says what this command has already written, for an error
// that stops it: nothing, or how many transactions custody resume will
// settle.
func (s *Store) changedSoFar() string {
	if n := s.committed.Load(); n > 0 {
		return fmt.Sprintf("; this command had already committed %d change(s) to it, which `custody resume` settles once the other custody is done", n)
	}
	return "; nothing was changed"
}

// view runs fn in one read transaction, with the same panic guard.
func (s *Store) view(fn func(*bolt.Tx) error) error { return s.viewWalked(false, fn) }

// viewWalked is view; with full set, precheck walks the file whatever
// this Store last knew of it (doctor's check).
func (s *Store) viewWalked(full bool, fn func(*bolt.Tx) error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	db, _, err := s.open(true, full)
	if err != nil {
		return err
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: %w (%v)", s.path, ErrCorrupt, p)
		}
		_ = db.Close()
		if err == nil {
			s.writeStampDue()
		}
	}()
	return db.View(fn)
}

// RepositoryID returns the random id made when the store was created.
func (s *Store) RepositoryID() (string, error) {
	var id string
	err := s.view(func(tx *bolt.Tx) error {
		id = string(tx.Bucket(bucketMeta).Get(keyRepoID))
		return nil
	})
	return id, err
}
