package store_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/custody-sh/custody/store"
	"github.com/custody-sh/custody/store/storetest"
	"github.com/google/go-cmp/cmp"
	bolt "go.etcd.io/bbolt"
)

var (
	bMeta    = []byte("meta")
	bRecords = []byte("records")
	bIntents = []byte("intents")
	bJournal = []byte("journal")
)

func seqKey(seq uint64) []byte { return binary.BigEndian.AppendUint64(nil, seq) }

// openPlain opens a fresh store without storetest's strict cleanup, for
// tests that corrupt it on purpose.
func openPlain(t testing.TB) *store.Store {
	t.Helper()
	s, err := store.Open(filepath.Join(t.TempDir(), store.FileName), storetest.Timeout, true)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustCheck(t testing.TB, s *store.Store) []store.Problem {
	t.Helper()
	ps, err := s.Check()
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	return ps
}

func TestCheckHealthy(t *testing.T) {
	t.Parallel()
	s := storetest.MustOpen(t)
	if ps := mustCheck(t, s); len(ps) != 0 {
		t.Errorf("Check of a fresh store = %v", ps)
	}
	lifecycle(t, s, "h-000001", t0)
	if ps := mustCheck(t, s); len(ps) != 0 {
		t.Errorf("Check of a healthy store = %v", ps)
	}
	// b-000002 is left removing: its intent is reported as unfinished, with
	// the command that finishes it, and nothing else.
	interleaved(t, s)
	want := []store.Problem{{Where: "record b-000002", What: "carries an unfinished removal intent", Fix: "custody resume",
		Intent: &store.ProblemIntent{Kind: "worktree", Record: "b-000002", Intent: "removal"}}}
	if diff := cmp.Diff(want, mustCheck(t, s)); diff != "" {
		t.Errorf("Check with one intent left (-want +got):\n%s", diff)
	}
}

// TestCheckFindsCorruption corrupts a healthy store with bbolt directly and
// expects Check to name the problem.
func TestCheckFindsCorruption(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		corrupt func(tx *bolt.Tx) error
		// want is a problem Check must report (matched on a prefix of
		// Where and a substring of What).
		want store.Problem
	}{
		{
			name: "intent index entry deleted",
			corrupt: func(tx *bolt.Tx) error {
				return tx.Bucket(bIntents).Delete([]byte("worktree/b-000002"))
			},
			want: store.Problem{Where: "record b-000002", What: "intent index disagrees"},
		},
		{
			name: "intent index entry for a record without intent",
			corrupt: func(tx *bolt.Tx) error {
				return tx.Bucket(bIntents).Put([]byte("worktree/a-000001"), []byte(`{"kind":"removal"}`))
			},
			want: store.Problem{Where: "record a-000001", What: "intent index disagrees"},
		},
		{
			name: "record does not parse",
			corrupt: func(tx *bolt.Tx) error {
				return tx.Bucket(bRecords).Put([]byte("a-000001"), []byte(`{"id":`))
			},
			want: store.Problem{Where: "record a-000001", What: "does not parse"},
		},
		{
			name: "record in an unknown state",
			corrupt: func(tx *bolt.Tx) error {
				return editJSON(tx.Bucket(bRecords), []byte("a-000001"), `"state":"tombstoned"`, `"state":"zombie"`)
			},
			want: store.Problem{Where: "record a-000001", What: `unknown state "zombie"`},
		},
		{
			name: "record under the wrong key",
			corrupt: func(tx *bolt.Tx) error {
				r := tx.Bucket(bRecords)
				return r.Put([]byte("c-000003"), r.Get([]byte("a-000001")))
			},
			want: store.Problem{Where: "record c-000003", What: "wrong key"},
		},
		{
			name: "journal entry changed",
			corrupt: func(tx *bolt.Tx) error {
				return editJSON(tx.Bucket(bJournal), seqKey(4), `"to":"finished"`, `"to":"tombstoned"`)
			},
			want: store.Problem{Where: "journal entry 4", What: "breaks the hash chain"},
		},
		{
			name: "journal entry deleted",
			corrupt: func(tx *bolt.Tx) error {
				return tx.Bucket(bJournal).Delete(seqKey(4))
			},
			want: store.Problem{Where: "journal entry 5", What: "breaks the hash chain"},
		},
		{
			name: "journal entry does not parse",
			corrupt: func(tx *bolt.Tx) error {
				return tx.Bucket(bJournal).Put(seqKey(4), []byte("not json"))
			},
			// Where names the key in hex here, in decimal elsewhere.
			want: store.Problem{Where: "journal entry ", What: "does not parse"},
		},
		{
			name: "last journal entry deleted",
			corrupt: func(tx *bolt.Tx) error {
				return tx.Bucket(bJournal).Delete(seqKey(9))
			},
			want: store.Problem{Where: "journal head", What: "is not the last entry's hash"},
		},
		{
			name: "journal head wrong",
			corrupt: func(tx *bolt.Tx) error {
				return tx.Bucket(bMeta).Put([]byte("journal_head"), bytes.Repeat([]byte("0"), 64))
			},
			want: store.Problem{Where: "journal head", What: "is not the last entry's hash"},
		},
		{
			name: "journal head missing",
			corrupt: func(tx *bolt.Tx) error {
				return tx.Bucket(bMeta).Delete([]byte("journal_head"))
			},
			want: store.Problem{Where: "journal head", What: "is not the last entry's hash"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := openPlain(t)
			interleaved(t, s) // a-000001 tombstoned, b-000002 removing with an intent
			if ps := mustCheck(t, s); len(ps) != 1 || !strings.Contains(ps[0].What, "unfinished") {
				t.Fatalf("Check before the corruption = %v", ps)
			}
			boltUpdate(t, s.Path(), tt.corrupt)
			ps := mustCheck(t, s)
			for _, p := range ps {
				if strings.HasPrefix(p.Where, tt.want.Where) && strings.Contains(p.What, tt.want.What) {
					return
				}
			}
			t.Errorf("Check = %v, want a problem %q: %q…", ps, tt.want.Where, tt.want.What)
		})
	}
}

