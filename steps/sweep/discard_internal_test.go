//go:build unix

package sweep

import (
	"errors"
	"github.com/custody-sh/custody/machine"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestDiscardLeavesWhatChangedSinceTheSnapshot: what is written into a
// build directory between the check (the snapshot) and the deletion
// survives: a new file, a file appended to, a file replaced by another of
// the same size, and everything reached through a directory swapped for a
// symlink (to a directory inside the tree, or outside it); the directories
// holding them stay, and everything the snapshot saw unchanged goes.
func TestDiscardLeavesWhatChangedSinceTheSnapshot(t *testing.T) {
	tree := t.TempDir()
	outside := t.TempDir()
	write := func(dir, rel, s string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, rel := range []string{"target/.rustc_info.json", "target/a", "target/b", "target/same", "target/gone/x",
		"target/swapped/c", "target/swapped-out/d", "target/deep/er/e"} {
		write(tree, rel, "0123456789")
	}
	write(tree, "src/c", "the person's file\n")
	write(outside, "d", "outside\n")
	root := openTree(t, tree)
	w := checkWalk(t, tree)
	snap := mustSnapshot(t, w, "target", machine.BuildCargoTarget)
	if snap.bytes != 8*10 {
		t.Errorf("snapshot holds %d bytes; want 80", snap.bytes)
	}
	// After the check, before the deletion:
	time.Sleep(10 * time.Millisecond) // a change time later than the snapshot's
	write(tree, "target/new", "written after the check\n")
	write(tree, "target/deep/er/late", "also\n")
	f, err := os.OpenFile(filepath.Join(tree, "target", "a"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("more")
	f.Close()
	if err := os.Remove(filepath.Join(tree, "target", "same")); err != nil {
		t.Fatal(err)
	}
	write(tree, "target/same", "9876543210") // same size, another file
	for _, swap := range []struct{ dir, to string }{{"target/swapped", filepath.Join(tree, "src")}, {"target/swapped-out", outside}} {
		p := filepath.Join(tree, filepath.FromSlash(swap.dir))
		if err := os.RemoveAll(p); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(swap.to, p); err != nil {
			t.Fatal(err)
		}
	}
	// The person's files the symlinks now lead to have the names the
	// snapshot saw below the swapped directories.
	write(tree, "src/c", "the person's file\n")

	d := discardSnapshot(root, snap)
	for _, keep := range []string{"target/new", "target/deep/er/late", "target/a", "target/same", "src/c"} {
		if _, err := os.Stat(filepath.Join(tree, filepath.FromSlash(keep))); err != nil {
			t.Errorf("%s was written after the check and is gone: %v", keep, err)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "d")); err != nil {
		t.Errorf("the file outside the tree is gone: %v", err)
	}
	for _, gone := range []string{"target/.rustc_info.json", "target/b", "target/gone", "target/deep/er/e"} {
		if _, err := os.Lstat(filepath.Join(tree, filepath.FromSlash(gone))); !os.IsNotExist(err) {
			t.Errorf("%s was unchanged since the check and is still there (%v)", gone, err)
		}
	}
	wantKept := []string{"target/a", "target/deep/er/late", "target/same", "target/swapped-out/d", "target/swapped/c"}
	if !slices.Equal(d.kept, wantKept) {
		t.Errorf("kept %q; want %q", d.kept, wantKept)
	}
	if d.freed != 4*10 {
		t.Errorf("freed %d bytes; want 40 (.rustc_info.json, b, gone/x, deep/er/e)", d.freed)
	}
}

// TestSnapshotRefusesASymlinkedDirectory: a build directory that became a
// symlink is not walked (nothing it leads to is snapshotted, so nothing
// there is deleted).
func TestSnapshotRefusesASymlinkedDirectory(t *testing.T) {
	tree := t.TempDir()
	if err := os.MkdirAll(filepath.Join(tree, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tree, "src", "main.rs"), []byte("fn main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("src", filepath.Join(tree, "target")); err != nil {
		t.Fatal(err)
	}
	w := checkWalk(t, tree)
	if _, err := w.snapshot("target", machine.BuildCargoTarget); !errors.Is(err, errNotDir) {
		t.Fatalf("a symlinked build directory was snapshotted (%v)", err)
	}
}

// TestDiscardLeavesWhatChangedSinceTheCheck: what is written into a build
// directory after the check's walk that found the tree idle (and that
// recorded what the deletion goes by) survives the deletion, however long
// after it comes (the check and the deletion are apart by a plan, and by a
// whole chunk when one is taken again): a new file, a file appended to, a
// new directory with a file in it and a new empty directory. What the
// walk saw is what the intent counts; what was freed leaves out what
// changed; everything unchanged since the check goes.
func TestDiscardLeavesWhatChangedSinceTheCheck(t *testing.T) {
	tree := t.TempDir()
	write := func(rel, s string) {
		t.Helper()
		p := filepath.Join(tree, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, rel := range []string{"target/.rustc_info.json", "target/debug/app", "target/debug/deps/lib.rlib", "target/grown"} {
		write(rel, "0123456789")
	}
	w := checkWalk(t, tree)
	// After the check:
	time.Sleep(20 * time.Millisecond) // change times later than the check's newest
	write("target/debug/deps/late.rlib", "written after the check\n")
	write("target/incremental/s-1/work", "new\n")
	if err := os.Mkdir(filepath.Join(tree, "target", "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(tree, "target", "grown"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("more")
	f.Close()
	root := openTree(t, tree)
	snap := mustSnapshot(t, w, "target", machine.BuildCargoTarget)
	if snap.bytes != 4*10 {
		t.Errorf("snapshot counts %d bytes; want 40 (what was there at the check)", snap.bytes)
	}
	d := discardSnapshot(root, snap)
	for _, keep := range []string{"target/debug/deps/late.rlib", "target/incremental/s-1/work", "target/empty", "target/grown"} {
		if _, err := os.Stat(filepath.Join(tree, filepath.FromSlash(keep))); err != nil {
			t.Errorf("%s was written after the check and is gone: %v", keep, err)
		}
	}
	for _, gone := range []string{"target/.rustc_info.json", "target/debug/app", "target/debug/deps/lib.rlib"} {
		if _, err := os.Lstat(filepath.Join(tree, filepath.FromSlash(gone))); !os.IsNotExist(err) {
			t.Errorf("%s was unchanged since the check and is still there (%v)", gone, err)
		}
	}
	if d.freed != 3*10 {
		t.Errorf("freed %d bytes; want 30", d.freed)
	}
	for _, want := range []string{"target/debug/deps/late.rlib", "target/grown"} {
		if !slices.Contains(d.kept, want) {
			t.Errorf("kept %q; want it to name %s", d.kept, want)
		}
	}
}

// TestDiscardLeavesADirectorySwappedForASymlink: a build directory whose
// whole content went and which was replaced, after the check, by a symlink
// (to an empty directory in the tree) is not removed: the symlink is
// something written after the check, and so is what it leads to.
func TestDiscardLeavesADirectorySwappedForASymlink(t *testing.T) {
	tree := t.TempDir()
	for _, rel := range []string{"target/.rustc_info.json", "target/swap/f"} {
		p := filepath.Join(tree, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(tree, "src", "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	w := checkWalk(t, tree)
	snap := mustSnapshot(t, w, "target", machine.BuildCargoTarget)
	swap := filepath.Join(tree, "target", "swap")
	if err := os.RemoveAll(swap); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("..", "src", "empty"), swap); err != nil {
		t.Fatal(err)
	}
	root := openTree(t, tree)
	d := discardSnapshot(root, snap)
	if fi, err := os.Lstat(swap); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symlink put in place of target/swap after the check is gone or changed (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(tree, "src", "empty")); err != nil {
		t.Errorf("the directory the symlink leads to is gone: %v", err)
	}
	if !slices.Contains(d.kept, "target/swap/") {
		t.Errorf("kept %q; want it to name target/swap/", d.kept)
	}
}

// TestDiscardTakesADisposableFile: build output an approved disposable
// pattern names may be a file (debug.log): its snapshot is the file, and
// the deletion takes it while it is unchanged, and leaves it once it was
// written to after the check. Any other kind of build output that is a
// file when walked has no snapshot.
func TestDiscardTakesADisposableFile(t *testing.T) {
	tree := t.TempDir()
	for _, name := range []string{"debug.log", "grown.log"} {
		if err := os.WriteFile(filepath.Join(tree, name), []byte("log\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w := checkWalk(t, tree)
	if _, err := w.snapshot("debug.log", machine.BuildCargoTarget); !errors.Is(err, errNotDir) {
		t.Errorf("a file snapshotted as a Cargo target: %v", err)
	}
	gone, err := w.snapshot("debug.log", machine.BuildDisposable)
	if err != nil || gone.bytes != 4 {
		t.Fatalf("snapshot of a disposable file: %+v, %v", gone, err)
	}
	grown, err := w.snapshot("grown.log", machine.BuildDisposable)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	f, err := os.OpenFile(filepath.Join(tree, "grown.log"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("more\n")
	f.Close()
	root := openTree(t, tree)
	if d := discardSnapshot(root, gone); d.files != 1 || d.freed != 4 {
		t.Errorf("discarding debug.log: %+v", d)
	}
	if _, err := os.Lstat(filepath.Join(tree, "debug.log")); !os.IsNotExist(err) {
		t.Errorf("debug.log is still there (%v)", err)
	}
	if d := discardSnapshot(root, grown); d.files != 0 || !slices.Equal(d.kept, []string{"grown.log"}) {
		t.Errorf("discarding grown.log, written after the check: %+v", d)
	}
	if _, err := os.Lstat(filepath.Join(tree, "grown.log")); err != nil {
		t.Errorf("grown.log, written after the check, is gone: %v", err)
	}
}

// checkWalk walks tree as the check does, recording every entry.
func checkWalk(t *testing.T, tree string) treeWalk {
	t.Helper()
	return checkWalkTracked(t, tree, nil)
}

// checkWalkTracked walks tree as the check does against the index tracked
// (nil: none read), failing the test when the walk could not read it.
func checkWalkTracked(t *testing.T, tree string, tracked *machine.TrackedSet) treeWalk {
	t.Helper()
	w := walkTree(tree, tracked)
	if w.err != "" {
		t.Fatal(w.err)
	}
	return w
}

// mustSnapshot is w's snapshot of the build output rel of kind.
func mustSnapshot(t *testing.T, w treeWalk, rel string, kind machine.BuildKind) snapshot {
	t.Helper()
	s, err := w.snapshot(rel, kind)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// openTree opens tree as the deletion does, closed when t ends.
func openTree(t *testing.T, tree string) *os.Root {
	t.Helper()
	root, err := os.OpenRoot(tree)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return root
}
