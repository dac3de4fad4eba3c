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

// TestStampRoundTrip: a stamp reads back as what was written, and
// anything else (another version, a field too many or too few, a number
// that is not one, a digest that does not match, no newline, a second
// line) is no stamp.
func TestStampRoundTrip(t *testing.T) {
	c := &checked{id: fileID{dev: 2049, ino: 1234567, size: 65536, mtime: 1764700000123456789, ctime: -5}, txid: 42, freelist: true,
		walkedAt: time.Unix(0, 1764700001000000001)}
	line := formatStamp(c)
	for _, own := range []bool{false, true} {
		c := *c
		c.committed = own
		got := parseStamp([]byte(formatStamp(&c)))
		if got == nil || got.id != c.id || got.txid != c.txid || got.freelist != c.freelist || !got.walkedAt.Equal(c.walkedAt) || got.committed != own {
			t.Fatalf("parseStamp(formatStamp(c)) = %+v, want %+v", got, c)
		}
	}
	body := line[:strings.LastIndexByte(line, ' ')]
	for _, bad := range []string{
		"",
		strings.TrimSuffix(line, "\n"),
		line + line,
		strings.Replace(line, stampVersion, "custody-checked/1", 1),
		strings.Replace(line, " 1764700001000000001 0 ", " 1764700001000000001 2 ", 1), // committed is 0 or 1
		strings.Replace(line, " 42 ", " 43 ", 1),                                       // the digest no longer matches
		strings.Replace(line, " 1 ", " 2 ", 1),                                         // freelist is 0 or 1
		body + "\n",                                                                    // no digest
		strings.Replace(line, " 65536 ", " 65536 7 ", 1),                               // a field too many
		strings.Replace(line, "1234567", "12a4567", 1),                                 // not a number
		strings.Replace(line, "\n", "\r\n", 1),                                         // another line end
		formatStamp(c)[:len(line)-3] + "\n",                                            // cut short
		strings.Replace(formatStamp(c), " ", "  ", 1),                                  // another separator
		strings.Replace(formatStamp(c), stampVersion, "x"+stampVersion, 1),
	} {
		if got := parseStamp([]byte(bad)); got != nil {
			t.Errorf("parseStamp(%q) = %+v, want no stamp", bad, got)
		}
	}
}

