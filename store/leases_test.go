package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/store"
	"github.com/custody-sh/custody/store/storetest"
)

// leaseEvents returns the journal's event names.
func leaseEvents(t *testing.T, s *store.Store) []string {
	t.Helper()
	var out []string
	if err := s.Journal("", func(_ []byte, e store.Entry) error {
		if e.Event != "" {
			out = append(out, e.Event)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestChangeLease: the record is found by its admin key or its exact path,
// the decision is made over the record and lease as stored, a change
// commits with its journal entry, and a decision that writes nothing
// leaves the journal as it was.
func TestChangeLease(t *testing.T) {
	t.Parallel()
	s := storetest.MustOpen(t)
	t0 := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	rec := mustCommit(t, s, step(newRecord("w-000001"), machine.StateProvisioning, machine.TriggerCreate, t0))
	change := func(key, path, session string, op machine.LeaseOp, at time.Duration) store.LeaseResult {
		t.Helper()
		res, err := s.ChangeLease(store.LeaseChange{Path: path, Key: key, Hook: "test", Actor: "test",
			Request: machine.LeaseRequest{Op: op, Session: session, Now: t0.Add(at), Duration: 30 * time.Minute}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := change("w-000001", rec.Path, "s1", machine.LeaseAcquire, 0); !res.Found || res.Decision.Outcome != machine.LeaseRefused ||
		res.Decision.Refusal.Code != machine.CodeWrongState {
		t.Fatalf("a lease on a provisioning record: %+v, want refused [wrong-state]", res)
	}
	rec = mustCommit(t, s, step(rec, machine.StateActive, machine.TriggerCreated, t0))
	if res := change("other-key", rec.Path+"/sub", "s1", machine.LeaseAcquire, 0); res.Found {
		t.Fatalf("a path below the tree found the record: %+v", res)
	}
	if res := change("", rec.Path, "s1", machine.LeaseAcquire, 0); !res.Found || res.Decision.Outcome != machine.LeaseAcquired {
		t.Fatalf("acquire by path alone: %+v, want acquired", res)
	}
	before := len(leaseEvents(t, s))
	if res := change("w-000001", rec.Path, "s1", machine.LeaseRenew, time.Minute); res.Decision.Outcome != machine.LeaseUnchanged || res.Lease == nil {
		t.Fatalf("renew a minute later: %+v, want unchanged", res)
	}
	if res := change("w-000001", rec.Path, "s2", machine.LeaseRelease, time.Minute); res.Decision.Outcome != machine.LeaseRefused {
		t.Fatalf("release by another session: %+v, want refused", res)
	}
	if n := len(leaseEvents(t, s)); n != before {
		t.Fatalf("decisions that write nothing wrote %d journal entries", n-before)
	}
	if res := change("w-000001", rec.Path, "s1", machine.LeaseRenew, 10*time.Minute); res.Decision.Outcome != machine.LeaseRenewed ||
		!res.Lease.Expires.Equal(t0.Add(40*time.Minute)) {
		t.Fatalf("renew ten minutes later: %+v, want renewed until +40m", res)
	}
	ls, err := s.Leases()
	if err != nil || ls["w-000001"] == nil || ls["w-000001"].Holder != "s1" {
		t.Fatalf("stored leases: %v %v", ls, err)
	}
	if res := change("w-000001", rec.Path, "s1", machine.LeaseRelease, 11*time.Minute); res.Decision.Outcome != machine.LeaseReleased || res.Lease != nil {
		t.Fatalf("release: %+v", res)
	}
	if ls, _ := s.Leases(); len(ls) != 0 {
		t.Fatalf("a lease is left after release: %v", ls)
	}
	want := []string{"lease-acquired", "lease-renewed", "lease-released"}
	got := leaseEvents(t, s)
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("journal events %v, want %v", got, want)
	}
	// A tombstoned record is never leased, though it names the path.
	for _, e := range []struct {
		to machine.State
		tr machine.Trigger
	}{{machine.StateFinished, machine.TriggerFinish}, {machine.StateRemoving, machine.TriggerRemove}, {machine.StateTombstoned, machine.TriggerRemoved}} {
		rec = mustCommit(t, s, step(rec, e.to, e.tr, t0.Add(time.Hour)))
	}
	if res := change("w-000001", rec.Path, "s1", machine.LeaseAcquire, 2*time.Hour); res.Found {
		t.Fatalf("a tombstoned record was found: %+v", res)
	}
}

// TestChangeLeaseAt: the one-open path refuses what Open refuses and
// changes the lease as ChangeLease does.
func TestChangeLeaseAt(t *testing.T) {
	t.Parallel()
	s := storetest.MustOpen(t)
	t0 := time.Now().UTC()
	rec := mustCommit(t, s, step(newRecord("w-000002"), machine.StateProvisioning, machine.TriggerCreate, t0))
	rec = mustCommit(t, s, step(rec, machine.StateActive, machine.TriggerCreated, t0))
	c := store.LeaseChange{Path: rec.Path, Key: rec.ID, Request: machine.LeaseRequest{Op: machine.LeaseAcquire, Session: "s", Now: t0, Duration: time.Hour}}
	res, st, err := store.ChangeLeaseAt(context.Background(), s.Path(), time.Second, c)
	if err != nil || st == nil || res.Decision.Outcome != machine.LeaseAcquired {
		t.Fatalf("ChangeLeaseAt: %+v %v", res, err)
	}
	if ls, err := st.Leases(); err != nil || ls[rec.ID] == nil {
		t.Fatalf("the returned store reads no lease: %v %v", ls, err)
	}
	_, _, err = store.ChangeLeaseAt(context.Background(), filepath.Join(t.TempDir(), "state.db"), time.Second, c)
	if !errors.Is(err, store.ErrNotInitialized) {
		t.Fatalf("ChangeLeaseAt on no file: %v, want ErrNotInitialized", err)
	}
}

// TestChangeLeaseAtUpgrades: on a state file of an older schema the one-open
// path takes the ordinary way: the file is upgraded (its copy kept aside)
// and the lease changes on the upgraded file. The schema-1 file's leased
// tree still holds its lease: another session is refused.
func TestChangeLeaseAtUpgrades(t *testing.T) {
	t.Parallel()
	path, _ := copySchema1(t, t.TempDir())
	raw := rawDump(t, path)
	var rec machine.Record
	if err := json.Unmarshal([]byte(raw["records"][fxLeased]), &rec); err != nil {
		t.Fatal(err)
	}
	c := store.LeaseChange{Path: rec.Path, Key: rec.ID, Request: machine.LeaseRequest{Op: machine.LeaseRelease, Session: "someone-else", Now: time.Now(), Duration: time.Hour}}
	res, st, err := store.ChangeLeaseAt(context.Background(), path, time.Second, c)
	if err != nil || st == nil || !res.Found {
		t.Fatalf("ChangeLeaseAt on a schema-1 file: %+v %v", res, err)
	}
	if len(backups(t, path)) != 1 {
		t.Errorf("no copy of the schema-1 file was kept aside: %v", backups(t, path))
	}
	if v := rawDump(t, path)["meta"]["schema"]; v != strconv.Itoa(store.SchemaVersion) {
		t.Errorf("the file has schema %s after the hook, want %d", v, store.SchemaVersion)
	}
	if res.Decision.Outcome != machine.LeaseRefused || res.Decision.Refusal.Code != machine.CodeLeaseHeld ||
		res.Lease == nil || res.Lease.Holder != "agent session 7" {
		t.Errorf("another session's release of %s's schema-1 lease: %+v, want refused [lease-held], the lease kept", fxLeased, res)
	}
}

// TestUnchangedLeaseTakesNoWriteLock: while another reader holds the state
// file (a shared lock, as a long custody list does), a heartbeat that
// changes nothing is answered at once under a shared lock of its own; one
// that must write waits for the reader as before (here until its lock
// timeout), and changes nothing.
func TestUnchangedLeaseTakesNoWriteLock(t *testing.T) {
	t.Parallel()
	s := storetest.MustOpen(t)
	t0 := time.Now().UTC()
	rec := mustCommit(t, s, step(newRecord("w-000003"), machine.StateProvisioning, machine.TriggerCreate, t0))
	rec = mustCommit(t, s, step(rec, machine.StateActive, machine.TriggerCreated, t0))
	c := store.LeaseChange{Path: rec.Path, Key: rec.ID, Hook: "test", Actor: "test",
		Request: machine.LeaseRequest{Op: machine.LeaseAcquire, Session: "s", Now: t0, Duration: time.Hour}}
	if res, _, err := store.ChangeLeaseAt(context.Background(), s.Path(), time.Second, c); err != nil || res.Decision.Outcome != machine.LeaseAcquired {
		t.Fatalf("acquire: %+v %v", res, err)
	}
	reader, err := bolt.Open(s.Path(), 0o600, &bolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	beat := c
	beat.Request.Op, beat.Request.Now = machine.LeaseRenew, t0.Add(time.Minute)
	start := time.Now()
	res, _, err := store.ChangeLeaseAt(context.Background(), s.Path(), 2*time.Second, beat)
	if err != nil || res.Decision.Outcome != machine.LeaseUnchanged || res.Lease == nil || res.Lease.Holder != "s" {
		t.Fatalf("a heartbeat beside a reader: %+v %v, want unchanged with the lease", res, err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("the unchanged heartbeat waited %v for the reader", took)
	}
	release := c
	release.Request.Op, release.Request.Now = machine.LeaseRelease, t0.Add(2*time.Minute)
	if _, _, err := store.ChangeLeaseAt(context.Background(), s.Path(), 300*time.Millisecond, release); !errors.Is(err, store.ErrLockTimeout) {
		t.Fatalf("a release beside a reader: %v, want it to wait for the write lock and time out", err)
	}
	reader.Close()
	if ls, err := s.Leases(); err != nil || ls[rec.ID] == nil {
		t.Fatalf("the timed-out release changed the lease: %v %v", ls, err)
	}
}
