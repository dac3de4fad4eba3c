//go:build unix

package steps

import (
	"errors"
	"io/fs"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// entry is what a test knows about one directory entry: enough to tell that
// nothing replaced, re-pointed or rewrote it.
type entry struct {
	Mode  fs.FileMode
	Ino   uint64
	Link  string // a symlink's target
	Bytes string // a regular file's content
}

// snapshot lstats every entry of dir (and dir itself as "."), or only the
// names given, following no link.
func snapshot(t *testing.T, dir string, only ...string) map[string]entry {
	t.Helper()
	out := map[string]entry{}
	names := only
	if len(names) == 0 {
		es, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		names = append([]string{"."}, dirNames(es)...)
	}
	for _, n := range names {
		p := filepath.Join(dir, n)
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		e := entry{Mode: fi.Mode(), Ino: fi.Sys().(*syscall.Stat_t).Ino}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			e.Link, _ = os.Readlink(p)
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			e.Bytes = string(b)
		}
		out[n] = e
	}
	return out
}

func dirNames(es []os.DirEntry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// TestDurableRefusesNonRegular checks that every kind of existing target
// that is not a regular file is refused by both forms, with an error that
// wraps ErrNotRegularFile and names the path and its kind, and that nothing
// in its directory changed: no byte, inode or link target, and no temporary
// file left behind.
func TestDurableRefusesNonRegular(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		kind string // in the message
		make func(t *testing.T, dir string) string
	}{
		{"fifo", "a FIFO", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "out")
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			return p
		}},
		{"directory", "a directory", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "out")
			if err := os.Mkdir(p, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(p, "inside"), []byte("kept\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			return p
		}},
		{"symlink-to-regular", "a symlink (to real.json)", func(t *testing.T, dir string) string {
			if err := os.WriteFile(filepath.Join(dir, "real.json"), []byte("old plan\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, "out")
			if err := os.Symlink("real.json", p); err != nil {
				t.Fatal(err)
			}
			return p
		}},
		{"dangling-symlink", "a symlink (to missing.json)", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "out")
			if err := os.Symlink("missing.json", p); err != nil {
				t.Fatal(err)
			}
			return p
		}},
		{"socket", "a socket", func(t *testing.T, _ string) string {
			// A short directory: a socket path must fit in sun_path.
			dir, err := os.MkdirTemp("", "cs")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(dir) })
			p := filepath.Join(dir, "out")
			l, err := net.Listen("unix", p)
			if err != nil {
				t.Skipf("unix socket: %v", err)
			}
			l.(*net.UnixListener).SetUnlinkOnClose(false)
			t.Cleanup(func() { l.Close() })
			return p
		}},
		{"dev-null", "a character device", func(t *testing.T, dir string) string {
			// The machine's /dev/null, only where custody could not replace
			// it even if the refusal were broken. As root (where /dev is
			// writable) a broken check would replace the real one, so the
			// test makes its own null device instead.
			if syscall.Access(filepath.Dir(os.DevNull), 2 /* W_OK */) != nil {
				return os.DevNull
			}
			p := filepath.Join(dir, "null")
			if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
				t.Skipf("%s is writable and mknod failed: %v", filepath.Dir(os.DevNull), err)
			}
			return p
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := tt.make(t, t.TempDir())
			dir := filepath.Dir(path)
			look := func() map[string]entry { return snapshot(t, dir) }
			if path == os.DevNull {
				// /dev changes under us: watch the device and the names a
				// temporary file for it would take.
				look = func() map[string]entry {
					m := snapshot(t, dir, filepath.Base(path))
					tmps, _ := filepath.Glob(filepath.Join(dir, "."+filepath.Base(path)+".custody-*"))
					m["temporary files: "+strings.Join(tmps, ",")] = entry{}
					return m
				}
			}
			before := look()
			check := func(form string, err error) {
				t.Helper()
				if !errors.Is(err, ErrNotRegularFile) {
					t.Fatalf("%s(%s): got %v, want an error wrapping ErrNotRegularFile", form, path, err)
				}
				for _, want := range []string{path, tt.kind, "nothing was written"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("%s: %q does not say %q", form, err, want)
					}
				}
				if diff := cmp.Diff(before, look()); diff != "" {
					t.Errorf("%s changed %s (-before +after):\n%s", form, dir, diff)
				}
			}
			check("WriteFile", WriteFile(path, []byte("new\n"), 0o600))
			f, err := CreateFile(path, 0o600)
			if f != nil {
				f.Abort()
				t.Fatal("CreateFile returned a file for a refused target")
			}
			check("CreateFile", err)
		})
	}
}

