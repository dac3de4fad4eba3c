package steps

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custody-sh/custody/machine"
)

// TestAppendExcludeThroughSymlink: a person's info/exclude kept elsewhere
// behind a symlink gets the line in the file it names, written durably; the
// link stays a link. A dangling link is refused with a retry, nothing made.
func TestAppendExcludeThroughSymlink(t *testing.T) {
	t.Parallel()
	common := t.TempDir()
	info := filepath.Join(common, "info")
	if err := os.MkdirAll(info, 0o755); err != nil {
		t.Fatal(err)
	}
	shared := filepath.Join(t.TempDir(), "shared-exclude")
	if err := os.WriteFile(shared, []byte("*.log\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(info, "exclude")
	if err := os.Symlink(shared, link); err != nil {
		t.Fatal(err)
	}
	added, err := AppendExclude(common, "/.worktrees/", "custody's managed worktrees")
	if err != nil || !added {
		t.Fatalf("AppendExclude through a symlink = %v, %v", added, err)
	}
	b, _ := os.ReadFile(shared)
	if string(b) != "*.log\n# custody's managed worktrees\n/.worktrees/\n" {
		t.Errorf("the linked file holds %q", b)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", fi, err)
	}
	if added, err := AppendExclude(common, "/.worktrees/", "again"); err != nil || added {
		t.Errorf("a second AppendExclude = %v, %v; want nothing added", added, err)
	}

	dangling := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dangling, "info"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dangling, "nowhere"), filepath.Join(dangling, "info", "exclude")); err != nil {
		t.Fatal(err)
	}
	_, err = AppendExclude(dangling, "/.worktrees/", "x")
	var r *machine.Refusal
	if !errors.As(err, &r) || r.Code != machine.CodeUnsafeTarget || !strings.Contains(r.Retry, "regular file") {
		t.Errorf("a dangling exclude link: %v, want an unsafe-target refusal with a retry", err)
	}
	if _, err := os.Lstat(filepath.Join(dangling, "nowhere")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the dangling link's target was made: %v", err)
	}
}
