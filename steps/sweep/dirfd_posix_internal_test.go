//go:build linux || darwin

package sweep

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestDirFDAgreesWithLstat: the identity the deletion reads by name in an
// open directory is the one the walk read with os.Root's lstat, for every
// kind of entry and mode bit (a file, an executable, setuid, setgid and
// sticky bits, a directory, a symlink, a FIFO, a character device), so an
// unchanged entry is the same and goes; and unlink takes a file, and
// refuses a directory.
func TestDirFDAgreesWithLstat(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, e := range []struct {
		name string
		mode os.FileMode
	}{{"file", 0o644}, {"exec", 0o755}, {"setuid", 0o755 | os.ModeSetuid}, {"setgid", 0o755 | os.ModeSetgid}} {
		p := filepath.Join(dir, e.name)
		if err := os.WriteFile(p, []byte(e.name), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, e.mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sticky"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "sticky"), 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("file", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ dir, name string }{
		{dir, "file"}, {dir, "exec"}, {dir, "setuid"}, {dir, "setgid"}, {dir, "sticky"}, {dir, "link"}, {dir, "fifo"}, {"/dev", "null"},
	} {
		root, err := os.OpenRoot(c.dir)
		if err != nil {
			t.Fatal(err)
		}
		fd, err := openDirFD(root)
		if err != nil {
			t.Fatal(err)
		}
		fi, err := root.Lstat(c.name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := fd.lstat(c.name)
		if err != nil {
			t.Fatal(err)
		}
		if want := identityOf(fi); got != want {
			t.Errorf("%s: by name in its directory %+v; by os.Root's lstat %+v", c.name, got, want)
		}
		fd.close()
		root.Close()
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	fd, err := openDirFD(root)
	if err != nil {
		t.Fatal(err)
	}
	defer fd.close()
	if err := fd.unlink("file"); err != nil {
		t.Errorf("unlink of a file: %v", err)
	}
	if err := fd.unlink("sticky"); err == nil {
		t.Errorf("unlink removed a directory")
	}
	if _, err := fd.lstat("file"); !os.IsNotExist(err) {
		t.Errorf("the unlinked file: %v", err)
	}
}