// TestWriteFileReplaces checks a successful write: a missing target is
// created, an existing regular file is replaced by a new inode (an open
// reader of the old one keeps reading the old bytes, as a rename does), the
// mode is exactly the one asked for, and no temporary file is left.
func TestWriteFileReplaces(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "plan.json")
	if err := WriteFile(path, []byte("first\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	first := snapshot(t, dir)
	if got := first["plan.json"]; got.Bytes != "first\n" || got.Mode != 0o640 {
		t.Fatalf("created %+v, want first\\n with mode 0640", got)
	}
	old, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if err := WriteFile(path, []byte("second\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	after := snapshot(t, dir)
	if names := slices.Sorted(maps.Keys(after)); !slices.Equal(names, []string{".", "plan.json"}) {
		t.Errorf("directory holds %v, want only plan.json", names)
	}
	got := after["plan.json"]
	if got.Bytes != "second\n" || got.Mode != 0o600 {
		t.Errorf("replaced %+v, want second\\n with mode 0600", got)
	}
	if got.Ino == first["plan.json"].Ino {
		t.Errorf("the target kept its inode %d: it was rewritten in place, not replaced", got.Ino)
	}
	b := make([]byte, 64)
	n, _ := old.Read(b)
	if string(b[:n]) != "first\n" {
		t.Errorf("a reader of the old file reads %q, want the old bytes", b[:n])
	}
}

// TestCreateFileStreams checks the streaming form: until Commit the target
// keeps its old bytes and inode, after Commit it holds everything written.
func TestCreateFileStreams(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "j.jsonl")
	if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	f, err := CreateFile(path, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	for _, line := range []string{"one\n", "two\n"} {
		if _, err := f.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	if got := snapshot(t, dir)["j.jsonl"]; got != before["j.jsonl"] {
		t.Errorf("before Commit the target is %+v, want it untouched %+v", got, before["j.jsonl"])
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	after := snapshot(t, dir)
	if got := after["j.jsonl"].Bytes; got != "one\ntwo\n" {
		t.Errorf("after Commit the target holds %q", got)
	}
	if len(after) != 2 {
		t.Errorf("directory holds %v, want only j.jsonl", slices.Sorted(maps.Keys(after)))
	}
	if err := f.Abort(); err != nil {
		t.Errorf("Abort after Commit: %v, want nil", err)
	}
	if got := snapshot(t, dir)["j.jsonl"].Bytes; got != "one\ntwo\n" {
		t.Errorf("Abort after Commit changed the target to %q", got)
	}
}

// TestCreateFileAbort checks that an export that fails midway and aborts
// leaves the old target exactly as it was and no temporary file behind.
func TestCreateFileAbort(t *testing.T) {
	t.Parallel()
	for _, existed := range []bool{true, false} {
		dir := t.TempDir()
		path := filepath.Join(dir, "j.jsonl")
		if existed {
			if err := os.WriteFile(path, []byte("old export\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		before := snapshot(t, dir)
		f, err := CreateFile(path, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte("half an ent")); err != nil {
			t.Fatal(err)
		}
		if err := f.Abort(); err != nil {
			t.Fatal(err)
		}
		if err := f.Abort(); err != nil {
			t.Errorf("second Abort: %v, want nil", err)
		}
		if err := f.Commit(); err == nil {
			t.Error("Commit after Abort succeeded")
		}
		if diff := cmp.Diff(before, snapshot(t, dir)); diff != "" {
			t.Errorf("existed=%v: Abort changed the directory (-before +after):\n%s", existed, diff)
		}
	}
}

// TestCommitRechecksTarget checks that a target replaced by a directory or
// a symlink while the content was being written is still refused, at
// Commit, and that the temporary file is removed.
func TestCommitRechecksTarget(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"directory", "symlink"} {
		dir := t.TempDir()
		path := filepath.Join(dir, "out")
		f, err := CreateFile(path, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte("plan\n")); err != nil {
			t.Fatal(err)
		}
		if kind == "directory" {
			err = os.Mkdir(path, 0o755)
		} else {
			err = os.Symlink("elsewhere", path)
		}
		if err != nil {
			t.Fatal(err)
		}
		before := snapshot(t, dir)
		if err := f.Commit(); !errors.Is(err, ErrNotRegularFile) {
			t.Fatalf("%s: Commit = %v, want ErrNotRegularFile", kind, err)
		}
		after := snapshot(t, dir)
		if names := slices.Sorted(maps.Keys(after)); !slices.Equal(names, []string{".", "out"}) {
			t.Errorf("%s: directory holds %v after a refused Commit, want only out", kind, names)
		}
		if after["out"].Mode.Type() != before["out"].Mode.Type() || after["out"].Ino != before["out"].Ino {
			t.Errorf("%s: Commit replaced the target: %+v, was %+v", kind, after["out"], before["out"])
		}
	}
}

// TestCreateFileMissingDirectory checks that a target in a directory that
// does not exist is an ordinary error naming the path, not a refusal.
func TestCreateFileMissingDirectory(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "no", "such", "out")
	err := WriteFile(path, []byte("x"), 0o600)
	if err == nil || errors.Is(err, ErrNotRegularFile) || !strings.Contains(err.Error(), path) {
		t.Fatalf("WriteFile into a missing directory: %v", err)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%v does not wrap fs.ErrNotExist", err)
	}
}
