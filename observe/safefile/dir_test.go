package safefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestDirBelowRefusesLinks: a symlinked or non-directory component below
// the root is refused and nothing is made through it; real directories
// are made and accepted.
func TestDirBelowRefusesLinks(t *testing.T) {
	t.Parallel()
	root, elsewhere := t.TempDir(), t.TempDir()
	if err := DirBelow(root, filepath.Join(root, "a", "b"), true, 0o755); err != nil {
		t.Fatalf("real directories: %v", err)
	}
	if fi, err := os.Lstat(filepath.Join(root, "a", "b")); err != nil || !fi.IsDir() {
		t.Fatalf("a/b was not made: %v", err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"link", "link/x", "file/x"} {
		err := DirBelow(root, filepath.Join(root, dir), true, 0o755)
		if !errors.Is(err, ErrNotDirectory) {
			t.Errorf("DirBelow(%s) = %v, want ErrNotDirectory", dir, err)
		}
	}
	if ents, _ := os.ReadDir(elsewhere); len(ents) != 0 {
		t.Errorf("something was made through the link: %v", ents)
	}
	if err := DirBelow(root, filepath.Join(root, "missing"), false, 0o755); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing directory without create = %v, want ErrNotExist", err)
	}
	if err := DirBelow(root, filepath.Dir(root), true, 0o755); !errors.Is(err, ErrNotDirectory) {
		t.Errorf("a directory above the root = %v, want ErrNotDirectory", err)
	}
}
