//go:build unix

package steps

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/custody-sh/custody/fixtures/unprivileged"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
)

// TestRemovalTargetRefusal checks the removal primitive's last guard before
// git is asked to remove anything: a filesystem root, the home directory, a
// path containing the main checkout or the common git dir, a symlink, a
// file, an unreadable directory and a directory replaced since the intent
// are all refused with unsafe-target; the intended directory passes.
func TestRemovalTargetRefusal(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	main := filepath.Join(root, "repo")
	tree := filepath.Join(main, ".worktrees", "x-1a2b3c")
	other := filepath.Join(root, "other")
	for _, d := range []string{filepath.Join(main, ".git"), tree, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(root, "link")
	if err := os.Symlink(tree, link); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	e := &Env{Repo: hostio.Repo{CommonDir: filepath.Join(main, ".git"), MainCheckout: main}}
	home, _ := os.UserHomeDir()
	id := func(p string) (uint64, uint64) {
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err != nil {
			t.Fatal(err)
		}
		return uint64(st.Dev), st.Ino
	}
	treeDev, treeIno := id(tree)
	otherDev, otherIno := id(other)
	tests := []struct {
		name     string
		path     string
		dev, ino uint64 // what the intent recorded
		refused  bool
	}{
		{"the intended directory", tree, treeDev, treeIno, false},
		{"filesystem root", "/", 0, 0, true},
		{"relative path", "repo/.worktrees/x", 0, 0, true},
		{"home directory", home, 0, 0, home != ""},
		{"contains the main checkout", root, 0, 0, true},
		{"is the main checkout", main, 0, 0, true},
		{"is the common dir", filepath.Join(main, ".git"), 0, 0, true},
		{"a symlink", link, 0, 0, true},
		{"a file", file, 0, 0, true},
		{"replaced since the intent", other, treeDev, treeIno, true},
		{"another directory than recorded", tree, otherDev, otherIno, true},
	}
	for _, tt := range tests {
		if tt.path == "" {
			continue
		}
		rec := machine.Record{ID: "x-1a2b3c", Path: tt.path, Intent: &machine.Intent{Dev: tt.dev, Ino: tt.ino}}
		pi := hostio.Lstat(tt.path)
		obs := machine.WorktreeObservation{Path: tt.path, PathState: pi.State, IsDir: pi.IsDir, IsSymlink: pi.IsSymlink, Dev: pi.Dev, Ino: pi.Ino}
		r := removalTargetRefusal(e, rec, obs)
		switch {
		case tt.refused && (r == nil || r.Code != machine.CodeUnsafeTarget):
			t.Errorf("%s (%s): got %v, want an unsafe-target refusal", tt.name, tt.path, r)
		case !tt.refused && r != nil:
			t.Errorf("%s (%s): refused: %v", tt.name, tt.path, r)
		}
	}
}

// TestRemovalTargetUnreadable: a directory custody cannot list is refused,
// since what removal would delete is unknown (run as nobody when the test
// runs as root, who reads everything).
func TestRemovalTargetUnreadable(t *testing.T) {
	t.Parallel()
	if unprivileged.Run(t) {
		return // root reads every directory: run as nobody
	}
	root := t.TempDir()
	tree := filepath.Join(root, "repo", ".worktrees", "x-1a2b3c")
	if err := os.MkdirAll(tree, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tree, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(tree, 0o755) })
	pi := hostio.Lstat(tree)
	e := &Env{Repo: hostio.Repo{CommonDir: filepath.Join(root, "repo", ".git"), MainCheckout: filepath.Join(root, "repo")}}
	rec := machine.Record{ID: "x-1a2b3c", Path: tree, Intent: &machine.Intent{Dev: pi.Dev, Ino: pi.Ino}}
	obs := machine.WorktreeObservation{Path: tree, PathState: pi.State, IsDir: pi.IsDir, Dev: pi.Dev, Ino: pi.Ino}
	if r := removalTargetRefusal(e, rec, obs); r == nil || r.Code != machine.CodeUnsafeTarget {
		t.Errorf("unreadable directory: got %v, want unsafe-target", r)
	}
}
