package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/custody-sh/custody/fixtures"
)

// TestApplyRedTeamDirSwappedDuringCheck: while the quarantine's check reads
// the files of a later directory (zz/, seen through inotify), a person moves
// an earlier, already checked directory (d/) out of the tree and leaves a
// symlink to it in its place. What is then deleted must still be in the
// tree: the files of d/, now outside it, are not deleted through the link.
func TestApplyRedTeamDirSwappedDuringCheck(t *testing.T) {
	t.Parallel()
	r, _, path, q, plan := rtBigTree(t, "race")
	out := filepath.Join(r.Root, "outside-d")

	var names []string
	res := rtDuringCheck(t, r, plan, path, q, func() bool {
		// The check is reading zz/: d/ was checked already.
		if err := os.Rename(filepath.Join(q, "d"), out); err != nil {
			return false
		}
		_ = os.Symlink(out, filepath.Join(q, "d"))
		ents, _ := os.ReadDir(out)
		for _, e := range ents {
			names = append(names, e.Name())
		}
		return true
	})
	ents, _ := os.ReadDir(out)
	var left []string
	for _, e := range ents {
		left = append(left, e.Name())
	}
	if !slices.Equal(left, names) {
		t.Errorf("apply deleted files outside the tree through a symlink swapped in for d/: %s held %v, now %v (apply exit %d)\n%s",
			out, names, left, res.Code, res)
	}
}

// rtBigTree makes a finished, published tree holding d/a.txt, d/b.txt and
// 1,500 files in zz/ (which the quarantine's check reads after d/), plans
// its removal, and returns its id, path, quarantine and the plan file.
func rtBigTree(t *testing.T, name string) (r *fixtures.Repo, id, path, q, plan string) {
	t.Helper()
	r = sfRepo(t)
	id, path = newTree(t, r, name)
	r.WriteFile(path, "d/a.txt", "a\n")
	r.WriteFile(path, "d/b.txt", "b\n")
	for i := range 1500 {
		r.WriteFile(path, fmt.Sprintf("zz/f%04d.txt", i), fmt.Sprintf("file %d\n", i))
	}
	r.CommitAll(path, "work")
	r.Push(path, "pub/"+name)
	sfFinish(t, r, id)
	_, plan = sfPlanNow(t, r, 0)
	return r, id, path, filepath.Join(filepath.Dir(path), ".custody-quarantine-"+id), plan
}

// rtDuringCheck applies plan and runs act once, as soon as a file of
// path/zz is opened while the tree is in quarantine q (the check is reading
// zz/). act reports whether it did its work; rtDuringCheck returns apply's
// result and skips the test when act never ran or did nothing.
func rtDuringCheck(t *testing.T, r *fixtures.Repo, plan, path, q string, act func() bool) result {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		t.Skipf("inotify: %v", err)
	}
	defer unix.Close(fd)
	if _, err := unix.InotifyAddWatch(fd, filepath.Join(path, "zz"), unix.IN_OPEN); err != nil {
		t.Fatal(err)
	}
	var stop, acted atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 64<<10)
		for !stop.Load() {
			pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			if n, _ := unix.Poll(pfd, 10); n <= 0 {
				continue
			}
			for {
				if n, err := unix.Read(fd, buf); n <= 0 || err != nil {
					break
				}
			}
			if _, err := os.Lstat(q); err != nil {
				continue // not yet in quarantine
			}
			acted.Store(act())
			return
		}
	}()
	res := custody(t, r, "apply", plan, "--json")
	stop.Store(true)
	<-done
	if !acted.Load() {
		t.Skipf("the change did not land during the check (apply exit %d); nothing to assert this run", res.Code)
	}
	return res
}

// TestApplyRedTeamWriteDuringCheck: while the quarantine's check reads zz/,
// a person writes a file into d/, already checked. The file is kept, and
// the tree comes back whole or the refusal says what of it was deleted.
func TestApplyRedTeamWriteDuringCheck(t *testing.T) {
	t.Parallel()
	r, id, path, q, plan := rtBigTree(t, "write")
	res := rtDuringCheck(t, r, plan, path, q, func() bool {
		return os.WriteFile(filepath.Join(q, "d", "mine.txt"), []byte("mine\n"), 0o644) == nil
	})
	ref := rtRefused(t, res, id)
	rtWant(t, filepath.Join(path, "d", "mine.txt"), "mine\n")
	missing := 0
	for _, f := range []string{".git", "d/a.txt", "zz/f0000.txt", "zz/f1499.txt"} {
		if _, err := os.Lstat(filepath.Join(path, f)); err != nil {
			missing++
		}
	}
	if missing > 0 && !strings.Contains(ref.Message, "deleted") {
		t.Errorf("the tree came back with %d of 4 sampled files (.git among them) gone, and the refusal does not say so: %+v", missing, ref)
	}
	if _, err := os.Lstat(filepath.Join(path, ".git")); err != nil {
		t.Errorf("the tree came back without its .git (%v), so git no longer knows it: %+v", err, ref)
	}
	rtKeptOrRemoved(t, r, id, path, q)
}

// TestApplyRedTeamEditDuringCheck: while the quarantine's check reads zz/,
// a person rewrites d/a.txt, already checked, in place. Its verification
// right before its deletion reads it again: it is kept with the new bytes,
// and the tree comes back with its .git.
func TestApplyRedTeamEditDuringCheck(t *testing.T) {
	t.Parallel()
	r, id, path, q, plan := rtBigTree(t, "edit")
	res := rtDuringCheck(t, r, plan, path, q, func() bool {
		f, err := os.OpenFile(filepath.Join(q, "d", "a.txt"), os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			return false
		}
		_, err = f.WriteString("edited\n")
		return f.Close() == nil && err == nil
	})
	ref := rtRefused(t, res, id)
	if ref.Code != "quarantine-changed" {
		t.Errorf("refusal %+v, want quarantine-changed", ref)
	}
	rtWant(t, filepath.Join(path, "d", "a.txt"), "edited\n")
	if _, err := os.Lstat(filepath.Join(path, ".git")); err != nil {
		t.Errorf("the tree came back without its .git: %v", err)
	}
	rtKeptOrRemoved(t, r, id, path, q)
}
