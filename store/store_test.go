package store_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/custody-sh/custody/fixtures/testsize"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/store"
	"github.com/custody-sh/custody/store/storetest"
	"github.com/google/go-cmp/cmp"
	bolt "go.etcd.io/bbolt"
)

// t0 is the injected clock of these tests: a fixed UTC instant, without a
// monotonic reading, so records compare equal after a JSON round trip.
var t0 = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)

const (
	testRoot = "/home/ada/src/repo"
	commitA  = "1111111111111111111111111111111111111111"
	commitB  = "2222222222222222222222222222222222222222"
)

// newRecord is a worktree record that does not exist yet (StateNone).
func newRecord(id string) machine.Record {
	return machine.Record{
		ID:         id,
		Origin:     machine.OriginCreated,
		Path:       testRoot + "/.worktrees/" + id,
		Branch:     "custody/" + id,
		BaseCommit: commitA,
	}
}

// step builds the transition that takes rec by trigger tr to state to at
// now, with whatever the trigger needs in its firing, as steps/ would.
func step(rec machine.Record, to machine.State, tr machine.Trigger, now time.Time) store.Transition {
	f := machine.Firing{Record: rec, Now: now}
	holder := machine.Holder{PID: 4242, Host: "host"}
	proof := &machine.Proof{Kind: machine.ProofAncestry, Remote: "origin", Ref: "refs/heads/main", Tip: commitB, Head: commitB}
	var tp *machine.Proof
	switch tr {
	case machine.TriggerCreate:
		f.Intent = &machine.Intent{Kind: machine.IntentCreate, Path: rec.Path, Branch: rec.Branch, Commit: rec.BaseCommit, Holder: holder, At: now}
	case machine.TriggerCreated:
		f.Obs = machine.WorktreeObservation{Path: rec.Path, Dev: 64769, Ino: 1000 + uint64(rec.Rev), AdminKey: rec.ID}
	case machine.TriggerFinish, machine.TriggerExpire:
		f.Obs = machine.WorktreeObservation{Head: commitB}
	case machine.TriggerRelocate:
		f.Intent = &machine.Intent{Kind: machine.IntentRelocation, Path: rec.Path, Destination: rec.Path + "-moved", Holder: holder, At: now}
	case machine.TriggerRelocated:
		f.Dest = &machine.WorktreeObservation{Dev: 64769, Ino: 2000 + uint64(rec.Rev)}
	case machine.TriggerRemove:
		f.Intent = &machine.Intent{Kind: machine.IntentRemoval, Path: rec.Path, Commit: commitB, Proof: proof, PlanID: "sha256:plan", Holder: holder, At: now}
		tp = proof
	case machine.TriggerRemoved:
		f.Evidence = machine.Evidence{BranchOutcome: machine.BranchDeleted}
	case machine.TriggerAbandon:
		f.Acknowledged = commitB
	}
	return store.Transition{
		Before:      rec,
		After:       machine.Next(rec, to, tr, f),
		Trigger:     tr,
		Observation: fmt.Sprintf("sha256:obs-%s-%d", rec.ID, rec.Rev),
		Proof:       tp,
		Outcome:     string(tr) + " ok",
		Actor:       "test",
	}
}

// mustCommit commits tr and returns its After record.
func mustCommit(t testing.TB, s *store.Store, tr store.Transition) machine.Record {
	t.Helper()
	if err := s.Commit(tr); err != nil {
		t.Fatalf("commit %s %s -> %s: %v", tr.After.ID, tr.Trigger, tr.After.State, err)
	}
	return tr.After
}

// lifecycle takes a fresh record through create, created, finish, remove and
// removed, committing each, and returns the transitions in order.
func lifecycle(t testing.TB, s *store.Store, id string, now time.Time) []store.Transition {
	t.Helper()
	out := life(id, now)
	for _, tr := range out {
		mustCommit(t, s, tr)
	}
	return out
}