// stampStore makes a state file and waits until its last change lies
// before any later walk by more than the racy window. What its creation
// knew of the file (its commits') is forgotten, in the Store and on disk:
// the next open walks.
func stampStore(t *testing.T) (string, *Store) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "custody", FileName)
	s, err := OpenWith(context.Background(), path, Options{Timeout: 5 * time.Second, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	forget(t, s)
	time.Sleep(2 * racyWindow)
	return path, s
}

// forget drops what s and the stamp on disk know of the state file.
func forget(t *testing.T, s *Store) {
	t.Helper()
	s.sound.Store(nil)
	if err := os.Remove(stampPath(s.path)); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
}

// reopen is the next command's Store of the state file at path: it knows
// nothing of any walk but the stamp. It reports whether its first read
// walked the file.
func reopen(t *testing.T, path string) (walked bool, err error) {
	t.Helper()
	s := &Store{path: path, timeout: 5 * time.Second, schema: DefaultSchema()}
	err = s.view(func(*bolt.Tx) error { return nil })
	return s.sound.Load() != nil, err
}

// TestStampCarriesTheWalk: a read that walked the file leaves a stamp, and
// the next command's first open trusts it and does not walk; doctor's
// check walks all the same; once the file is written in place (a page
// damaged, same size), the stamp no longer names it: the next open walks
// and refuses the damage.
func TestStampCarriesTheWalk(t *testing.T) {
	t.Parallel()
	path, s := stampStore(t)
	if err := s.view(func(*bolt.Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	st := readStamp(path)
	if st == nil || s.sound.Load() == nil || st.id != s.sound.Load().id || st.txid != s.sound.Load().txid {
		t.Fatalf("stamp %+v after a walk that found %+v", st, s.sound.Load())
	}
	if walked, err := reopen(t, path); err != nil || walked {
		t.Fatalf("the next command's open walked the file (%v) although the stamp names it: %v", walked, err)
	}
	doctor := &Store{path: path, timeout: 5 * time.Second, schema: DefaultSchema()}
	if _, err := doctor.Check(); err != nil {
		t.Fatal(err)
	}
	if doctor.sound.Load() == nil {
		t.Error("doctor's check trusted the stamp instead of walking")
	}
	damageRootPage(t, path)
	if _, err := reopen(t, path); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("open after a page was damaged in place under a stamp: %v, want ErrCorrupt", err)
	}
}

// TestStampNotTrusted: the next command walks when the stamp was taken
// too soon after the file's last change (racy), when it is damaged, when
// it names another file (the state file replaced by a copy), and when it
// is a symlink (never followed, never written through); a transaction that
// fails leaves no stamp, and a write that rolls back (an unchanged lease)
// leaves one good for writers too.
func TestStampNotTrusted(t *testing.T) {
	t.Parallel()
	t.Run("racy", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "custody", FileName)
		s, err := OpenWith(context.Background(), path, Options{Timeout: 5 * time.Second, Create: true})
		if err != nil {
			t.Fatal(err)
		}
		forget(t, s)
		if err := s.view(func(*bolt.Tx) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if st := readStamp(path); st != nil && !time.Unix(0, st.id.ctime).Add(racyWindow).Before(st.walkedAt) {
			if walked, err := reopen(t, path); err != nil || !walked {
				t.Fatalf("a stamp taken within the racy window of the file's change was trusted (walked %v, %v)", walked, err)
			}
		} else {
			t.Logf("the walk came %v after the change; racy stamps are covered by TestCheckedTrusts", racyWindow)
		}
	})
	t.Run("damaged", func(t *testing.T) {
		t.Parallel()
		path, s := stampStore(t)
		if err := s.view(func(*bolt.Tx) error { return nil }); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(stampPath(path))
		if err != nil {
			t.Fatal(err)
		}
		b[len(stampVersion)+1] ^= 1 // the device number, under the digest
		if err := os.WriteFile(stampPath(path), b, 0o644); err != nil {
			t.Fatal(err)
		}
		if walked, err := reopen(t, path); err != nil || !walked {
			t.Fatalf("a damaged stamp was trusted (walked %v, %v)", walked, err)
		}
		if readStamp(path) == nil {
			t.Error("the walk after a damaged stamp wrote no good one")
		}
	})
	t.Run("replaced", func(t *testing.T) {
		t.Parallel()
		path, s := stampStore(t)
		if err := s.view(func(*bolt.Tx) error { return nil }); err != nil {
			t.Fatal(err)
		}
		stamp, err := os.ReadFile(stampPath(path))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(stampPath(path), stamp, 0o644); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * racyWindow)
		if walked, err := reopen(t, path); err != nil || !walked {
			t.Fatalf("the stamp of the file a copy replaced was trusted (walked %v, %v)", walked, err)
		}
	})
	t.Run("symlink", func(t *testing.T) {
		t.Parallel()
		path, s := stampStore(t)
		elsewhere := filepath.Join(t.TempDir(), "elsewhere")
		if err := s.view(func(*bolt.Tx) error { return nil }); err != nil {
			t.Fatal(err)
		}
		good, err := os.ReadFile(stampPath(path))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(elsewhere, good, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(stampPath(path)); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(elsewhere, stampPath(path)); err != nil {
			t.Fatal(err)
		}
		if walked, err := reopen(t, path); err != nil || !walked {
			t.Fatalf("a stamp reached through a symlink was trusted (walked %v, %v)", walked, err)
		}
		if fi, err := os.Lstat(stampPath(path)); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("the symlink at the stamp's path was replaced: %v", err)
		}
		if b, _ := os.ReadFile(elsewhere); string(b) != string(good) {
			t.Errorf("the stamp was written through a symlink: %q", b)
		}
	})
	t.Run("failed transaction", func(t *testing.T) {
		t.Parallel()
		path, s := stampStore(t)
		s.sound.Store(nil)
		if err := os.Remove(stampPath(path)); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		refused := errors.New("refused")
		if err := s.view(func(*bolt.Tx) error { return refused }); !errors.Is(err, refused) {
			t.Fatal(err)
		}
		if _, err := os.Lstat(stampPath(path)); !os.IsNotExist(err) {
			t.Errorf("a refused transaction left a stamp (%v)", err)
		}
	})
	t.Run("rolled back write", func(t *testing.T) {
		t.Parallel()
		path, s := stampStore(t)
		s.sound.Store(nil)
		if err := os.Remove(stampPath(path)); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if err := s.write(func(*bolt.Tx) error { return errLeaseUnchanged }); !errors.Is(err, errLeaseUnchanged) {
			t.Fatal(err)
		}
		st := readStamp(path)
		if st == nil || !st.freelist {
			t.Fatalf("a write that changed nothing left stamp %+v, want one with the freelist checked", st)
		}
		w := &Store{path: path, timeout: 5 * time.Second, schema: DefaultSchema()}
		if err := w.write(func(*bolt.Tx) error { return errLeaseUnchanged }); !errors.Is(err, errLeaseUnchanged) {
			t.Fatal(err)
		}
		if w.sound.Load() != nil {
			t.Error("the next writer walked although the stamp names the file with its freelist checked")
		}
	})
}

