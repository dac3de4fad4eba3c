//go:build unix

package sweep

import (
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
)

// TestWalkedBuildAgreesWithDiskOnAFileCandidate: a disposable file named
// HEAD is a git directory's HEAD when objects/ and refs/ stand beside it,
// which observe.WalkBuild finds on disk. The walk's record spells the
// root's entries without "./", and holds no directory that holds a
// tracked path: the walked source asks the disk too, and gives the same
// facts and the same classification, at the root and beside tracked
// objects/ and refs/.
func TestWalkedBuildAgreesWithDiskOnAFileCandidate(t *testing.T) {
	t.Parallel()
	disposable, err := machine.ParsePatterns([]string{"HEAD"})
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		layout  []string
		tracked []string
		cand    string
	}{
		"HEAD at the root beside objects/ and refs/": {
			layout: []string{"HEAD", "objects/", "refs/"}, tracked: []string{"Cargo.toml"}, cand: "HEAD"},
		"HEAD beside objects/ and refs/ that hold tracked paths": {
			layout: []string{"x/HEAD"}, tracked: []string{"Cargo.toml", "x/objects/keep", "x/refs/heads/keep"}, cand: "x/HEAD"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for _, p := range c.tracked {
				writeLayout(t, dir, p)
			}
			for _, e := range c.layout {
				writeLayout(t, dir, e)
			}
			set := machine.TrackedPaths(c.tracked)
			w := checkWalkTracked(t, dir, &set)
			want := observe.BuildShape(dir, c.cand)
			got := want
			observe.WalkBuild(dir, &want)
			(&walkedBuild{dir: dir, w: &w, tracked: set}).Walk(&got)
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("%q: walked facts (-disk +walk):\n%s", c.cand, d)
			}
			if k := machine.ClassifyBuildOutput(got, set, disposable); k != machine.ClassifyBuildOutput(want, set, disposable) {
				t.Errorf("%q: the walk classifies it %q, the disk %q", c.cand, k, machine.ClassifyBuildOutput(want, set, disposable))
			}
		})
	}
}

// TestUnchangedBelowDoesNotHangOnAFIFO: directories of a build directory
// replaced by FIFOs after the check. The re-check lists the snapshot's
// directories in map order, so it may open a FIFO before the parent's
// listing shows the type changed: it opens directories only, without
// waiting, and answers "changed" at once, every time.
func TestUnchangedBelowDoesNotHangOnAFIFO(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("dirTypes reads nothing elsewhere")
	}
	t.Parallel()
	tree := t.TempDir()
	layout := []string{"target/.rustc_info.json"}
	dirs := []string{"target/d0", "target/d1", "target/d2", "target/d3", "target/d4", "target/d5", "target/d6", "target/d7"}
	for _, d := range dirs {
		layout = append(layout, d+"/f")
	}
	for _, e := range layout {
		writeLayout(t, tree, e)
	}
	w := checkWalk(t, tree)
	s := mustSnapshot(t, w, "target", machine.BuildCargoTarget)
	for _, d := range dirs {
		p := filepath.Join(tree, d)
		if err := os.RemoveAll(p); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root := openTree(t, tree)
	for attempt := range 5 {
		done := make(chan bool, 1)
		go func() { done <- unchangedBelow(root, s) }()
		select {
		case got := <-done:
			if got {
				t.Fatalf("attempt %d: unchangedBelow = true with directories made FIFOs", attempt)
			}
		case <-time.After(3 * time.Second):
			// Release the blocked open so the goroutine ends.
			for _, d := range dirs {
				if f, err := os.OpenFile(filepath.Join(tree, d), os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					defer f.Close()
				}
			}
			<-done
			t.Fatalf("attempt %d: unchangedBelow blocked opening a FIFO that replaced a snapshot directory", attempt)
		}
	}
}

