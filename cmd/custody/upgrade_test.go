package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/store"
)

// TestUpgradeIsNamed: the first command that opens a state file of an
// older schema upgrades it and names the copy of the file as it was, on
// stderr (stdout keeps exactly one envelope with --json); the next command
// upgrades nothing.
func TestUpgradeIsNamed(t *testing.T) {
	t.Parallel()
	r := fixtures.New(t, fixtures.Options{})
	old, err := os.ReadFile(filepath.Join("..", "..", "store", "testdata", "schema1.db"))
	if err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(r.Dir, ".git", "custody", "state.db")
	if err := os.MkdirAll(filepath.Dir(state), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(state, old, 0o600); err != nil {
		t.Fatal(err)
	}
	res := mustCustody(t, r, 0, "list", "--all", "--json")
	backup := state + ".bak-1"
	want := fmt.Sprintf("custody: upgraded %s from schema 1 to %d; the file as it was is kept at %s\n", state, store.SchemaVersion, backup)
	if res.Stderr != want {
		t.Errorf("stderr = %q, want %q", res.Stderr, want)
	}
	if recs := decodeResult[listResult](t, res, "list").Records; len(recs) != 5 {
		t.Errorf("list after the upgrade shows %d records, want the file's 5:\n%s", len(recs), res.Stdout)
	}
	if b, err := os.ReadFile(backup); err != nil || !bytes.Equal(b, old) {
		t.Errorf("the copy %s is not the file as it was (%v)", backup, err)
	}
	if res := mustCustody(t, r, 0, "list", "--all"); res.Stderr != "" {
		t.Errorf("a second command upgraded again: %q", res.Stderr)
	}
	if _, err := os.Stat(backup + ".1"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a second copy was made: %v", err)
	}
}

// TestMigrationFailedIsDescribed: a failed upgrade is its own error code,
// says nothing was changed, and retries with doctor.
func TestMigrationFailedIsDescribed(t *testing.T) {
	t.Parallel()
	err := fmt.Errorf("state.db: migration to schema 2 failed: disk full; nothing was changed: %w", store.ErrMigrationFailed)
	b := describe(err)
	if b.Code != string(machine.CodeMigrationFailed) || !strings.Contains(b.Message, "nothing was changed") || b.Retry != "custody doctor" {
		t.Errorf("describe = %+v", b)
	}
}
