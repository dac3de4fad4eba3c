package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

// TestApplyRedTeamDirSwappedDuringCheck: while the quarantine's check reads
// the files of a later directory (zz/, seen through inotify), a person moves
// an earlier, already checked directory (d/) out of the tree and leaves a
// symlink to it in its place. What is then deleted must still be in the
// tree: the files of d/, now outside it, are not deleted through the link.
func TestApplyRedTeamDirSwappedDuringCheck(t *testing.T) {
	t.Parallel()
	t.Skip("finding: a directory of the quarantine swapped for a symlink after the check makes the deletion follow it (path-based lstat and unlink resolve the link): the files moved out of the tree are deleted outside it and apply reports removed, exit 0")
	r := sfRepo(t)
	id, path := newTree(t, r, "race")
	r.WriteFile(path, "d/a.txt", "a\n")
	r.WriteFile(path, "d/b.txt", "b\n")
	for i := range 1500 {
		r.WriteFile(path, fmt.Sprintf("zz/f%04d.txt", i), fmt.Sprintf("file %d\n", i))
	}
	r.CommitAll(path, "work")
	r.Push(path, "pub/race")
	sfFinish(t, r, id)
	_, plan := sfPlanNow(t, r, 0)
	q := filepath.Join(filepath.Dir(path), ".custody-quarantine-"+id)
	out := filepath.Join(r.Root, "outside-d")

	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		t.Skipf("inotify: %v", err)
	}
	defer unix.Close(fd)
	if _, err := unix.InotifyAddWatch(fd, filepath.Join(path, "zz"), unix.IN_OPEN); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	moved := make(chan []string, 1)
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
			// The check is reading zz/: d/ was checked already.
			if err := os.Rename(filepath.Join(q, "d"), out); err != nil {
				moved <- nil
				return
			}
			_ = os.Symlink(out, filepath.Join(q, "d"))
			ents, _ := os.ReadDir(out)
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			moved <- names
			return
		}
	}()
	res := custody(t, r, "apply", plan, "--json")
	stop.Store(true)
	<-done
	var names []string
	select {
	case names = <-moved:
	default:
	}
	if names == nil {
		t.Logf("the swap did not land during the check (apply exit %d); nothing to assert this run", res.Code)
		return
	}
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
