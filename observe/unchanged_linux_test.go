//go:build linux

package observe

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/machine"
)

// TestUnchangedSince: the quarantine's re-check before a deletion skips
// reading a file again only when lstat gives exactly the identity the
// check saw and its ctime and mtime are both earlier than the moment of
// the filesystem's clock taken before the read (git's racily-clean rule);
// a file stamped at that moment (its ctime, or its mtime), a same-size
// rewrite with its mtime put back, a file swapped for a copy, the zero
// moment and a moment ahead of the wall clock are all read again.
func TestUnchangedSince(t *testing.T) {
	t.Parallel()
	repo, _ := cacheRepo(t, cacheFiles)
	if ok, _ := StampsTrusted(repo); !ok {
		t.Skip("the temporary directory is on a filesystem whose stamps custody does not trust")
	}
	p := filepath.Join(repo, "a.txt")
	lstat := func() os.FileInfo {
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi
	}
	stamp := func(fi os.FileInfo) (ctime, mtime time.Time) {
		st := fi.Sys().(*syscall.Stat_t)
		return time.Unix(0, st.Ctim.Nano()), time.Unix(0, st.Mtim.Nano())
	}
	before := lstat()
	ctime, _ := stamp(before)
	// A moment of the filesystem's clock after the file's last change.
	time.Sleep(20 * time.Millisecond)
	dev, _ := DevOf(before)
	if err := os.WriteFile(filepath.Join(repo, "touch"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	moment, ok := ChangeMoment(repo, dev)
	if !ok || !moment.After(ctime) {
		t.Fatalf("ChangeMoment(%s) = %v %v, want a moment after the file's ctime %v", repo, moment, ok, ctime)
	}
	got := map[string]bool{
		"untouched":             UnchangedSince(before, lstat(), moment),
		"stamped at the moment": UnchangedSince(before, lstat(), ctime),
		"a nanosecond later":    UnchangedSince(before, lstat(), ctime.Add(time.Nanosecond)),
		"no moment":             UnchangedSince(before, lstat(), time.Time{}),
		"a moment ahead":        UnchangedSince(before, lstat(), time.Now().Add(time.Hour)),
	}
	// Racily clean by its mtime alone: modified (by its stamp) at the
	// moment, its inode changed before it.
	set := time.Now().Add(50 * time.Millisecond)
	if err := os.Chtimes(p, set, set); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	racy := lstat()
	c, m := stamp(racy)
	if !c.Before(m) {
		t.Fatalf("ctime %v is not before mtime %v", c, m)
	}
	got["mtime at the moment"] = UnchangedSince(racy, lstat(), m)
	got["mtime a nanosecond before"] = UnchangedSince(racy, lstat(), m.Add(time.Nanosecond))
	before = lstat()
	time.Sleep(20 * time.Millisecond)
	sameSizeRewrite(t, repo, "a.txt", "ALPHA\n")
	got["same-size rewrite, mtime put back"] = UnchangedSince(before, lstat(), time.Now())
	before = lstat()
	if err := os.Rename(p, p+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("ALPHA\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, before.ModTime(), before.ModTime()); err != nil {
		t.Fatal(err)
	}
	got["swapped for a copy"] = UnchangedSince(before, lstat(), time.Now())
	want := map[string]bool{"untouched": true, "stamped at the moment": false, "a nanosecond later": true, "no moment": false,
		"a moment ahead": false, "mtime at the moment": false, "mtime a nanosecond before": true,
		"same-size rewrite, mtime put back": false, "swapped for a copy": false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("UnchangedSince (-want +got):\n%s", diff)
	}
}

// TestHashCacheSharedWithinOneCommand: a Shared cache lets a later walk of
// the same command (apply's final observation) reuse, unread, what an
// earlier walk read of files written a moment before, which the disk
// cache's margin keeps it from holding; a same-size rewrite with its
// mtime put back between the walks is read again and reported. Without
// Shared every walk reads every such file.
func TestHashCacheSharedWithinOneCommand(t *testing.T) {
	t.Parallel()
	for _, shared := range []bool{true, false} {
		repo, cache := cacheRepo(t, cacheFiles)
		cache.Now = nil // the real clock: the files were written just now
		cache.Shared = shared
		time.Sleep(30 * time.Millisecond) // the moment the walk takes comes after their stamps
		for range 2 {
			if us := account(t, repo, cache); us != nil {
				t.Fatalf("clean checkout: %+v", us)
			}
		}
		want := map[bool][2]int64{true: {3, 3}, false: {6, 0}}[shared]
		if h, r := cache.Hashed(), cache.Reused(); [2]int64{h, r} != want {
			t.Fatalf("shared %v: two walks of files written a moment ago hashed %d and reused %d, want %v", shared, h, r, want)
		}
		if !shared {
			continue
		}
		sameSizeRewrite(t, repo, "a.txt", "ALPHA\n")
		wantUs := []machine.Unaccounted{{Code: machine.CodeContentDiffers, Path: "a.txt"}}
		if diff := cmp.Diff(wantUs, account(t, repo, cache)); diff != "" {
			t.Errorf("rewrite between the walks (-want +got):\n%s", diff)
		}
		if h := cache.Hashed(); h != 4 {
			t.Errorf("after the rewrite %d files were hashed in all, want 4 (the rewritten one again)", h)
		}
	}
}
