//go:build linux

package store

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// TestCommitOnAnotherWritersFileIsNotTrusted: precheck looks at the file
// under a shared lock it lets go before bbolt takes its exclusive one. A
// writer that takes the lock in between (here one that writes a page in
// place, under an exclusive flock) leaves a file this Store never looked
// at; the Store's commit on top of it must not be stamped as standing for
// the file (decision 0266: "the commit started from a file the same open
// found sound"). The next command must walk and refuse the damage.
func TestCommitOnAnotherWritersFileIsNotTrusted(t *testing.T) {
	path, s := stampStore(t)
	put := func(bucket string, n int) error {
		return s.write(func(tx *bolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists([]byte(bucket))
			if err != nil {
				return err
			}
			for i := 0; i < n; i++ {
				if err := b.Put([]byte(fmt.Sprintf("%s-%d-%d", bucket, time.Now().UnixNano(), i)), make([]byte, 200)); err != nil {
					return err
				}
			}
			return nil
		})
	}
	// A bucket of its own pages, which the commit below leaves alone.
	if err := put("cold", 100); err != nil {
		t.Fatal(err)
	}
	var coldRoot uint64
	if err := s.view(func(tx *bolt.Tx) error {
		coldRoot = uint64(tx.Bucket([]byte("cold")).Root())
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if own := s.sound.Load(); own == nil || !own.committed {
		t.Fatalf("after a commit the Store knows %+v", own)
	}
	// A reader holds the shared lock: the other writer waits for it.
	reader, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(reader.Fd()), syscall.LOCK_SH); err != nil {
		t.Fatal(err)
	}
	other := make(chan error, 1)
	go func() {
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			other <- err
			return
		}
		defer f.Close()
		// Waits in the kernel: woken as soon as the reader lets go.
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			other <- err
			return
		}
		fi, err := f.Stat()
		if err != nil {
			other <- err
			return
		}
		m, ok := bestMeta(f, uint64(fi.Size()))
		if !ok {
			other <- fmt.Errorf("no meta")
			return
		}
		var hdr [2]byte
		binary.LittleEndian.PutUint16(hdr[:], 0x7f)
		_, err = f.WriteAt(hdr[:], int64(coldRoot*m.pageSize+8))
		other <- err
		// f.Close lets the lock go.
	}()
	mine := make(chan error, 1)
	go func() { mine <- put("test", 1) }()
	// Wait until this Store's precheck is done and bbolt holds the file
	// open, polling for the exclusive lock.
	waitOpen(t, path, 3)
	if err := reader.Close(); err != nil { // the shared lock goes
		t.Fatal(err)
	}
	if err := <-other; err != nil {
		t.Fatal(err)
	}
	if err := <-mine; err != nil {
		t.Fatalf("this Store's commit: %v", err)
	}
	if walked, err := reopen(t, path); err == nil {
		t.Fatalf("the next command opened a file with a damaged page without an error (walked %v): "+
			"the stamp of a commit made on top of another writer's file was trusted", walked)
	}
}

// waitOpen waits until n descriptors of this process name path, steadily.
func waitOpen(t *testing.T, path string, n int) {
	t.Helper()
	steady := 0
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		ents, _ := os.ReadDir("/proc/self/fd")
		c := 0
		for _, e := range ents {
			if l, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && l == path {
				c++
			}
		}
		if c >= n {
			if steady++; steady == 5 {
				return
			}
		} else {
			steady = 0
		}
	}
	t.Fatalf("%d descriptors of %s never open", n, path)
}

// TestCommitStampsTheFileItWrote: trustCommit looks at the state file by
// its path, not at the file bbolt holds open and locked. A file renamed
// over the path while the transaction runs (a restore, a sync tool's
// replace) is stamped as the commit's when its meta carries the
// transaction id the commit wrote; the next command then trusts it
// without a walk, damaged pages and all.
func TestCommitStampsTheFileItWrote(t *testing.T) {
	path, s := stampStore(t)
	if err := s.write(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("cold"))
		if err != nil {
			return err
		}
		for i := 0; i < 100; i++ {
			if err := b.Put([]byte(fmt.Sprintf("cold-%03d", i)), make([]byte, 200)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// The replacement: a copy of the file, one commit further, damaged.
	copyPath := path + ".copy"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(copyPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(copyPath, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	var coldRoot uint64
	if err := db.Update(func(tx *bolt.Tx) error {
		coldRoot = uint64(tx.Bucket([]byte("cold")).Root())
		bk, err := tx.CreateBucketIfNotExists([]byte("test"))
		if err != nil {
			return err
		}
		return bk.Put([]byte("elsewhere"), []byte("v"))
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(copyPath, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := f.Stat()
	m, ok := bestMeta(f, uint64(fi.Size()))
	if !ok {
		t.Fatal("no meta")
	}
	if _, err := f.WriteAt([]byte{0x7f, 0}, int64(coldRoot*m.pageSize+8)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := s.write(func(tx *bolt.Tx) error {
		bk, err := tx.CreateBucketIfNotExists([]byte("test"))
		if err != nil {
			return err
		}
		if err := bk.Put([]byte("here"), []byte("v")); err != nil {
			return err
		}
		return os.Rename(copyPath, path)
	}); err != nil {
		t.Fatal(err)
	}
	if walked, err := reopen(t, path); err == nil {
		t.Fatalf("the next command opened a file renamed over the state file during a commit, with a damaged page, without an error (walked %v): "+
			"the commit's stamp names the file at the path, not the one it wrote", walked)
	}
}