// life is the transitions that take a fresh record id through create,
// created, finish, remove and removed, a minute apart after now, each
// from the record the one before left; none is committed.
func life(id string, now time.Time) []store.Transition {
	rec := newRecord(id)
	var out []store.Transition
	for _, e := range []struct {
		to machine.State
		tr machine.Trigger
	}{
		{machine.StateProvisioning, machine.TriggerCreate},
		{machine.StateActive, machine.TriggerCreated},
		{machine.StateFinished, machine.TriggerFinish},
		{machine.StateRemoving, machine.TriggerRemove},
		{machine.StateTombstoned, machine.TriggerRemoved},
	} {
		now = now.Add(time.Minute)
		tr := step(rec, e.to, e.tr, now)
		rec = tr.After
		out = append(out, tr)
	}
	return out
}

func mustHead(t testing.TB, s *store.Store) (uint64, string) {
	t.Helper()
	seq, head, err := s.Head()
	if err != nil {
		t.Fatalf("head: %v", err)
	}
	return seq, head
}

func mustGet(t testing.TB, s *store.Store, id string) machine.Record {
	t.Helper()
	rec, err := s.Get(id)
	if err != nil {
		t.Fatalf("get %s: %v", id, err)
	}
	return rec
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var repoIDPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

func TestOpenCreatesRepositoryID(t *testing.T) {
	t.Parallel()
	s := storetest.MustOpen(t)
	id, err := s.RepositoryID()
	if err != nil {
		t.Fatal(err)
	}
	if !repoIDPattern.MatchString(id) {
		t.Fatalf("repository id %q is not 32 lowercase hex digits", id)
	}
	for _, create := range []bool{false, true} {
		again, err := store.Open(s.Path(), storetest.Timeout, create)
		if err != nil {
			t.Fatalf("reopen (create=%t): %v", create, err)
		}
		got, err := again.RepositoryID()
		if err != nil {
			t.Fatal(err)
		}
		if got != id {
			t.Errorf("reopen (create=%t): repository id %q, want %q", create, got, id)
		}
	}

	other := storetest.MustOpen(t)
	otherID, err := other.RepositoryID()
	if err != nil {
		t.Fatal(err)
	}
	if otherID == id {
		t.Errorf("two fresh stores share the repository id %q", id)
	}
}

func TestOpenMissingIsNotInitialized(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "custody", store.FileName)
	_, err := store.Open(path, storetest.Timeout, false)
	if !errors.Is(err, store.ErrNotInitialized) {
		t.Fatalf("Open(create=false) of a missing file: %v, want ErrNotInitialized", err)
	}
	if _, err := os.Lstat(filepath.Dir(path)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open(create=false) made %s (lstat: %v)", filepath.Dir(path), err)
	}
}

// writeStore creates a valid store at path with a few records and returns
// its bytes.
func writeStore(t testing.TB, path string) []byte {
	t.Helper()
	s, err := store.Open(path, storetest.Timeout, true)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		lifecycle(t, s, fmt.Sprintf("w-%06d", i), t0)
	}
	return readFile(t, path)
}