// TestCheckOrphanIntent leaves an intent in the index whose record is gone.
// WithIntents (which resume reads) then fails, so Check, whose job is to
// report intents that disagree with their record, must report it.
func TestCheckOrphanIntent(t *testing.T) {
	t.Parallel()
	s := openPlain(t)
	interleaved(t, s)
	boltUpdate(t, s.Path(), func(tx *bolt.Tx) error {
		return tx.Bucket(bIntents).Put([]byte("worktree/z-000009"), []byte(`{"kind":"removal","path":"/gone"}`))
	})
	if _, err := s.WithIntents(); err != nil {
		t.Logf("WithIntents with the orphan intent: %v", err)
	}
	for _, p := range mustCheck(t, s) {
		if strings.Contains(p.Where, "z-000009") {
			return
		}
	}
	t.Errorf("Check does not report the intent of z-000009, a record that does not exist")
}

// TestCheckReportsEveryProblem corrupts two unrelated things; Check lists
// both, as bbolt's Tx.Check streams every inconsistency.
func TestCheckReportsEveryProblem(t *testing.T) {
	t.Parallel()
	s := openPlain(t)
	interleaved(t, s)
	boltUpdate(t, s.Path(), func(tx *bolt.Tx) error {
		if err := tx.Bucket(bIntents).Delete([]byte("worktree/b-000002")); err != nil {
			return err
		}
		return tx.Bucket(bMeta).Put([]byte("journal_head"), []byte("x"))
	})
	var wheres []string
	for _, p := range mustCheck(t, s) {
		wheres = append(wheres, p.Where+": "+p.What)
	}
	got := strings.Join(wheres, "\n")
	for _, w := range []string{"record b-000002: intent index disagrees", "journal head: meta head"} {
		if !strings.Contains(got, w) {
			t.Errorf("Check problems:\n%s\nlack %q", got, w)
		}
	}
}

// editJSON replaces old with new in the value under key.
func editJSON(b *bolt.Bucket, key []byte, old, new string) error {
	v := b.Get(key)
	if !bytes.Contains(v, []byte(old)) {
		return &missingError{string(key), old, string(v)}
	}
	return b.Put(key, bytes.Replace(v, []byte(old), []byte(new), 1))
}

type missingError struct{ key, old, value string }

func (e *missingError) Error() string {
	return "value of " + e.key + " lacks " + e.old + ": " + e.value
}

