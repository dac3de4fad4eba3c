//go:build linux

package quarantine

import (
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// readCounter counts, by path, the files whose content a deletion read.
type readCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *readCounter) opened(p string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[p]++
}

// stamps are the ctime and mtime lstat gives p, in nanoseconds.
func stamps(t *testing.T, p string) (ctime, mtime int64) {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	return st.Ctim.Nano(), st.Mtim.Nano()
}

// momentAfter returns the moment a removal takes of q's filesystem clock
// (changeMoment), once it is later than the ctime and mtime of every
// entry of q: the parent directory is changed until its ctime is. It skips
// where the filesystem's stamps are not trusted (every file is read again
// there, which the race tests cover).
func momentAfter(t *testing.T, q string) time.Time {
	t.Helper()
	if changeMoment(q).IsZero() {
		t.Skip("the temporary directory's filesystem stamps are not the kernel's: every file is read again there")
	}
	var latest int64
	err := filepath.WalkDir(q, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		c, m := stamps(t, p)
		latest = max(latest, c, m)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	touch := filepath.Join(filepath.Dir(q), "touch")
	for range 100 {
		time.Sleep(30 * time.Millisecond)
		must(t, os.WriteFile(touch, nil, 0o644))
		must(t, os.Remove(touch))
		if at := changeMoment(q); at.UnixNano() > latest {
			return at
		}
	}
	t.Fatalf("the parent of %s was never stamped later than its files", q)
	return time.Time{}
}

// TestDeletionReadsEachFileOnce: a quarantine whose files were all
// stamped before the moment its removal took is read once: the check
// opens every regular file for its content, and the deletion trusts each
// one whose identity lstat still gives exactly. Taken at the files' own
// stamps instead, the same moment makes the deletion read every file
// again (git's racily-clean rule), so the count can fail.
func TestDeletionReadsEachFileOnce(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		racy bool
	}{{"stamped before the moment", false}, {"stamped at the moment", true}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			q, m, _ := raceFixture(t)
			since := momentAfter(t, q)
			if c.racy {
				// The latest stamp of any file: every file stamped then is
				// racily clean, every other one is older.
				var latest int64
				for rel := range m {
					ct, mt := stamps(t, filepath.Join(q, filepath.FromSlash(rel)))
					latest = max(latest, ct, mt)
				}
				since = time.Unix(0, latest)
			}
			count := &readCounter{n: map[string]int{}}
			res := qdeletion{m: m, idLen: 40, since: since, opened: count.opened}.run(q)
			if res.stray != "" || res.err != nil {
				t.Fatalf("stopped at %s: %s %v", res.stray, res.why, res.err)
			}
			if raceHas(q) {
				t.Fatalf("%s is still there", q)
			}
			if len(count.n) != len(m) {
				t.Errorf("read %d files, want every one of the %d: %v", len(count.n), len(m), count.n)
			}
			for p, n := range count.n {
				if !c.racy && n != 1 {
					t.Errorf("%s was opened for its content %d times, want once", p, n)
				}
				if c.racy && n > 2 {
					t.Errorf("%s was opened for its content %d times, want at most twice", p, n)
				}
			}
			if c.racy {
				twice := 0
				for _, n := range count.n {
					if n == 2 {
						twice++
					}
				}
				if twice == 0 {
					t.Errorf("no file stamped at the moment was read again: %v", count.n)
				}
			}
		})
	}
}

// TestDeletionCatchesASameSizeRewriteWithItsMtimePutBack: a file rewritten
// between the check and its deletion with bytes of the same size and its
// mtime set back to what the check saw still has another ctime (no one
// can set that), so the deletion reads it again, finds HEAD's bytes gone
// and stops there; the file keeps the new bytes.
func TestDeletionCatchesASameSizeRewriteWithItsMtimePutBack(t *testing.T) {
	t.Parallel()
	q, m, _ := raceFixture(t)
	since := momentAfter(t, q)
	p := filepath.Join(q, "d", "a.txt")
	count := &readCounter{n: map[string]int{}}
	res := qdeletion{m: m, idLen: 40, since: since, opened: count.opened, stage: func(s string) {
		if s != "checked" {
			return
		}
		fi, err := os.Lstat(p)
		must(t, err)
		must(t, os.WriteFile(p, []byte("D A\n"), 0o644))
		must(t, os.Chtimes(p, fi.ModTime(), fi.ModTime()))
		now, err := os.Lstat(p)
		must(t, err)
		if now.Size() != fi.Size() || !now.ModTime().Equal(fi.ModTime()) {
			t.Fatalf("the rewrite changed size or mtime: %v %v, was %v %v", now.Size(), now.ModTime(), fi.Size(), fi.ModTime())
		}
	}}.run(q)
	if res.stray != p || res.why != "its bytes differ from HEAD" {
		t.Fatalf("stopped at %q (%s, %v), want %s: its bytes differ from HEAD", res.stray, res.why, res.err, p)
	}
	if n := count.n[p]; n != 2 {
		t.Errorf("%s was read %d times, want twice (the check, and again for its new ctime)", p, n)
	}
	b, err := os.ReadFile(p)
	must(t, err)
	if string(b) != "D A\n" {
		t.Errorf("%s holds %q, want the rewrite kept", p, b)
	}
}

// TestDeletionReadsARacilyCleanFileAgain: a file whose mtime is not
// earlier than the moment the removal took (modified, by its stamp, in the
// same tick of the filesystem's clock as the moment) may have been changed
// after the check read it without a new stamp, so it is read again right
// before its deletion, though its ctime is older; one nanosecond later,
// the same moment trusts it.
func TestDeletionReadsARacilyCleanFileAgain(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		after time.Duration
		reads int
	}{{"mtime at the moment", 0, 2}, {"mtime a nanosecond before", time.Nanosecond, 1}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			q, m, _ := raceFixture(t)
			momentAfter(t, q)
			p := filepath.Join(q, "a.txt")
			set := time.Now().Add(50 * time.Millisecond)
			must(t, os.Chtimes(p, set, set))
			time.Sleep(100 * time.Millisecond)
			ct, mt := stamps(t, p)
			if ct >= mt {
				t.Fatalf("ctime %d is not before mtime %d", ct, mt)
			}
			since := time.Unix(0, mt).Add(c.after)
			count := &readCounter{n: map[string]int{}}
			res := qdeletion{m: m, idLen: 40, since: since, opened: count.opened}.run(q)
			if res.stray != "" || res.err != nil {
				t.Fatalf("stopped at %s: %s %v", res.stray, res.why, res.err)
			}
			if n := count.n[p]; n != c.reads {
				t.Errorf("%s was opened for its content %d times, want %d", p, n, c.reads)
			}
			if n := count.n[filepath.Join(q, "d", "a.txt")]; n != 1 {
				t.Errorf("d/a.txt, stamped long before, was opened %d times, want once", n)
			}
		})
	}
}