// boltUpdate changes a file with bbolt directly, bypassing the store.
func boltUpdate(t testing.TB, path string, fn func(*bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(fn); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestOpenUnreadable opens files that are not a store this custody can use:
// each is a clear error, never a panic, and the file is left as it was.
func TestOpenUnreadable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		make func(t *testing.T, path string)
		want error
	}{
		{
			name: "garbage",
			make: func(t *testing.T, path string) {
				b := bytes.Repeat([]byte("not a bbolt file \x00\xff\x13\x37"), 2000)
				if err := os.WriteFile(path, b, 0o600); err != nil {
					t.Fatal(err)
				}
			},
			want: store.ErrCorrupt,
		},
		{
			name: "empty",
			make: func(t *testing.T, path string) {
				if err := os.WriteFile(path, nil, 0o600); err != nil {
					t.Fatal(err)
				}
			},
			want: store.ErrCorrupt,
		},
		{
			name: "bbolt without buckets",
			make: func(t *testing.T, path string) {
				boltUpdate(t, path, func(*bolt.Tx) error { return nil })
			},
			want: store.ErrCorrupt,
		},
		{
			name: "schema not a number",
			make: func(t *testing.T, path string) {
				writeStore(t, path)
				boltUpdate(t, path, func(tx *bolt.Tx) error {
					return tx.Bucket([]byte("meta")).Put([]byte("schema"), []byte("one"))
				})
			},
			want: store.ErrCorrupt,
		},
		{
			name: "newer schema",
			make: func(t *testing.T, path string) {
				writeStore(t, path)
				boltUpdate(t, path, func(tx *bolt.Tx) error {
					return tx.Bucket([]byte("meta")).Put([]byte("schema"), []byte("99"))
				})
			},
			want: store.ErrSchemaNewer,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), store.FileName)
			tt.make(t, path)
			before := readFile(t, path)
			for _, create := range []bool{false, true} {
				s, err := store.Open(path, storetest.Timeout, create)
				if !errors.Is(err, tt.want) {
					t.Errorf("Open(create=%t) = %v, %v; want an error wrapping %v", create, s, err, tt.want)
				} else if !bytes.Contains([]byte(err.Error()), []byte("nothing was changed")) {
					t.Errorf("Open(create=%t): %q does not say nothing was changed", create, err)
				}
			}
			if after := readFile(t, path); !bytes.Equal(before, after) {
				t.Errorf("Open changed the file (%d bytes before, %d after)", len(before), len(after))
			}
		})
	}
}

// holdLock opens path for writing with bbolt, taking the exclusive lock a
// concurrent custody would hold, and returns the release function.
func holdLock(t testing.TB, path string) func() {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var released bool
	release := func() {
		if !released {
			released = true
			if err := db.Close(); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(release)
	return release
}

func TestLockTimeout(t *testing.T) {
	t.Parallel()
	path := storetest.MustOpen(t).Path()
	short, err := store.Open(path, 100*time.Millisecond, false)
	if err != nil {
		t.Fatal(err)
	}
	release := holdLock(t, path)

	ops := []struct {
		name string
		run  func() error
	}{
		{"Open", func() error { _, err := store.Open(path, 100*time.Millisecond, false); return err }},
		{"List", func() error { _, err := short.List(); return err }},
		{"Commit", func() error {
			return short.Commit(step(newRecord("l-000001"), machine.StateProvisioning, machine.TriggerCreate, t0))
		}},
	}
	for _, op := range ops {
		start := time.Now()
		err := op.run()
		if took := time.Since(start); took > time.Second {
			t.Errorf("%s took %s with a 100ms lock timeout", op.name, took)
		}
		if !errors.Is(err, store.ErrLockTimeout) {
			t.Errorf("%s while the file is locked: %v, want ErrLockTimeout", op.name, err)
		}
	}
	release()
	if recs, err := short.List(); err != nil || len(recs) != 0 {
		t.Errorf("List after the lock was released = %v, %v; want no records", recs, err)
	}
}

func TestLockWaitsForRelease(t *testing.T) {
	t.Parallel()
	s := storetest.MustOpen(t)
	release := holdLock(t, s.Path())
	timer := time.AfterFunc(300*time.Millisecond, release)
	defer timer.Stop()

	start := time.Now()
	rec := mustCommit(t, s, step(newRecord("l-000002"), machine.StateProvisioning, machine.TriggerCreate, t0))
	took := time.Since(start)
	if took < 200*time.Millisecond {
		t.Errorf("Commit took %s: it did not wait for the lock", took)
	}
	if got := mustGet(t, s, rec.ID); got.Rev != 1 {
		t.Errorf("record after the wait has rev %d, want 1", got.Rev)
	}
}

func TestCommitNewRecord(t *testing.T) {
	t.Parallel()
	s := storetest.MustOpen(t)
	tr := step(newRecord("n-000001"), machine.StateProvisioning, machine.TriggerCreate, t0)
	tr.Before = machine.Record{} // a new record's Before is the zero record
	rec := mustCommit(t, s, tr)
	if diff := cmp.Diff(rec, mustGet(t, s, rec.ID)); diff != "" {
		t.Errorf("stored record (-committed +stored):\n%s", diff)
	}
	list, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]machine.Record{rec}, list); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	if _, err := s.Get("n-missing"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get of a missing record: %v, want ErrNotFound", err)
	}
}

