//go:build unix

package store

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// TestWalkMappedFileCutShort maps a valid store for the walk, then cuts
// the file to its two meta pages, as another process truncating it under
// a precheck would: reading the mapping faults, and the walk reports that
// instead of the process dying of SIGBUS. The same walk over the intact
// mapping finds nothing wrong.
func TestWalkMappedFileCutShort(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), FileName)
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket([]byte("records"))
		if err != nil {
			return err
		}
		for i := range 200 {
			if err := b.Put([]byte(fmt.Sprintf("key-%04d", i)), bytes.Repeat([]byte{'v'}, 300)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	size := uint64(fi.Size())
	m, ok := bestMeta(f, size)
	if !ok || m.hwm < 4 {
		t.Fatalf("meta: ok %v, high-water mark %d: want a store of several pages", ok, m.hwm)
	}
	walk := func(cut uint64) (string, bool) {
		data, release := filePages(f, m.hwm*m.pageSize)
		defer release()
		if data == nil {
			t.Fatal("filePages mapped nothing")
		}
		w := &walker{f: f, data: data, size: size, ps: m.pageSize, hwm: m.hwm, seen: map[uint64]bool{}}
		if err := f.Truncate(int64(cut)); err != nil {
			t.Fatal(err)
		}
		return walkMapped(w, m.root)
	}
	if why, faulted := walk(size); why != "" || faulted {
		t.Fatalf("intact store: why %q, faulted %v", why, faulted)
	}
	if why, faulted := walk(2 * m.pageSize); !faulted {
		t.Fatalf("a file cut short under the walk: why %q, faulted false; want the fault reported", why)
	}
}
