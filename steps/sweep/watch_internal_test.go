//go:build linux

package sweep

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/custody-sh/custody/machine"
)

// TestDiscardGoesOnTheWatchWhereNothingChanged: in a tree nothing touched
// since the watched walk, every file goes without a stat of its own (on
// the watch's word), and a hard-linked file is statted all the same.
func TestDiscardGoesOnTheWatchWhereNothingChanged(t *testing.T) {
	t.Parallel()
	tree := t.TempDir()
	files := []string{"target/.rustc_info.json", "target/debug/app", "target/debug/deps/a.rlib", "target/debug/deps/b.rlib", "target/release/x"}
	for _, rel := range files {
		writeLayout(t, tree, rel)
	}
	if err := os.Link(filepath.Join(tree, "target", "debug", "app"), filepath.Join(tree, "target", "debug", "deps", "app-1234")); err != nil {
		t.Fatal(err)
	}
	w := watchedWalk(t, tree)
	if len(w.watched) != 4 {
		t.Fatalf("the walk watched %v; want target, target/debug, target/debug/deps and target/release", w.watched)
	}
	d := discardSnapshot(openTree(t, tree), mustSnapshot(t, w, "target", machine.BuildCargoTarget))
	if d.files != 6 || len(d.kept) != 0 {
		t.Fatalf("discarded %+v; want 6 files and nothing kept", d)
	}
	if d.watched != 4 {
		t.Errorf("%d files went on the watch's word; want 4 (the two names of the hard-linked file are statted)", d.watched)
	}
	if _, err := os.Lstat(filepath.Join(tree, "target")); !os.IsNotExist(err) {
		t.Errorf("target is still there (%v)", err)
	}
}

// TestWatchSeesEveryChangeAStatWould: each way of changing a file of a
// watched build directory after the walk, including those a stat sees
// only by its change time, keeps that file (and its directory), while the
// files of an untouched directory beside it go on the watch's word. Each
// change is made in a directory of its own.
func TestWatchSeesEveryChangeAStatWould(t *testing.T) {
	t.Parallel()
	changes := map[string]func(t *testing.T, f string){
		"written in place, its times put back": func(t *testing.T, f string) {
			fi := lstat(t, f)
			fh, err := os.OpenFile(f, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			fh.WriteAt([]byte("X"), 0)
			fh.Close()
			if err := os.Chtimes(f, fi.ModTime(), fi.ModTime()); err != nil {
				t.Fatal(err)
			}
		},
		"truncated": func(t *testing.T, f string) {
			if err := os.Truncate(f, 0); err != nil {
				t.Fatal(err)
			}
		},
		"made executable": func(t *testing.T, f string) {
			if err := os.Chmod(f, 0o755); err != nil {
				t.Fatal(err)
			}
		},
		"replaced by a rename": func(t *testing.T, f string) {
			tmp := f + ".tmp"
			if err := os.WriteFile(tmp, []byte("content of o\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, f); err != nil {
				t.Fatal(err)
			}
		},
		"written through a mapping made after the walk": func(t *testing.T, f string) {
			fh, err := os.OpenFile(f, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer fh.Close()
			m, err := syscall.Mmap(int(fh.Fd()), 0, 1, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
			if err != nil {
				t.Fatal(err)
			}
			m[0] = 'X'
			syscall.Munmap(m)
		},
		"hard-linked from outside, written through the other name": func(t *testing.T, f string) {
			// The link is made before the walk (see below); the
			// write goes through the other name, whose directory
			// is not watched.
			fh, err := os.OpenFile(f+".outside", os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			fh.WriteString("more")
			fh.Close()
		},
	}
	for name, change := range changes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tree := t.TempDir()
			outside := t.TempDir()
			for _, rel := range []string{"target/changed/o", "target/changed/p", "target/quiet/q", "target/quiet/r"} {
				writeLayout(t, tree, rel)
			}
			changed := filepath.Join(tree, "target", "changed", "o")
			if strings.HasPrefix(name, "hard-linked") {
				if err := os.Link(changed, filepath.Join(outside, "o")); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(filepath.Join(outside, "o"), changed+".outside"); err != nil {
					t.Fatal(err)
				}
			}
			w := watchedWalk(t, tree)
			s := mustSnapshot(t, w, "target", machine.BuildCargoTarget)
			time.Sleep(5 * time.Millisecond)
			change(t, changed)
			if strings.HasPrefix(name, "hard-linked") {
				os.Remove(changed + ".outside") // keep the kept list to the file itself
			}
			d := discardSnapshot(openTree(t, tree), s)
			if _, err := os.Lstat(changed); err != nil {
				t.Fatalf("the changed file is gone: %v", err)
			}
			if !slices.Contains(d.kept, "target/changed/o") {
				t.Errorf("kept %q; want it to name target/changed/o", d.kept)
			}
			for _, gone := range []string{"target/quiet"} {
				if _, err := os.Lstat(filepath.Join(tree, gone)); !os.IsNotExist(err) {
					t.Errorf("%s, untouched, is still there (%v)", gone, err)
				}
			}
			if d.watched < 2 {
				t.Errorf("%d files went on the watch's word; want the untouched directory's two at least", d.watched)
			}
		})
	}
}

// TestWatchKeepsADirectoryPutInPlaceOfTheWatchedOne: a build directory
// that is not, when the deletion opens it, the one the walk watched is
// not taken on the watch's word: its files are statted, found to be
// others, and kept. Moved away with another made in its place holding
// files of the same names and bytes (the watch sees the move), and a file
// system mounted over it (which no watch sees: the directory's inode
// tells).
func TestWatchKeepsADirectoryPutInPlaceOfTheWatchedOne(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"moved", "mounted over"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			if how == "mounted over" && os.Geteuid() != 0 {
				t.Skip("mounting a file system needs root; CI runs this as root")
			}
			tree := t.TempDir()
			for _, rel := range []string{"target/debug/o", "target/debug/p"} {
				writeLayout(t, tree, rel)
			}
			w := watchedWalk(t, tree)
			s := mustSnapshot(t, w, "target", machine.BuildCargoTarget)
			debug := filepath.Join(tree, "target", "debug")
			if how == "moved" {
				if err := os.Rename(debug, filepath.Join(tree, "moved")); err != nil {
					t.Fatal(err)
				}
			} else {
				if err := unix.Mount("tmpfs", debug, "tmpfs", 0, ""); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { unix.Unmount(debug, unix.MNT_DETACH) })
			}
			for _, rel := range []string{"target/debug/o", "target/debug/p"} {
				writeLayout(t, tree, rel) // same names, same bytes: other files
			}
			d := discardSnapshot(openTree(t, tree), s)
			for _, keep := range []string{"target/debug/o", "target/debug/p"} {
				if _, err := os.Lstat(filepath.Join(tree, keep)); err != nil {
					t.Errorf("%s is gone: %v", keep, err)
				}
			}
			if d.watched != 0 {
				t.Errorf("%d files went on the watch's word in a directory that is not the watched one", d.watched)
			}
		})
	}
}