func TestCommitList(t *testing.T) {
	t.Parallel()
	s := storetest.MustOpen(t)
	var want []machine.Record
	for _, id := range []string{"c-000003", "a-000001", "b-000002"} {
		want = append(want, mustCommit(t, s, step(newRecord(id), machine.StateProvisioning, machine.TriggerCreate, t0)))
	}
	list, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	want[0], want[1], want[2] = want[1], want[2], want[0]
	if diff := cmp.Diff(want, list); diff != "" {
		t.Errorf("List is not every record sorted by id (-want +got):\n%s", diff)
	}
}

// TestCommitConflict commits transitions whose Before is not the stored
// record: each returns ErrConflict and writes nothing.
func TestCommitConflict(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// stale builds the conflicting transition from the record's
		// revisions so far (v[0] is rev 1, v[1] rev 2).
		stale func(v []machine.Record) store.Transition
	}{
		{"new again", func(v []machine.Record) store.Transition {
			return step(newRecord(v[0].ID), machine.StateProvisioning, machine.TriggerCreate, t0.Add(time.Hour))
		}},
		{"new again with zero Before", func(v []machine.Record) store.Transition {
			tr := step(newRecord(v[0].ID), machine.StateProvisioning, machine.TriggerCreate, t0.Add(time.Hour))
			tr.Before = machine.Record{}
			return tr
		}},
		{"stale revision", func(v []machine.Record) store.Transition {
			return step(v[0], machine.StateTombstoned, machine.TriggerDiscard, t0.Add(time.Hour))
		}},
		{"revision from the future", func(v []machine.Record) store.Transition {
			r := v[1]
			r.Rev = 7
			return step(r, machine.StateFinished, machine.TriggerFinish, t0.Add(time.Hour))
		}},
		{"same revision, other state", func(v []machine.Record) store.Transition {
			r := v[1]
			r.State = machine.StateFinished
			return step(r, machine.StateActive, machine.TriggerReopen, t0.Add(time.Hour))
		}},
		{"record that does not exist", func(v []machine.Record) store.Transition {
			r := v[1]
			r.ID = "z-999999"
			r.Path = testRoot + "/.worktrees/z-999999"
			return step(r, machine.StateFinished, machine.TriggerFinish, t0.Add(time.Hour))
		}},
		{"record that does not exist, rev 0", func(v []machine.Record) store.Transition {
			r := v[1]
			r.ID, r.Rev = "z-999998", 0
			return step(r, machine.StateFinished, machine.TriggerFinish, t0.Add(time.Hour))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := storetest.MustOpen(t)
			v1 := mustCommit(t, s, step(newRecord("k-000001"), machine.StateProvisioning, machine.TriggerCreate, t0))
			v2 := mustCommit(t, s, step(v1, machine.StateActive, machine.TriggerCreated, t0.Add(time.Minute)))
			seq, head := mustHead(t, s)
			intents, err := s.WithIntents()
			if err != nil {
				t.Fatal(err)
			}

			tr := tt.stale([]machine.Record{v1, v2})
			if err := s.Commit(tr); !errors.Is(err, store.ErrConflict) {
				t.Fatalf("Commit(%s) = %v, want ErrConflict", tt.name, err)
			}

			if gotSeq, gotHead := mustHead(t, s); gotSeq != seq || gotHead != head {
				t.Errorf("journal head moved from %d %s to %d %s", seq, head, gotSeq, gotHead)
			}
			if diff := cmp.Diff(v2, mustGet(t, s, v2.ID)); diff != "" {
				t.Errorf("record changed (-before +after):\n%s", diff)
			}
			if tr.After.ID != v2.ID {
				if _, err := s.Get(tr.After.ID); !errors.Is(err, store.ErrNotFound) {
					t.Errorf("Get(%s) = %v, want ErrNotFound", tr.After.ID, err)
				}
			}
			gotIntents, err := s.WithIntents()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(intents, gotIntents); diff != "" {
				t.Errorf("intents changed (-before +after):\n%s", diff)
			}
		})
	}
}

