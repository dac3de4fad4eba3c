//go:build unix

package hostio

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/custody-sh/custody/fixtures/unprivileged"
	"github.com/custody-sh/custody/machine"
)

func inode(t *testing.T, path string, follow bool) (uint64, uint64) {
	t.Helper()
	var st syscall.Stat_t
	stat := syscall.Lstat
	if follow {
		stat = syscall.Stat
	}
	if err := stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return uint64(st.Dev), st.Ino
}

func TestLstat(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(dir, "dangling")
	if err := os.Symlink(filepath.Join(dir, "nowhere"), dangling); err != nil {
		t.Fatal(err)
	}

	present := func(path string, isDir, isSymlink bool) PathInfo {
		dev, ino := inode(t, path, false)
		return PathInfo{State: machine.PathPresent, IsDir: isDir, IsSymlink: isSymlink, Dev: dev, Ino: ino}
	}
	absent := PathInfo{State: machine.PathAbsent}
	tests := []struct {
		name string
		path string
		want PathInfo
	}{
		{"directory", dir, present(dir, true, false)},
		{"regular file", file, present(file, false, false)},
		{"symlink to a directory is not followed", link, present(link, false, true)},
		{"dangling symlink", dangling, present(dangling, false, true)},
		{"missing", filepath.Join(dir, "missing"), absent},
		{"under a missing directory", filepath.Join(dir, "missing", "x"), absent},
		{"under a regular file (ENOTDIR)", filepath.Join(file, "x"), absent},
		{"under a dangling symlink", filepath.Join(dangling, "x"), absent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Lstat(tt.path)
			if got != tt.want {
				t.Errorf("Lstat(%s) = %+v, want %+v", tt.path, got, tt.want)
			}
			if got.State == machine.PathPresent && got.Ino == 0 {
				t.Errorf("Lstat(%s) has no inode", tt.path)
			}
		})
	}
	if _, targetIno := inode(t, link, true); Lstat(link).Ino == targetIno {
		t.Errorf("Lstat of a symlink reports its target's inode")
	}
}

// TestLstatUnknown: an error other than absence (EACCES under a directory
// without search permission) is unknown, never absent.
func TestLstatUnknown(t *testing.T) {
	t.Parallel()
	if unprivileged.Run(t) {
		return // root is not refused by permission bits: run as nobody
	}
	locked := filepath.Join(t.TempDir(), "locked")
	if err := os.Mkdir(locked, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(locked, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(locked, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(locked, 0o755) })

	for _, p := range []string{filepath.Join(locked, "x"), filepath.Join(locked, "missing")} {
		got := Lstat(p)
		if got.State != machine.PathUnknown || !strings.Contains(got.Err, "permission denied") {
			t.Errorf("Lstat(%s) = %+v, want unknown with the permission error", p, got)
		}
	}
	if got := Lstat(locked); got.State != machine.PathPresent || !got.IsDir {
		t.Errorf("Lstat of the locked directory itself = %+v, want present", got)
	}
}
