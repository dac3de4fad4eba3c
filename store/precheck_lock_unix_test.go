//go:build unix

package store_test

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/custody-sh/custody/store"
)

// TestPrecheckWaitsForTheWriter: while another process holds the state
// file's exclusive lock and its pages are halfway written (here: every
// page but the two meta pages overwritten), a command waits for the lock
// instead of reading them, and once the writer is done it reads the
// healthy file. (Reading without the lock called such a file corrupt and
// advised moving it aside.)
func TestPrecheckWaitsForTheWriter(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "custody", store.FileName)
	s, err := store.Open(path, 10*time.Second, true)
	if err != nil {
		t.Fatal(err)
	}
	want, err := s.RepositoryID()
	if err != nil {
		t.Fatal(err)
	}
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	writer, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	if err := syscall.Flock(int(writer.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	ps := os.Getpagesize()
	if _, err := writer.WriteAt(bytes.Repeat([]byte{0xff}, len(orig)-2*ps), int64(2*ps)); err != nil {
		t.Fatal(err)
	}
	type answer struct {
		id  string
		err error
	}
	done := make(chan answer, 1)
	go func() {
		id, err := s.RepositoryID()
		done <- answer{id, err}
	}()
	select {
	case a := <-done:
		t.Fatalf("read the file while another process held its lock and was writing it: %q, %v", a.id, a.err)
	case <-time.After(500 * time.Millisecond):
	}
	if _, err := writer.WriteAt(orig, 0); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(writer.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	select {
	case a := <-done:
		if a.err != nil || a.id != want {
			t.Errorf("once the writer was done: %q, %v; want %q", a.id, a.err, want)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("still waiting 30 s after the writer let go")
	}
}