// TestCommitIntents follows the intents index through a record's life: it
// lists the record exactly while the record carries an intent.
func TestCommitIntents(t *testing.T) {
	t.Parallel()
	s := storetest.MustOpen(t)
	// A second record keeps its create intent throughout.
	other := mustCommit(t, s, step(newRecord("o-000001"), machine.StateProvisioning, machine.TriggerCreate, t0))

	rec := newRecord("i-000001")
	for i, e := range []struct {
		to machine.State
		tr machine.Trigger
	}{
		{machine.StateProvisioning, machine.TriggerCreate},
		{machine.StateActive, machine.TriggerCreated},
		{machine.StateRelocating, machine.TriggerRelocate},
		{machine.StateActive, machine.TriggerRelocated},
		{machine.StateFinished, machine.TriggerFinish},
		{machine.StateRemoving, machine.TriggerRemove},
		{machine.StateFinished, machine.TriggerRetreat},
		{machine.StateRemoving, machine.TriggerRemove},
		{machine.StateTombstoned, machine.TriggerRemoved},
	} {
		rec = mustCommit(t, s, step(rec, e.to, e.tr, t0.Add(time.Duration(i+1)*time.Minute)))
		want := []machine.Record{rec, other}
		if rec.Intent == nil {
			want = want[1:]
		}
		got, err := s.WithIntents()
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("after %s: WithIntents (-want +got):\n%s", e.tr, diff)
		}
	}
	if rec.Path != newRecord("i-000001").Path+"-moved" || rec.Rev != 9 {
		t.Errorf("final record has path %q rev %d", rec.Path, rec.Rev)
	}
}

// corruptHelperEnv makes the test binary a helper process that opens the
// store file it names and exercises every operation (see
// exerciseCorruptStore). A truncated bbolt file can fault on its memory map
// (SIGBUS), which no recover catches, so such files are only ever opened in
// a child process.
const corruptHelperEnv = "CUSTODY_STORETEST_CORRUPT_FILE"

// helperMark prefixes the helper's report lines.
const helperMark = "storetest-op\t"

func TestMain(m *testing.M) {
	if path := os.Getenv(corruptHelperEnv); path != "" {
		exerciseCorruptStore(os.Stdout, path)
		os.Exit(0)
	}
	os.Exit(testsize.Main(m))
}

// exerciseCorruptStore opens path and, if that works, runs every store
// operation on it, writing one "op<TAB>result" line each: ok, corrupt
// (wraps ErrCorrupt), error or panic. The write comes last.
func exerciseCorruptStore(w io.Writer, path string) {
	try := func(op string, fn func() error) (err error) {
		defer func() {
			result := "ok"
			if p := recover(); p != nil {
				result, err = fmt.Sprintf("panic: %v", p), fmt.Errorf("panic")
			} else if errors.Is(err, store.ErrCorrupt) {
				result = "corrupt"
			} else if err != nil {
				result = "error: " + err.Error()
			}
			fmt.Fprintf(w, "%s%s\t%s\n", helperMark, op, strings.ReplaceAll(result, "\n", " "))
		}()
		return fn()
	}
	var s *store.Store
	if try("Open", func() (err error) { s, err = store.Open(path, storetest.Timeout, false); return err }) != nil {
		return
	}
	try("RepositoryID", func() error { _, err := s.RepositoryID(); return err })
	try("List", func() error { _, err := s.List(); return err })
	try("Get", func() error { _, err := s.Get("w-000000"); return err })
	try("WithIntents", func() error { _, err := s.WithIntents(); return err })
	try("Head", func() error { _, _, err := s.Head(); return err })
	try("Journal", func() error { return s.Journal("", func([]byte, store.Entry) error { return nil }) })
	try("Export", func() error { return s.Export(io.Discard, store.ExportOptions{}) })
	try("Leases", func() error { _, err := s.Leases(); return err })
	try("Check", func() error {
		ps, err := s.Check()
		if err == nil && len(ps) > 0 {
			return fmt.Errorf("%w: check found %v", store.ErrCorrupt, ps)
		}
		return err
	})
	try("Commit", func() error {
		return s.Commit(step(newRecord("h-000001"), machine.StateProvisioning, machine.TriggerCreate, t0))
	})
	// A failed write must not leave the file locked for the rest of the
	// process (as a bbolt handle abandoned mid-Open would).
	try("List after Commit", func() error { _, err := s.List(); return err })
}

