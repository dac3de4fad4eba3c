package store_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/store"
	"github.com/custody-sh/custody/store/storetest"
	"github.com/google/go-cmp/cmp"
)

// TestReadOnlyOpenCreatesNothing: a store opened read-only where none
// exists is not-initialized, even when Create is set, and neither the file
// nor its directory is made.
func TestReadOnlyOpenCreatesNothing(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "custody")
	path := filepath.Join(dir, store.FileName)
	_, err := store.OpenWith(context.Background(), path, store.Options{Timeout: storetest.Timeout, Create: true, ReadOnly: true})
	if !errors.Is(err, store.ErrNotInitialized) {
		t.Errorf("read-only open of a missing store: %v, want ErrNotInitialized", err)
	}
	if _, err := os.Lstat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a read-only open made %s (%v)", dir, err)
	}
}

// TestReadOnlyStoreRefusesWrites: a store opened read-only reads what the
// file holds, and every kind of write (a transition, an event, a lease)
// is ErrReadOnly with the file and the holder note
// byte-identical afterwards.
func TestReadOnlyStoreRefusesWrites(t *testing.T) {
	t.Parallel()
	w := storetest.MustOpen(t)
	tr := step(newRecord("r-000001"), machine.StateProvisioning, machine.TriggerCreate, t0)
	tr.Before = machine.Record{}
	rec := mustCommit(t, w, tr)
	before, err := os.ReadFile(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	holder, err := os.ReadFile(w.Path() + ".holder")
	if err != nil {
		t.Fatal(err)
	}

	r, err := store.OpenWith(context.Background(), w.Path(), store.Options{Timeout: storetest.Timeout, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Get(rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rec, got); diff != "" {
		t.Errorf("read-only Get (-committed +read):\n%s", diff)
	}
	next := step(rec, machine.StateActive, machine.TriggerCreated, t0)
	writes := map[string]error{
		"Commit":      r.Commit(next),
		"AppendEvent": r.AppendEvent(store.Event{Record: rec.ID, Kind: machine.KindWorktree, Event: "note", At: t0, Actor: "t"}),
		"PutLease":    r.PutLease(machine.Lease{Record: rec.ID, Holder: "s", Expires: t0}),
		"DropLease":   r.DropLease(rec.ID),
	}
	for name, err := range writes {
		if !errors.Is(err, store.ErrReadOnly) {
			t.Errorf("%s on a read-only store: %v, want ErrReadOnly", name, err)
		}
	}
	if after, err := os.ReadFile(w.Path()); err != nil || !bytes.Equal(after, before) {
		t.Errorf("the state file changed under a read-only store (%v)", err)
	}
	if after, err := os.ReadFile(w.Path() + ".holder"); err != nil || !bytes.Equal(after, holder) {
		t.Errorf("a read-only store wrote the holder note: %q, was %q (%v)", after, holder, err)
	}
}
