//go:build unix

package sweep

import (
	"github.com/custody-sh/custody/machine"
	"os"
	"path/filepath"
	"testing"
)

// TestDiscardLeavesAFileWhereAnEmptyDirectoryWas: an empty directory the
// check walked (target/debug/incremental, say) is removed, and a file
// written at its path after the check is left: an entry goes only while
// lstat shows the identity the walk recorded (decision 0265), a directory
// included. The same for a symlink put in its place.
func TestDiscardLeavesAFileWhereAnEmptyDirectoryWas(t *testing.T) {
	tree := t.TempDir()
	for _, d := range []string{"target/debug/incremental", "target/debug/examples"} {
		if err := os.MkdirAll(filepath.Join(tree, filepath.FromSlash(d)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(tree, "target", ".rustc_info.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	root := openTree(t, tree)
	w := checkWalk(t, tree)
	snap := mustSnapshot(t, w, "target", machine.BuildCargoTarget)
	// After the check: the empty directories are replaced by a person's
	// file and a symlink.
	file := filepath.Join(tree, "target", "debug", "incremental")
	link := filepath.Join(tree, "target", "debug", "examples")
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("written after the check\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../notes", link); err != nil {
		t.Fatal(err)
	}
	d := discardSnapshot(root, snap)
	for _, p := range []string{file, link} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s, put there after the check, was deleted (%v); the discard kept %v", p, err, d.kept)
		}
	}
}