// usedBytes returns a valid store file's page size and the bytes its
// pages use (bbolt's high-water mark).
func usedBytes(t testing.TB, path string) (pageSize int, used int64) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.View(func(tx *bolt.Tx) error { used = tx.Size(); return nil }); err != nil {
		t.Fatal(err)
	}
	return db.Info().PageSize, used
}

// runCorruptHelper exercises the store file at path in a child process
// (exerciseCorruptStore) and returns each operation's result. It fails the
// test if the child crashed or an operation panicked.
func runCorruptHelper(t *testing.T, path string) map[string]string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	// A race-enabled child would otherwise sleep a second at exit.
	cmd.Env = append(os.Environ(), corruptHelperEnv+"="+path, "GORACE="+os.Getenv("GORACE")+" atexit_sleep_ms=0")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the helper process died (%v): a damaged store must not crash custody\nops that returned:\n%s%s",
			err, stdout.String(), crashSummary(stderr.String()))
	}
	results := map[string]string{}
	for _, line := range strings.Split(stdout.String(), "\n") {
		if rest, ok := strings.CutPrefix(line, helperMark); ok {
			op, result, _ := strings.Cut(rest, "\t")
			results[op] = result
			if strings.HasPrefix(result, "panic") {
				t.Errorf("%s panicked on the damaged store: %s", op, result)
			}
		}
	}
	if _, ok := results["Open"]; !ok {
		t.Fatalf("the helper reported nothing:\n%s", stdout.String())
	}
	return results
}

// TestOpenTruncated truncates a valid store at every page boundary (and at
// half its size) and opens it in a child process. Nothing may panic or
// fault; a file cut short of the pages it uses is ErrCorrupt from Open and
// is left as it was; a file cut only in its unused tail still works.
func TestOpenTruncated(t *testing.T) {
	t.Parallel()
	orig := filepath.Join(t.TempDir(), store.FileName)
	full := writeStore(t, orig)
	pageSize, used := usedBytes(t, orig)

	sizes := []int{len(full) / 2}
	for n := pageSize; n < len(full); n += pageSize {
		if n != len(full)/2 {
			sizes = append(sizes, n)
		}
	}
	for _, n := range sizes {
		name := fmt.Sprintf("%d of %d bytes (%d used)", n, len(full), used)
		if n == len(full)/2 {
			name = "half: " + name
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), store.FileName)
			if err := os.WriteFile(path, full[:n], 0o600); err != nil {
				t.Fatal(err)
			}
			results := runCorruptHelper(t, path)
			if int64(n) < used {
				if results["Open"] != "corrupt" {
					t.Errorf("Open of a file cut to %d of the %d bytes it uses: %s, want ErrCorrupt", n, used, results["Open"])
				}
				if after := readFile(t, path); !bytes.Equal(after, full[:n]) {
					t.Errorf("the truncated file was changed (%d bytes before, %d after)", n, len(after))
				}
				return
			}
			for op, result := range results {
				if result != "ok" && !(op == "Get" && strings.Contains(result, "no such record")) {
					t.Errorf("%s on a store cut only in its unused tail: %s", op, result)
				}
			}
		})
	}
}

