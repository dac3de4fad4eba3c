//go:build unix

package store

import (
	"bytes"
	"encoding/binary"
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
	f, size, m := mappedStore(t, 200)
	if m.hwm < 4 {
		t.Fatalf("high-water mark %d: want a store of several pages", m.hwm)
	}
	walk := func(cut uint64) (string, bool) {
		data, release, _ := filePages(f, m.hwm*m.pageSize)
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

// TestWalkDropsWhatItTouched: a walk that drops the mapped pages it has
// touched after every read (MADV_DONTNEED; the state file's walk does so
// every dropEvery reads, so its memory does not grow with the file) reads
// the same bytes again from the page cache: it finds nothing wrong with a
// sound store, and still finds a page damaged after the drops began.
func TestWalkDropsWhatItTouched(t *testing.T) {
	t.Parallel()
	f, size, m := mappedStore(t, 2000)
	if m.hwm < 100 {
		t.Fatalf("high-water mark %d: want a store of many pages", m.hwm)
	}
	walk := func() (string, int) {
		data, release, drop := filePages(f, m.hwm*m.pageSize)
		defer release()
		if data == nil {
			t.Fatal("filePages mapped nothing")
		}
		if drop == nil {
			t.Skip("this platform has no drop of mapped pages (Linux has, and CI runs this there)")
		}
		drops := 0
		w := &walker{f: f, data: data, drop: func() { drops++; drop() }, dropEvery: 1, size: size, ps: m.pageSize, hwm: m.hwm, seen: map[uint64]bool{}}
		why, faulted := walkMapped(w, m.root)
		if faulted {
			t.Fatal("the walk faulted")
		}
		return why, drops
	}
	if why, drops := walk(); why != "" || drops < 100 {
		t.Fatalf("a sound store walked with drops: why %q after %d drops; want nothing wrong, after a drop per read", why, drops)
	}
	// Damage the last leaf page's header: its flags no longer say what
	// it is.
	var last uint64
	for pg := m.hwm - 1; pg >= 2; pg-- {
		hdr := make([]byte, pageHeaderSize)
		if _, err := f.ReadAt(hdr, int64(pg*m.pageSize)); err != nil {
			t.Fatal(err)
		}
		if hdr[8] == flagLeaf && binary.LittleEndian.Uint64(hdr) == pg {
			last = pg
			break
		}
	}
	if last == 0 {
		t.Fatal("no leaf page found")
	}
	if _, err := f.WriteAt([]byte{0x7f, 0}, int64(last*m.pageSize+8)); err != nil {
		t.Fatal(err)
	}
	if why, _ := walk(); why == "" {
		t.Fatalf("page %d damaged: the walk with drops found nothing wrong", last)
	}
}

// mappedStore writes a bbolt file of n keys of 300 bytes and returns it
// open for reading and writing, its size and its meta.
func mappedStore(t *testing.T, n int) (*os.File, uint64, meta) {
	t.Helper()
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
		for i := range n {
			if err := b.Put([]byte(fmt.Sprintf("key-%05d", i)), bytes.Repeat([]byte{'v'}, 300)); err != nil {
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
	t.Cleanup(func() { f.Close() })
	fi, _ := f.Stat()
	size := uint64(fi.Size())
	m, ok := bestMeta(f, size)
	if !ok {
		t.Fatal("no valid meta page")
	}
	return f, size, m
}
