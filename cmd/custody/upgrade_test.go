package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"

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
	res := clitest.MustCustody(t, r, 0, "list", "--all", "--json")
	backup := state + ".bak-1"
	want := fmt.Sprintf("custody: upgraded %s from schema 1 to %d; the file as it was is kept at %s\n", state, store.SchemaVersion, backup)
	if res.Stderr != want {
		t.Errorf("stderr = %q, want %q", res.Stderr, want)
	}
	if recs := clitest.DecodeResult[clitest.ListResult](t, res, "list").Records; len(recs) != 5 {
		t.Errorf("list after the upgrade shows %d records, want the file's 5:\n%s", len(recs), res.Stdout)
	}
	if b, err := os.ReadFile(backup); err != nil || !bytes.Equal(b, old) {
		t.Errorf("the copy %s is not the file as it was (%v)", backup, err)
	}
	if res := clitest.MustCustody(t, r, 0, "list", "--all"); res.Stderr != "" {
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

// TestCorruptStateRetryWorks: the retry of a corrupt state file, pasted
// into a shell, moves the file aside (kept, byte for byte) and starts a new
// one; the next command works. A lock timeout's retry is the same command
// with a longer wait.
func TestCorruptStateRetryWorks(t *testing.T) {
	t.Parallel()
	r := fixtures.New(t, fixtures.Options{})
	clitest.MustCustody(t, r, 0, "init")
	state := filepath.Join(r.Dir, ".git", "custody", "state.db")
	garbage := bytes.Repeat([]byte("not a bbolt file\x00"), 1024)
	if err := os.WriteFile(state, garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	body := clitest.DecodeError(t, clitest.MustCustody(t, r, 1, "list", "--json"))
	if body.Code != string(machine.CodeStateCorrupt) {
		t.Fatalf("list over a corrupt state file: %+v", body)
	}
	sh := exec.Command("sh", "-c", body.Retry)
	sh.Dir, sh.Env = r.Dir, append(r.Env(), "PATH="+filepath.Dir(clitest.Bin())+string(os.PathListSeparator)+os.Getenv("PATH"))
	if out, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("the retry %q failed: %v\n%s", body.Retry, err, out)
	}
	if b, err := os.ReadFile(state + ".corrupt"); err != nil || !bytes.Equal(b, garbage) {
		t.Errorf("the corrupt file was not kept aside (%v)", err)
	}
	clitest.MustCustody(t, r, 0, "list")

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-C", "my repo", "plan"}, "custody --lock-timeout 60s -C 'my repo' plan"},
		{[]string{"--lock-timeout", "1s", "list", "--json"}, "custody --lock-timeout 60s list --json"},
		{[]string{"--lock-timeout=1s", "apply", "p.json"}, "custody --lock-timeout 60s apply p.json"},
	} {
		if got := (invocation{args: tc.args}).again("--lock-timeout", "60s"); got != tc.want {
			t.Errorf("the lock timeout's retry of %q = %q, want %q", tc.args, got, tc.want)
		}
	}
}