// TestAddEvents: the events that change a directory mark its watch; a
// directory opened (listed) does not; an overflowed queue or a record cut
// short says that any directory may have changed.
func TestAddEvents(t *testing.T) {
	t.Parallel()
	record := func(wd int32, mask uint32, name string) []byte {
		n := (len(name) + 1 + 15) / 16 * 16
		b := make([]byte, unix.SizeofInotifyEvent+n)
		binary.NativeEndian.PutUint32(b[0:], uint32(wd))
		binary.NativeEndian.PutUint32(b[4:], mask)
		binary.NativeEndian.PutUint32(b[12:], uint32(n))
		copy(b[16:], name)
		return b
	}
	cat := func(bs ...[]byte) []byte { return slices.Concat(bs...) }
	for _, tc := range []struct {
		name    string
		b       []byte
		ok      bool
		touched []int32
	}{
		{"modify", record(1, unix.IN_MODIFY, "f"), true, []int32{1}},
		{"attrib and create", cat(record(1, unix.IN_ATTRIB, "f"), record(2, unix.IN_CREATE, "g")), true, []int32{1, 2}},
		{"a file opened", record(3, unix.IN_OPEN, "f"), true, []int32{3}},
		{"a directory opened", cat(record(1, unix.IN_OPEN|unix.IN_ISDIR, "sub"), record(2, unix.IN_OPEN|unix.IN_ISDIR, "")), true, nil},
		{"a directory made", record(1, unix.IN_CREATE|unix.IN_ISDIR, "sub"), true, []int32{1}},
		{"the directory moved", record(4, unix.IN_MOVE_SELF, ""), true, []int32{4}},
		{"the watch went", record(4, unix.IN_IGNORED, ""), true, []int32{4}},
		{"overflow", cat(record(1, unix.IN_MODIFY, "f"), record(-1, unix.IN_Q_OVERFLOW, "")), false, []int32{1}},
		{"cut short", record(1, unix.IN_MODIFY, "f")[:10], false, nil},
		{"name longer than the read", record(1, unix.IN_MODIFY, "name")[:20], false, nil},
	} {
		touched := map[int32]bool{}
		ok := addEvents(tc.b, touched)
		var got []int32
		for wd := range touched {
			got = append(got, wd)
		}
		slices.Sort(got)
		if ok != tc.ok || !slices.Equal(got, tc.touched) {
			t.Errorf("%s: ok %v touched %v; want %v %v", tc.name, ok, got, tc.ok, tc.touched)
		}
	}
}

// lstat is p's lstat, failing the test when there is none.
func lstat(t *testing.T, p string) os.FileInfo {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}
