//go:build linux

package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// TestStoreRemembersASoundFile: a Store walks its state file once and,
// while the file stays exactly as walked, opens it again without walking;
// any write to the file after that (a page damaged in place, same size)
// is walked again and refused, never read by bbolt; and doctor's check
// walks whatever the Store knew.
func TestStoreRemembersASoundFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "custody", FileName)
	s, err := OpenWith(context.Background(), path, Options{Timeout: 5 * time.Second, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	// The file's last change must lie before the walk by more than the
	// racy window for the walk's result to stand.
	time.Sleep(2 * racyWindow)
	view := func() error { return s.view(func(*bolt.Tx) error { return nil }) }
	if err := view(); err != nil {
		t.Fatal(err)
	}
	first := s.sound.Load()
	if first == nil {
		t.Fatal("the walk left nothing known")
	}
	if err := view(); err != nil {
		t.Fatal(err)
	}
	if s.sound.Load() != first {
		t.Error("the second open walked again although the file was as walked")
	}
	// Doctor walks whatever was known.
	if _, err := s.Check(); err != nil {
		t.Fatal(err)
	}
	if s.sound.Load() == first {
		t.Error("doctor's check did not walk the file")
	}
	// Damage the root bucket's page in place: the size stays, the change
	// time moves, and the next open walks and refuses it.
	damageRootPage(t, path)
	err = view()
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "neither a branch nor a leaf page") {
		t.Fatalf("open after a page was damaged in place: %v, want ErrCorrupt naming the page the walk found", err)
	}
	t.Log(err)
}

// damageRootPage writes over the flags of the root bucket's page of the
// state file at path, in place: the size stays, the change time moves.
func damageRootPage(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	m, ok := bestMeta(f, uint64(fi.Size()))
	if !ok {
		t.Fatal("no meta")
	}
	if _, err := f.WriteAt([]byte{0x7f, 0}, int64(m.root*m.pageSize+8)); err != nil {
		t.Fatal(err)
	}
}