// TestOpenDamagedPage overwrites one page of a valid store (past its two
// meta pages) with zeros or with a pattern, keeping the file's size, and
// exercises every operation in a child process: whatever the damage hits
// (a branch, a leaf, the freelist, a free page), nothing panics or faults,
// and an operation that fails says the file is corrupt.
func TestOpenDamagedPage(t *testing.T) {
	t.Parallel()
	orig := filepath.Join(t.TempDir(), store.FileName)
	full := writeStore(t, orig)
	pageSize, used := usedBytes(t, orig)
	for page := 2; int64(page*pageSize) < used; page++ {
		for _, fill := range []byte{0x00, 0xa5} {
			t.Run(fmt.Sprintf("page %d filled with %#02x", page, fill), func(t *testing.T) {
				t.Parallel()
				damaged := bytes.Clone(full)
				copy(damaged[page*pageSize:(page+1)*pageSize], bytes.Repeat([]byte{fill}, pageSize))
				path := filepath.Join(t.TempDir(), store.FileName)
				if err := os.WriteFile(path, damaged, 0o600); err != nil {
					t.Fatal(err)
				}
				for op, result := range runCorruptHelper(t, path) {
					if strings.HasPrefix(result, "error") && !strings.Contains(result, "no such record") {
						t.Errorf("%s on the damaged store: %s; want ok or ErrCorrupt", op, result)
					}
				}
			})
		}
	}
}

// crashSummary keeps a crash's message and the store frames of its stack.
func crashSummary(stderr string) string {
	var b strings.Builder
	lines := strings.Split(stderr, "\n")
	for i, line := range lines {
		switch {
		case i < 4 && strings.TrimSpace(line) != "":
			fmt.Fprintf(&b, "%s\n", line)
		case strings.Contains(line, "custody/store.") && i+1 < len(lines):
			fmt.Fprintf(&b, "\t%s %s\n", strings.TrimSpace(line), strings.TrimSpace(lines[i+1]))
		}
	}
	return b.String()
}

// TestCommitResource checks the ledger's compare-and-swap and its journal
// entries, like Commit's.
func TestCommitResource(t *testing.T) {
	t.Parallel()
	s := storetest.MustOpen(t)
	res := func(id string, st machine.State, rev uint64, in *machine.ResourceIntent) machine.Resource {
		return machine.Resource{ID: id, Worktree: "w-000001", Name: "db", Path: testRoot + "/.worktrees/w-000001",
			Create: "createdb x", Destroy: "dropdb x", State: st, Rev: rev, Intent: in, UpdatedAt: t0.Add(time.Duration(rev) * time.Minute)}
	}
	intent := &machine.ResourceIntent{Kind: machine.IntentResourceCreate, Command: "createdb x", At: t0}
	v1 := res("w-000001/db", machine.StateProvisioning, 1, intent)
	v2 := res("w-000001/db", machine.StateActive, 2, nil)
	other := res("a-000001/cache", machine.StateProvisioning, 1, nil)
	commit := func(before, after machine.Resource, tr machine.Trigger) error {
		return store.CommitChange(s, store.ResourceTransition{Before: before, After: after, Trigger: tr, Outcome: "ok", Actor: "test"})
	}
	for _, c := range []struct {
		before, after machine.Resource
	}{{machine.Resource{}, v1}, {v1, v2}, {machine.Resource{}, other}} {
		if err := commit(c.before, c.after, machine.TriggerDeclare); err != nil {
			t.Fatalf("CommitResource %s rev %d: %v", c.after.ID, c.after.Rev, err)
		}
	}
	seq, head := mustHead(t, s)
	for name, c := range map[string]struct{ before, after machine.Resource }{
		"new again":       {machine.Resource{}, v1},
		"stale revision":  {v1, res(v1.ID, machine.StateTombstoned, 2, nil)},
		"missing, as old": {v1, res("w-000002/db", machine.StateActive, 2, nil)},
	} {
		if err := commit(c.before, c.after, machine.TriggerDestroyed); !errors.Is(err, store.ErrConflict) {
			t.Errorf("%s: CommitResource = %v, want ErrConflict", name, err)
		}
	}
	if gotSeq, gotHead := mustHead(t, s); gotSeq != seq || gotHead != head {
		t.Errorf("a conflicting CommitResource moved the journal head")
	}
	got, err := s.GetResource(v1.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(v2, got); diff != "" {
		t.Errorf("ledger entry (-want +got):\n%s", diff)
	}
	all, err := s.Resources()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]machine.Resource{other, v2}, all); diff != "" {
		t.Errorf("Resources (-want +got):\n%s", diff)
	}
	if _, err := s.GetResource("nope/x"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetResource of a missing entry: %v, want ErrNotFound", err)
	}
	entries := journal(t, s, v1.ID)
	if len(entries) != 2 {
		t.Fatalf("journal of %s has %d entries, want 2", v1.ID, len(entries))
	}
	first := entries[0].entry
	var gotIntent *machine.ResourceIntent
	if err := json.Unmarshal(first.Intent, &gotIntent); err != nil {
		t.Fatalf("first resource entry's intent %s: %v", first.Intent, err)
	}
	if first.Kind != string(machine.KindResource) || first.From != "none" || first.To != "provisioning" ||
		first.LegacyResourceIntent != nil || !cmp.Equal(gotIntent, intent) {
		t.Errorf("first resource entry = %+v, intent %+v", first, gotIntent)
	}
}

