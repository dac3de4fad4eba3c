//go:build unix

package state

import (
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	bolt "go.etcd.io/bbolt"
)

// ddDamage is one way a state file can be damaged, applied to the store of
// a repository custody runs in.
type ddDamage struct {
	name string
	// damage changes the state file at state (full: its bytes).
	damage func(t *testing.T, state string, full []byte)
	// noRoot: the damage means nothing to root (permissions), so root runs
	// it as an unprivileged user (clitest.Unprivileged).
	noRoot bool
	// args are extra global flags for doctor.
	args []string
	// says is what the report must name ("state file" when empty).
	says string
}

// ddBolt changes the state file through bbolt directly.
func ddBolt(fn func(tx *bolt.Tx) error) func(t *testing.T, state string, _ []byte) {
	return func(t *testing.T, state string, _ []byte) {
		t.Helper()
		db, err := bolt.Open(state, 0o600, &bolt.Options{Timeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		err = db.Update(fn)
		if cerr := db.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// ddWrite replaces the state file's bytes.
func ddWrite(fn func(full []byte) []byte) func(t *testing.T, state string, full []byte) {
	return func(t *testing.T, state string, full []byte) {
		t.Helper()
		if err := os.WriteFile(state, fn(append([]byte(nil), full...)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// ddPageSize is the page size of a bbolt file, from its first meta page.
func ddPageSize(full []byte) int { return int(binary.LittleEndian.Uint32(full[16+8:])) }

func ddCorpus() []ddDamage {
	return []ddDamage{
		{name: "truncated-half", damage: ddWrite(func(b []byte) []byte { return b[:len(b)/2] })},
		{name: "truncated-to-a-few-bytes", damage: ddWrite(func(b []byte) []byte { return b[:100] })},
		{name: "empty", damage: ddWrite(func([]byte) []byte { return nil })},
		{name: "wrong-page-size", damage: ddWrite(func(b []byte) []byte {
			ps := ddPageSize(b)
			for _, pg := range []int{0, 1} {
				binary.LittleEndian.PutUint32(b[pg*ps+16+8:], 1024)
			}
			return b
		})},
		{name: "zeroed-data-pages", damage: ddWrite(func(b []byte) []byte {
			ps := ddPageSize(b)
			clear(b[2*ps:])
			return b
		})},
		{name: "zeroed-meta-pages", damage: ddWrite(func(b []byte) []byte {
			clear(b[:2*ddPageSize(b)])
			return b
		})},
		{name: "bucket-missing", says: "records", damage: ddBolt(func(tx *bolt.Tx) error { return tx.DeleteBucket([]byte("records")) })},
		{name: "record-not-json", damage: ddBolt(func(tx *bolt.Tx) error {
			b := tx.Bucket([]byte("records"))
			k, _ := b.Cursor().First()
			return b.Put(k, []byte("{not json"))
		})},
		{name: "journal-hash-broken", says: "journal entry 1: breaks the hash chain", damage: ddBolt(func(tx *bolt.Tx) error {
			b := tx.Bucket([]byte("journal"))
			k, v := b.Cursor().First()
			return b.Put(k, []byte(strings.Replace(string(v), `"hash":"`, `"hash":"00`, 1)))
		})},
		{name: "intent-for-a-missing-record", says: "intent worktree/gone-000000: is indexed for a record that does not exist", damage: ddBolt(func(tx *bolt.Tx) error {
			return tx.Bucket([]byte("intents")).Put([]byte("worktree/gone-000000"), []byte(`{"kind":"removal"}`))
		})},
		{name: "meta-without-schema", damage: ddBolt(func(tx *bolt.Tx) error { return tx.Bucket([]byte("meta")).Delete([]byte("schema")) })},
		{name: "meta-bucket-missing", damage: ddBolt(func(tx *bolt.Tx) error { return tx.DeleteBucket([]byte("meta")) })},
		{name: "schema-newer", damage: ddBolt(func(tx *bolt.Tx) error { return tx.Bucket([]byte("meta")).Put([]byte("schema"), []byte("999")) })},
		{name: "a-directory", damage: func(t *testing.T, state string, _ []byte) {
			if err := os.Remove(state); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(state, 0o755); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "a-fifo", damage: func(t *testing.T, state string, _ []byte) {
			if err := os.Remove(state); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(state, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "a-symlink", damage: func(t *testing.T, state string, full []byte) {
			other := filepath.Join(t.TempDir(), "state.db")
			if err := os.WriteFile(other, full, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(state); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(other, state); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "unreadable", noRoot: true, damage: func(t *testing.T, state string, _ []byte) {
			if err := os.Chmod(state, 0); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "lock-held-by-another-process", args: []string{"--lock-timeout", "1s"}, damage: func(t *testing.T, state string, _ []byte) {
			f, err := os.OpenFile(state, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
				t.Fatal(err)
			}
		}},
	}
}

// TestDoctorReportsDamage: for every way the state file can be damaged,
// doctor reports it (never a panic, a hang or a bare error): exit 3
// (problems found, docs/exit-codes.md), a problem naming the state file
// and what is wrong with it, and a fix on its own line; with --json one
// envelope listing the problems.
func TestDoctorReportsDamage(t *testing.T) {
	t.Parallel()
	for _, d := range ddCorpus() {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			if d.noRoot && clitest.Unprivileged(t) {
				return // root reads a file whatever its permissions: run as nobody
			}
			r, state, full := corpusStore(t)
			d.damage(t, state, full)
			for _, jsonOut := range []bool{false, true} {
				args := append(append([]string{}, d.args...), "doctor")
				if jsonOut {
					args = append([]string{"--json"}, args...)
				}
				res := runBounded(t, r, args...)
				if res.Code != 3 {
					t.Fatalf("custody %s on a state file damaged (%s): exit %d, want 3 (problems found)\n%s", strings.Join(args, " "), d.name, res.Code, res)
				}
				if !jsonOut {
					says := d.says
					if says == "" {
						says = "state file"
					}
					if !strings.Contains(res.Stdout, says) || !strings.Contains(res.Stdout, "\n\tto fix: ") || !strings.HasSuffix(res.Stdout, " problems found\n") {
						t.Errorf("doctor does not name the damage (%q) and the next step:\n%s", says, res)
					}
					continue
				}
				var env struct {
					OK     bool `json:"ok"`
					Result struct {
						Problems []struct{ Where, What, Fix string }
					}
				}
				if err := json.Unmarshal([]byte(res.Stdout), &env); err != nil || !env.OK || len(env.Result.Problems) == 0 {
					t.Errorf("doctor --json: %v\n%s", err, res)
				}
				for _, p := range env.Result.Problems {
					if p.What == "" || p.Fix == "" {
						t.Errorf("doctor --json: a problem without what or fix: %+v", p)
					}
				}
			}
		})
	}
}