// recorder is a testing.TB that records Errorf instead of failing.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// TestStrict checks storetest's cleanup: it lets unfinished intents pass
// and fails on a broken store or journal.
func TestStrict(t *testing.T) {
	t.Parallel()
	s := openPlain(t)
	interleaved(t, s) // leaves one unfinished intent
	r := &recorder{TB: t}
	storetest.Strict(r, s)
	if len(r.errs) != 0 {
		t.Fatalf("Strict on a healthy store with an intent: %q", r.errs)
	}

	for name, corrupt := range map[string]func(*bolt.Tx) error{
		"intent index": func(tx *bolt.Tx) error { return tx.Bucket(bIntents).Delete([]byte("worktree/b-000002")) },
		"journal head": func(tx *bolt.Tx) error {
			return tx.Bucket(bMeta).Put([]byte("journal_head"), bytes.Repeat([]byte("0"), 64))
		},
		"journal entry": func(tx *bolt.Tx) error {
			return editJSON(tx.Bucket(bJournal), seqKey(2), `"to":"provisioning"`, `"to":"active"`)
		},
	} {
		s := openPlain(t)
		interleaved(t, s)
		boltUpdate(t, s.Path(), corrupt)
		r := &recorder{TB: t}
		storetest.Strict(r, s)
		if len(r.errs) == 0 {
			t.Errorf("Strict did not fail on a broken %s", name)
		}
	}
}

