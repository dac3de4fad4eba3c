//go:build unix

package sweep

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/custody-sh/custody/machine"
)

// TestUnchangedBelow: the re-check takes the check's walk for what lies
// below a build directory only while its names, their types and its
// links' targets are as the walk found them. A rewritten file (same name,
// same type) leaves it so; anything else that changed sends the re-check
// back to the disk.
func TestUnchangedBelow(t *testing.T) {
	t.Parallel()
	layout := []string{"target/.rustc_info.json", "target/a", "target/d/b", "target/link -> d/b", "target/e/"}
	for _, c := range []struct {
		name   string
		change func(t *testing.T, tree string)
		want   bool
	}{
		{"untouched", func(*testing.T, string) {}, true},
		{"a file rewritten", func(t *testing.T, tree string) {
			mustWrite(t, filepath.Join(tree, "target/a"), "longer content than before\n")
		}, true},
		{"a file added", func(t *testing.T, tree string) { mustWrite(t, filepath.Join(tree, "target/d/new"), "x") }, false},
		{"a .git added", func(t *testing.T, tree string) { mustMkdir(t, filepath.Join(tree, "target/e/.git")) }, false},
		{"a file removed", func(t *testing.T, tree string) { mustRemove(t, filepath.Join(tree, "target/a")) }, false},
		{"a file made a directory", func(t *testing.T, tree string) {
			mustRemove(t, filepath.Join(tree, "target/a"))
			mustMkdir(t, filepath.Join(tree, "target/a"))
		}, false},
		{"a link retargeted", func(t *testing.T, tree string) {
			mustRemove(t, filepath.Join(tree, "target/link"))
			mustSymlink(t, "../../outside", filepath.Join(tree, "target/link"))
		}, false},
		{"a directory swapped for a link to its copy", func(t *testing.T, tree string) {
			mustRename(t, filepath.Join(tree, "target/d"), filepath.Join(tree, "target/d2"))
			mustSymlink(t, "d2", filepath.Join(tree, "target/d"))
		}, false},
		{"the build directory swapped for a link to its copy", func(t *testing.T, tree string) {
			mustRename(t, filepath.Join(tree, "target"), filepath.Join(tree, "copy"))
			mustSymlink(t, "copy", filepath.Join(tree, "target"))
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tree := t.TempDir()
			for _, e := range layout {
				writeLayout(t, tree, e)
			}
			w := checkWalk(t, tree)
			s := mustSnapshot(t, w, "target", machine.BuildCargoTarget)
			c.change(t, tree)
			// Where a directory's entries come without their types
			// (dirtypes_other.go), nothing is taken as unchanged.
			want := c.want && runtime.GOOS == "linux"
			if got := unchangedBelow(openTree(t, tree), s); got != want {
				t.Errorf("unchangedBelow = %v, want %v", got, want)
			}
		})
	}
}

// TestClassifyAgainSeesAGitDirectoryMadeByATypeChange: no name is added,
// but a file of the build directory becomes a directory, and with HEAD
// and refs/ beside it the place is now a git directory. The re-check,
// sent back to the disk, no longer recognises the build output; with the
// tree as the walk found it, it still does.
func TestClassifyAgainSeesAGitDirectoryMadeByATypeChange(t *testing.T) {
	t.Parallel()
	tree := t.TempDir()
	for _, e := range []string{"Cargo.toml", "target/.rustc_info.json", "target/debug/a.rlib", "target/pkg/HEAD", "target/pkg/objects", "target/pkg/refs/"} {
		writeLayout(t, tree, e)
	}
	tracked := machine.NewTrackedSet([]machine.TrackedEntry{{Path: "Cargo.toml", Mode: "100644"}})
	w := checkWalkTracked(t, tree, &tracked)
	d := machine.DiscardedDir{Path: "target", Kind: machine.BuildCargoTarget}
	s := mustSnapshot(t, w, "target", d.Kind)
	root := openTree(t, tree)
	if got := classifyAgain(root, tree, d, s, &w, tracked, machine.Patterns{}); got != machine.BuildCargoTarget {
		t.Fatalf("unchanged, classifyAgain = %q, want %q", got, machine.BuildCargoTarget)
	}
	mustRemove(t, filepath.Join(tree, "target/pkg/objects"))
	mustMkdir(t, filepath.Join(tree, "target/pkg/objects"))
	if got := classifyAgain(root, tree, d, s, &w, tracked, machine.Patterns{}); got == machine.BuildCargoTarget {
		t.Errorf("with a git directory made below it, classifyAgain = %q: the re-check took the old walk", got)
	}
}

func mustWrite(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustMkdir(t *testing.T, p string) {
	t.Helper()
	if err := os.Mkdir(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

func mustRemove(t *testing.T, p string) {
	t.Helper()
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
}

func mustRename(t *testing.T, from, to string) {
	t.Helper()
	if err := os.Rename(from, to); err != nil {
		t.Fatal(err)
	}
}

func mustSymlink(t *testing.T, target, p string) {
	t.Helper()
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}
