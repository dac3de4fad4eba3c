//go:build unix

package sweep

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
)

// TestWalkTreeAgreesWithWalkDir: sweep's walk, which stats each entry by
// its name in its opened directory, records what a walk by whole paths
// (filepath.WalkDir, lstat of each path: walkByPath) records, entry for
// entry and in the same order: identities, link targets, the newest
// change, the untracked files and bare directories, with the index read
// and without. The fixed layouts and random trees of
// TestWalkedBuildAgreesWithDisk are used, and a tree that is not there.
func TestWalkTreeAgreesWithWalkDir(t *testing.T) {
	t.Parallel()
	tracked := machine.NewTrackedSet([]machine.TrackedEntry{{Path: "Cargo.toml", Mode: "100644"}, {Path: "src/main.rs", Mode: "100644"}, {Path: "src/gen/keep.rs", Mode: "100644"}})
	layouts := map[string][]string{
		"plain target":  {"target/.rustc_info.json", "target/debug/deps/a.rlib", "target/debug/build/x/out"},
		"links":         {"target/in -> debug/a", "target/debug/a", "target/out -> ../../elsewhere", "target/abs -> /etc/passwd", "lnk -> target"},
		"a FIFO":        {"target/a", "target/b|", "c|"},
		"names":         {"target/a/x", "target/a-b", "target/a.b", "target/a0/y", "target-b/z", "target/\xff\xfe/a", "caf\xe9"},
		"empty dirs":    {"target/", "target/e/", "target/e/f/", "node_modules/"},
		"tracked only":  {},
		"deep":          {"a/b/c/d/e/f/g/h/i/j/k"},
		"beside tracks": {"src/gen/out.o", "src/gen/deep/o.o", "src/other/x"},
	}
	seeds, err := fixtures.Size(walkedBuildSeedsEnv, 20, 300)
	if err != nil {
		t.Fatal(err)
	}
	for seed := range seeds {
		layouts[fmt.Sprintf("seed %d", seed)] = randomLayout(uint64(seed))
	}
	for name, layout := range layouts {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for _, e := range append([]string{"Cargo.toml", "src/main.rs", "src/gen/keep.rs"}, layout...) {
				writeLayout(t, dir, e)
			}
			// A change time older than the others, so that the newest
			// entry is one the layout made, not the tree's own directory.
			old := time.Now().Add(-time.Hour)
			if err := os.Chtimes(dir, old, old); err != nil {
				t.Fatal(err)
			}
			for _, set := range []*machine.TrackedSet{&tracked, nil} {
				if d := cmp.Diff(comparableWalk(walkByPath(dir, set)), comparableWalk(walkTree(dir, set))); d != "" {
					t.Errorf("index read %v: walk (-by path +by name):\n%s", set != nil, d)
				}
			}
		})
	}
	t.Run("no tree", func(t *testing.T) {
		t.Parallel()
		dir := filepath.Join(t.TempDir(), "gone")
		want, got := walkByPath(dir, &tracked), walkTree(dir, &tracked)
		if got.err == "" || got.err != want.err {
			t.Errorf("walk of a missing tree: err %q, want %q", got.err, want.err)
		}
	})
}

// walkByPath is the walk walkTree makes, made by whole paths as
// filepath.WalkDir makes it: the reference walkTree is compared with.
func walkByPath(dir string, tracked *machine.TrackedSet) treeWalk {
	var w treeWalk
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		w.visit(filepath.ToSlash(rel), fi, func() (string, error) { return os.Readlink(p) }, tracked)
		return nil
	})
	if err != nil {
		w.err = err.Error()
	}
	return w
}

// comparableWalk is w in values cmp can compare: every field, errors as
// their text.
func comparableWalk(w treeWalk) map[string]any {
	var ents []string
	for _, e := range w.ents {
		s := fmt.Sprintf("%q %v %d %d %v %v", e.rel, e.id.mode, e.id.size, e.id.ino, e.id.mtime.UnixNano(), e.id.ctime.UnixNano())
		if e.link != nil {
			s += fmt.Sprintf(" -> %q %v", e.link.target, e.link.err)
		}
		ents = append(ents, s)
	}
	return map[string]any{
		"ents": ents, "newest": w.newest.UnixNano(), "newestPath": w.newestPath, "err": w.err,
		"files": w.untracked.Files, "bare": w.untracked.Bare, "nestedGit": w.untracked.NestedGit,
	}
}