// openUpgraded opens a copy of the schema-1 testdata file, upgraded to
// schema 2: a real store of both kinds with leases, plans, a journal and
// one unfinished intent of each kind.
func openUpgraded(t testing.TB) *store.Store {
	t.Helper()
	path, _ := copySchema1(t, t.TempDir())
	s, err := store.Open(path, storetest.Timeout, false)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCheckEveryBucket damages one bucket at a time of an upgraded real
// store and expects exactly the unfinished intents plus the damage.
func TestCheckEveryBucket(t *testing.T) {
	t.Parallel()
	bLedger, bLeases, bPlans := []byte("ledger"), []byte("leases"), []byte("plans")
	tests := []struct {
		name    string
		corrupt func(tx *bolt.Tx) error
		want    []store.Problem
	}{
		{
			name: "ledger entry in an unknown state",
			corrupt: func(tx *bolt.Tx) error {
				return editJSON(tx.Bucket(bLedger), []byte(fxLeased+"/db"), `"state":"active"`, `"state":"zombie"`)
			},
			want: []store.Problem{{Where: "resource " + fxLeased + "/db", What: `unknown state "zombie"`}},
		},
		{
			name: "ledger entry does not parse",
			corrupt: func(tx *bolt.Tx) error {
				return tx.Bucket(bLedger).Put([]byte(fxLeased+"/db"), []byte(`["not an object"]`))
			},
			want: []store.Problem{{Where: "resource " + fxLeased + "/db",
				What: "does not parse: json: cannot unmarshal array into Go value of type store.kindRecord"}},
		},
		{
			name: "ledger entry under the wrong key",
			corrupt: func(tx *bolt.Tx) error {
				l := tx.Bucket(bLedger)
				return l.Put([]byte("zeta-000000/db"), l.Get([]byte(fxLeased+"/db")))
			},
			want: []store.Problem{{Where: "resource zeta-000000/db", What: `is stored under the wrong key (id "` + fxLeased + `/db")`}},
		},
		{
			name: "ledger intent not indexed",
			corrupt: func(tx *bolt.Tx) error {
				return tx.Bucket(bIntents).Delete([]byte("resource/" + fxDestroying))
			},
			want: []store.Problem{{Where: "resource " + fxDestroying, What: "intent index disagrees with the record", Fix: "custody resume"}},
		},
		{
			name: "index entry without its record",
			corrupt: func(tx *bolt.Tx) error {
				return tx.Bucket(bIntents).Put([]byte("worktree/z-000009"), []byte(`{"kind":"removal"}`))
			},
			want: []store.Problem{{Where: "intent worktree/z-000009", What: "is indexed for a record that does not exist"}},
		},
		{
			name: "index entry without its ledger entry",
			corrupt: func(tx *bolt.Tx) error {
				return tx.Bucket(bIntents).Put([]byte("resource/z-000009/db"), []byte(`{"kind":"resource-create"}`))
			},
			want: []store.Problem{{Where: "intent resource/z-000009/db", What: "is indexed for a record that does not exist"}},
		},
		{
			name: "index entry with a bare schema-1 key",
			corrupt: func(tx *bolt.Tx) error {
				ints := tx.Bucket(bIntents)
				return ints.Put([]byte(fxRemoving), ints.Get([]byte("worktree/"+fxRemoving)))
			},
			want: []store.Problem{{Where: "intent " + fxRemoving, What: "is not a <kind>/<id> key (a schema-1 index entry?)"}},
		},
		{
			name: "index entry of an unknown kind",
			corrupt: func(tx *bolt.Tx) error {
				return tx.Bucket(bIntents).Put([]byte("widget/w-000001"), []byte(`{}`))
			},
			want: []store.Problem{{Where: "intent widget/w-000001", What: `names kind "widget", which this custody does not know`}},
		},
		{
			name: "lease for a missing record",
			corrupt: func(tx *bolt.Tx) error {
				return tx.Bucket(bLeases).Put([]byte("z-000009"), []byte(`{"record":"z-000009","holder":"h","expires":"2030-01-01T00:00:00Z"}`))
			},
			want: []store.Problem{{Where: "lease z-000009", What: "names a record that does not exist"}},
		},
		{
			name: "lease does not parse",
			corrupt: func(tx *bolt.Tx) error {
				return tx.Bucket(bLeases).Put([]byte(fxLeased), []byte(`[1]`))
			},
			want: []store.Problem{{Where: "lease " + fxLeased, What: "does not parse: json: cannot unmarshal array into Go value of type machine.Lease"}},
		},
		{
			name: "plan is not JSON",
			corrupt: func(tx *bolt.Tx) error {
				return tx.Bucket(bPlans).Put([]byte("sha256:x"), []byte(`{"format":`))
			},
			want: []store.Problem{{Where: "plan sha256:x", What: "does not parse as JSON"}},
		},
		{
			name: "meta without repository id",
			corrupt: func(tx *bolt.Tx) error {
				return tx.Bucket(bMeta).Delete([]byte("repository_id"))
			},
			want: []store.Problem{{Where: "meta", What: "has no repository id"}},
		},
		{
			name: "record without revision",
			corrupt: func(tx *bolt.Tx) error {
				return editJSON(tx.Bucket(bRecords), []byte(fxLeased), `"rev":`, `"revision":`)
			},
			want: []store.Problem{{Where: "record " + fxLeased, What: "has no revision"}},
		},
		{
			name: "journal entry changed",
			corrupt: func(tx *bolt.Tx) error {
				return editJSON(tx.Bucket(bJournal), seqKey(3), `"to":"`, `"to":"x`)
			},
			want: []store.Problem{{Where: "journal entry 3", What: "breaks the hash chain"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := openUpgraded(t)
			base := mustCheck(t, s)
			if len(base) != 2 {
				t.Fatalf("Check of the upgraded store = %v, want its two unfinished intents", base)
			}
			boltUpdate(t, s.Path(), tt.corrupt)
			if diff := cmp.Diff(append(base, tt.want...), mustCheck(t, s), sortProblems); diff != "" {
				t.Errorf("Check (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCheckApprovals: an approval not keyed by a sha256 digest, or whose
// value is not JSON, is a problem with `custody trust` as its fix; a good
// one is none.
func TestCheckApprovals(t *testing.T) {
	t.Parallel()
	s := openPlain(t)
	good := strings.Repeat("ab", 32)
	for key, value := range map[string]string{good: `{"at":"2026-01-01T00:00:00Z"}`, "not-a-digest": `{}`, strings.Repeat("cd", 32): "{broken"} {
		if err := s.AppendEvent(store.Event{Event: "approval", At: time.Now()}, store.PutValue(store.NameApprovals, key, json.RawMessage(value))); err != nil {
			// PutValue marshals the value; a broken one is written raw below.
			if key == strings.Repeat("cd", 32) {
				continue
			}
			t.Fatal(err)
		}
	}
	db, err := bolt.Open(s.Path(), 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte(store.NameApprovals)).Put([]byte(strings.Repeat("cd", 32)), []byte("{broken"))
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	var got []string
	for _, p := range mustCheck(t, s) {
		if strings.HasPrefix(p.Where, "approval") {
			got = append(got, p.Where+": "+p.What+" / "+p.Fix)
		}
	}
	want := []string{
		`approval "` + strings.Repeat("cd", 32) + `": does not parse as JSON / custody trust`,
		`approval "not-a-digest": is not keyed by a sha256 digest of custody.toml / custody trust`,
	}
	sort.Strings(got)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Check on approvals:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