func TestLeases(t *testing.T) {
	t.Parallel()
	s := storetest.MustOpen(t)
	a := machine.Lease{Record: "a-000001", Holder: "session 1", Expires: t0.Add(time.Hour)}
	b := machine.Lease{Record: "b-000002", Holder: "session 2", Expires: t0}
	// A lease is on a record (Check reports one that is not).
	for _, id := range []string{a.Record, b.Record} {
		mustCommit(t, s, step(newRecord(id), machine.StateProvisioning, machine.TriggerCreate, t0))
	}
	seq0, _ := mustHead(t, s)
	for _, l := range []machine.Lease{a, b, {Record: a.Record, Holder: "session 3", Expires: t0.Add(2 * time.Hour)}} {
		if err := s.PutLease(l); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DropLease(b.Record); err != nil {
		t.Fatal(err)
	}
	if err := s.DropLease("x-missing"); err != nil {
		t.Errorf("DropLease of no lease: %v", err)
	}
	got, err := s.Leases()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]*machine.Lease{a.Record: {Record: a.Record, Holder: "session 3", Expires: t0.Add(2 * time.Hour)}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Leases (-want +got):\n%s", diff)
	}
	if seq, _ := mustHead(t, s); seq != seq0 {
		t.Errorf("leases wrote %d journal entries", seq-seq0)
	}
}

// TestLockTimeoutSaysWhatWasDone: a lock timeout before this Store wrote
// anything says nothing was changed; one after it committed says so and
// that custody resume settles it.
func TestLockTimeoutSaysWhatWasDone(t *testing.T) {
	t.Parallel()
	path := storetest.MustOpen(t).Path()
	s, err := store.Open(path, 100*time.Millisecond, false)
	if err != nil {
		t.Fatal(err)
	}
	release := holdLock(t, path)
	_, err = s.List()
	if !errors.Is(err, store.ErrLockTimeout) || !strings.Contains(err.Error(), "nothing was changed") {
		t.Errorf("a timeout before any write: %v, want it to say nothing was changed", err)
	}
	release()
	mustCommit(t, s, step(newRecord("l-000001"), machine.StateProvisioning, machine.TriggerCreate, t0))
	release = holdLock(t, path)
	defer release()
	_, err = s.List()
	if !errors.Is(err, store.ErrLockTimeout) || strings.Contains(err.Error(), "nothing was changed") ||
		!strings.Contains(err.Error(), "committed 1 change") || !strings.Contains(err.Error(), "custody resume") {
		t.Errorf("a timeout after a write: %v, want it to name the committed change and custody resume", err)
	}
}