// TestDiscardDoesNotFollowALinkToTheMovedDirectory: between the re-check
// and the deletion a person moves target/pkg into their own work/ (a
// rename keeps every inode, size, mtime and ctime below it), makes it a
// repository, and leaves a symlink target/pkg -> ../work/pkg. The deletion
// opens each directory from its parent without following a symlink, so
// nothing under work/pkg goes.
func TestDiscardDoesNotFollowALinkToTheMovedDirectory(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		repo     bool
		to, link string
	}{
		{"made a repository", true, "work/pkg", "../work/pkg"},
		{"only moved", false, "work/pkg", "../work/pkg"},
		// A link that stays in the build directory: os.Root would follow it.
		{"moved beside it", false, "target/pkg2", "pkg2"},
	} {
		repo := c.repo
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tree := t.TempDir()
			for _, e := range []string{"target/.rustc_info.json", "target/pkg/lib.rs", "target/pkg/notes.md", "work/"} {
				writeLayout(t, tree, e)
			}
			root := openTree(t, tree)
			w := checkWalk(t, tree)
			s := mustSnapshot(t, w, "target", machine.BuildCargoTarget)
			// After the re-check:
			mustRename(t, filepath.Join(tree, "target/pkg"), filepath.Join(tree, c.to))
			if repo {
				mustMkdir(t, filepath.Join(tree, c.to, ".git"))
			}
			mustSymlink(t, c.link, filepath.Join(tree, "target/pkg"))

			discardSnapshot(root, s)
			for _, keep := range []string{c.to + "/lib.rs", c.to + "/notes.md"} {
				if _, err := os.Lstat(filepath.Join(tree, keep)); err != nil {
					t.Errorf("%s, moved out of the build directory after the re-check, is gone: %v", keep, err)
				}
			}
		})
	}
}

// TestUnchangedBelowOnAHugeDirectory: a directory whose entries take many
// getdents calls (4000 names of 200 bytes, not UTF-8) is read whole:
// unchanged it is unchanged, and one name renamed to another of the same
// length at the end of it is seen.
func TestUnchangedBelowOnAHugeDirectory(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("dirTypes reads nothing elsewhere")
	}
	t.Parallel()
	tree := t.TempDir()
	writeLayout(t, tree, "target/.rustc_info.json")
	name := func(i int) string {
		b := make([]byte, 200)
		for j := range b {
			b[j] = 'a' + byte(j%26)
		}
		b[0], b[1] = 0xff, 0xfe
		copy(b[2:], []byte{byte('0' + i/1000%10), byte('0' + i/100%10), byte('0' + i/10%10), byte('0' + i%10)})
		return string(b)
	}
	for i := range 4000 {
		if i == 0 {
			mustMkdir(t, filepath.Join(tree, "target", "big"))
		}
		mustWrite(t, filepath.Join(tree, "target", "big", name(i)), "")
	}
	w := checkWalk(t, tree)
	s := mustSnapshot(t, w, "target", machine.BuildCargoTarget)
	root := openTree(t, tree)
	if !unchangedBelow(root, s) {
		t.Fatal("an unchanged huge directory is not unchanged")
	}
	last := []byte(name(3999))
	last[199] = 'Z'
	mustRename(t, filepath.Join(tree, "target", "big", name(3999)), filepath.Join(tree, "target", "big", string(last)))
	if unchangedBelow(root, s) {
		t.Error("a name renamed in a huge directory is not seen")
	}
}

// TestRecheckAndDeletionLookAtOneTree: the tree's own root is replaced
// between the snapshot (os.OpenRoot of rec.Path, held as p.root) and the
// re-check: the person moves the tree aside (t -> t-old), makes
// t-old/target/pkg a repository, and a new tree with a target of its own
// stands at t. The re-check reads by path and the deletion goes through
// the handle: the re-check must refuse a tree its path no longer leads to,
// and the deletion must keep the unchanged files beside the person's .git
// in the tree it holds.
func TestRecheckAndDeletionLookAtOneTree(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	tree := filepath.Join(base, "t")
	for _, e := range []string{"Cargo.toml", "target/.rustc_info.json", "target/pkg/lib.rs"} {
		writeLayout(t, tree, e)
	}
	tracked := machine.TrackedPaths([]string{"Cargo.toml"})
	w := checkWalkTracked(t, tree, &tracked)
	d := machine.DiscardedDir{Path: "target", Kind: machine.BuildCargoTarget}
	s := mustSnapshot(t, w, "target", d.Kind)
	root := openTree(t, tree)
	mustRename(t, tree, filepath.Join(base, "t-old"))
	mustMkdir(t, filepath.Join(base, "t-old/target/pkg/.git"))
	for _, e := range []string{"Cargo.toml", "target/.rustc_info.json"} {
		writeLayout(t, tree, e)
	}
	if got := classifyAgain(root, tree, d, s, &w, tracked, machine.Patterns{}); got != machine.BuildNone {
		t.Errorf("with another tree at its path, the re-check of the tree held open classifies its target %q, want nothing", got)
	}
	// And were it deleted all the same (the tree moved after the
	// re-check), the deletion keeps what is beside the new .git.
	discardSnapshot(root, s)
	if _, err := os.Lstat(filepath.Join(base, "t-old/target/pkg/lib.rs")); err != nil {
		t.Errorf("lib.rs, beside a .git made after the check in the tree moved aside, is gone: %v", err)
	}
}