// TestWriteAfterReadChecksTheFreelistOnly: a Store that walked the file to
// read and then opens it, unchanged, to write checks the freelist page and
// does not walk the pages again (the walk's time stays the first walk's).
func TestWriteAfterReadChecksTheFreelistOnly(t *testing.T) {
	t.Parallel()
	_, s := stampStore(t)
	s.sound.Store(nil)
	if err := s.view(func(*bolt.Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	read := s.sound.Load()
	if read == nil || read.freelist {
		t.Fatalf("the read's walk: %+v, want one without the freelist", read)
	}
	if err := s.write(func(*bolt.Tx) error { return errLeaseUnchanged }); !errors.Is(err, errLeaseUnchanged) {
		t.Fatal(err)
	}
	w := s.sound.Load()
	if w == nil || !w.freelist || !w.walkedAt.Equal(read.walkedAt) || w.id != read.id {
		t.Fatalf("after the write's open: %+v, want the read's walk with the freelist checked (%+v)", w, read)
	}
}

// TestCommitStandsForTheFile: after a commit, the file as the commit left
// it (looked at before bbolt's lock was let go) is trusted without a walk,
// however soon after the commit: by the same Store's next read and write
// and by the next command's first open, through the stamp. A commit by
// another Store moves the transaction id, and the first Store walks again;
// a page damaged in place after the commit is caught by the next open.
func TestCommitStandsForTheFile(t *testing.T) {
	t.Parallel()
	path, s := stampStore(t)
	put := func(s *Store) {
		t.Helper()
		if err := s.write(func(tx *bolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists([]byte("test"))
			if err != nil {
				return err
			}
			return b.Put([]byte(time.Now().String()), []byte("v"))
		}); err != nil {
			t.Fatal(err)
		}
	}
	put(s)
	own := s.sound.Load()
	if own == nil || !own.committed || !own.freelist {
		t.Fatalf("after a commit the Store knows %+v, want the commit's file", own)
	}
	if st := readStamp(path); st == nil || st.id != own.id || st.txid != own.txid || !st.committed || !st.walkedAt.Equal(own.walkedAt) {
		t.Fatalf("after a commit the stamp is %+v, want %+v", st, own)
	}
	if err := s.view(func(*bolt.Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	put(s)
	if got := s.sound.Load(); got == nil || !got.committed || got.txid != own.txid+1 {
		t.Fatalf("after a read and a second commit the Store knows %+v, want the second commit's file (txid %d)", got, own.txid+1)
	}
	if walked, err := reopen(t, path); err != nil || walked {
		t.Fatalf("the next command's open walked the file (%v) although the stamp names its last commit: %v", walked, err)
	}
	// Another command commits: the first Store no longer knows the file.
	other := &Store{path: path, timeout: 5 * time.Second, schema: DefaultSchema()}
	put(other)
	if err := s.view(func(*bolt.Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if got, st := s.sound.Load(), readStamp(path); got == nil || got.committed || st == nil || got.txid != st.txid {
		t.Fatalf("after another Store's commit this one knows %+v, want its own walk of the file the stamp names (%+v)", got, st)
	}
	damageRootPage(t, path)
	if _, err := reopen(t, path); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("open after a page was damaged in place under a committed stamp: %v, want ErrCorrupt", err)
	}
}
