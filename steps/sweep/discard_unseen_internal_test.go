//go:build linux

package sweep

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/custody-sh/custody/machine"
)

// TestDiscardKeepsWritesNoDirectoryHears: writes after the check that
// reach a build file by ways its directory never hears of (no inotify
// event there, which is why the deletion does not go by a directory's
// watch; decision 0270) are still seen by the stat just before each
// unlink, and the file stays: a second name made after the check and
// written through, a descriptor opened through a name removed before the
// check, and a shared mapping made before the check by a process that
// closed the file since.
func TestDiscardKeepsWritesNoDirectoryHears(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		before func(t *testing.T, o, outside string) func(t *testing.T)
	}{
		"a link made after the check, written through": {func(t *testing.T, o, outside string) func(*testing.T) {
			return func(t *testing.T) {
				other := filepath.Join(outside, "o")
				if err := os.Link(o, other); err != nil {
					t.Fatal(err)
				}
				appendTo(t, other)
				if err := os.Remove(other); err != nil {
					t.Fatal(err)
				}
			}
		}},
		"opened through a name removed before the check": {func(t *testing.T, o, outside string) func(*testing.T) {
			other := filepath.Join(outside, "o")
			if err := os.Link(o, other); err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(other, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			if err := os.Remove(other); err != nil {
				t.Fatal(err)
			}
			return func(t *testing.T) {
				if _, err := f.WriteString("written after the check\n"); err != nil {
					t.Fatal(err)
				}
				f.Close()
			}
		}},
		"mapped before the check, written after": {func(t *testing.T, o, _ string) func(*testing.T) {
			f, err := os.OpenFile(o, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := f.Sync(); err != nil { // written back, as after an idle day
				t.Fatal(err)
			}
			m, err := syscall.Mmap(int(f.Fd()), 0, 4, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { syscall.Munmap(m) })
			return func(*testing.T) { copy(m, "WORK") }
		}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tree := t.TempDir()
			outside := t.TempDir()
			for _, rel := range []string{"target/debug/o", "target/debug/p"} {
				writeLayout(t, tree, rel)
			}
			o := filepath.Join(tree, "target", "debug", "o")
			after := c.before(t, o, outside)
			w := checkWalk(t, tree)
			s := mustSnapshot(t, w, "target", machine.BuildCargoTarget)
			time.Sleep(5 * time.Millisecond) // a change time later than the check's
			after(t)
			d := discardSnapshot(openTree(t, tree), s)
			if _, err := os.Lstat(o); err != nil {
				t.Errorf("target/debug/o, written after the check, is gone: %v", err)
			}
			if !slices.Equal(d.kept, []string{"target/debug/o"}) || d.files != 1 {
				t.Errorf("discarded %+v; want target/debug/o kept and p deleted", d)
			}
		})
	}
}

// appendTo appends a line to the file p.
func appendTo(t *testing.T, p string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("written after the check\n"); err != nil {
		t.Fatal(err)
	}
}
