//go:build unix

package steps

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/hostio"
)

// upRepo is a main checkout whose directory name has a space, a byte that
// is not UTF-8 and a leading dash, holding custody.toml with content (none
// when content is "").
func upRepo(t *testing.T, content string, mode os.FileMode) (hostio.Repo, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "-my \xff repo")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "custody.toml")
	if content != "" {
		if err := os.WriteFile(path, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
	}
	return hostio.Repo{MainCheckout: dir}, path
}

const upDiscern = "# db\n[worktree.db]\nclone = \"createdb @db@\" # c\ndrop = \"dropdb @db@\"\n"

// TestUpgradeConfigWrites: without write nothing changes; with it the file
// is rewritten with its mode, and a second run changes nothing.
func TestUpgradeConfigWrites(t *testing.T) {
	t.Parallel()
	repo, path := upRepo(t, upDiscern, 0o600)
	res, err := UpgradeConfig(repo, false)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != upDiscern || res.Written || !res.Changed || !res.NeedsApproval {
		t.Fatalf("without write: %+v, file %q", res, b)
	}
	res, err = UpgradeConfig(repo, true)
	if err != nil {
		t.Fatal(err)
	}
	want := "version = 1\n\n# db\n[resources.db]\ncreate = \"createdb @db@\" # c\ndestroy = \"dropdb @db@\"\n"
	b, _ := os.ReadFile(path)
	if diff := cmp.Diff(want, string(b)); diff != "" || !res.Written {
		t.Fatalf("written %+v (-want +got):\n%s", res, diff)
	}
	if fi, err := os.Lstat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode after the write: %v, %v; want 0600 as it was", fi.Mode(), err)
	}
	res, err = UpgradeConfig(repo, true)
	if err != nil || res.Changed || res.Written || res.Diff != "" {
		t.Errorf("again: %+v, %v; want nothing changed", res, err)
	}
	if res, err := UpgradeConfig(hostio.Repo{MainCheckout: t.TempDir()}, true); err != nil || res.Present || res.Changed {
		t.Errorf("no file: %+v, %v", res, err)
	}
}

// TestUpgradeConfigRefusesALink: a custody.toml that is a symlink is never
// read or written through.
func TestUpgradeConfigRefusesALink(t *testing.T) {
	t.Parallel()
	repo, path := upRepo(t, "", 0)
	target := filepath.Join(t.TempDir(), "real.toml")
	if err := os.WriteFile(target, []byte(upDiscern), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	if _, err := UpgradeConfig(repo, true); !errors.Is(err, observe.ErrConfig) {
		t.Errorf("a symlink: %v, want ErrConfig", err)
	}
	if b, _ := os.ReadFile(target); string(b) != upDiscern {
		t.Errorf("the link's target was changed: %q", b)
	}
	if fi, err := os.Lstat(path); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v, %v", fi, err)
	}
}

// TestUpgradeDiff: the diff read off the rewrite is git's unified diff:
// separate hunks for changes more than six lines apart, and a last line
// without a newline said so.
func TestUpgradeDiff(t *testing.T) {
	t.Parallel()
	var lines []string
	lines = append(lines, "version = 1", "[worktree]", "port = 3000")
	for i := range 10 {
		lines = append(lines, "# c"+string(rune('0'+i)))
	}
	lines = append(lines, "[worktree.db]", "clone = 'a'", "drop = 'b'")
	old := strings.Join(lines, "\n") + "\n"
	up, err := observe.UpgradeConfig("custody.toml", []byte(old))
	if err != nil {
		t.Fatal(err)
	}
	want := `--- a/custody.toml
+++ b/custody.toml
@@ -1,6 +1,6 @@
 version = 1
 [worktree]
-port = 3000
+port_base = 3000
 # c0
 # c1
 # c2
@@ -11,6 +11,6 @@
 # c7
 # c8
 # c9
-[worktree.db]
-clone = 'a'
-drop = 'b'
+[resources.db]
+create = 'a'
+destroy = 'b'
`
	if diff := cmp.Diff(want, upgradeDiff([]byte(old), up)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	up, err = observe.UpgradeConfig("custody.toml", []byte("# only"))
	if err != nil {
		t.Fatal(err)
	}
	want = "--- a/custody.toml\n+++ b/custody.toml\n@@ -1 +1,2 @@\n-# only\n\\ No newline at end of file\n+# only\n+version = 1\n"
	if diff := cmp.Diff(want, upgradeDiff([]byte("# only"), up)); diff != "" {
		t.Errorf("no newline (-want +got):\n%s", diff)
	}
}
