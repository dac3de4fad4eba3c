package steps

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custody-sh/custody/machine"
)

// TestAppendExcludeNeverThroughSymlink: a person's info/exclude kept
// elsewhere behind a symlink is never written through: one that lacks the
// line is an unsafe-target refusal whose retry, pasted, appends it to the
// file the link names; once it holds the line nothing is asked. A dangling
// link, and an info/ that is itself a link, are refused, nothing made.
func TestAppendExcludeNeverThroughSymlink(t *testing.T) {
	t.Parallel()
	common := t.TempDir()
	info := filepath.Join(common, "info")
	if err := os.MkdirAll(info, 0o755); err != nil {
		t.Fatal(err)
	}
	shared := filepath.Join(t.TempDir(), "shared exclude;$(touch pwned)")
	if err := os.WriteFile(shared, []byte("*.log\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(info, "exclude")
	if err := os.Symlink(shared, link); err != nil {
		t.Fatal(err)
	}
	added, err := AppendExclude(common, "/.worktrees/", "custody's managed worktrees")
	var r *machine.Refusal
	if !errors.As(err, &r) || r.Code != machine.CodeUnsafeTarget || added {
		t.Fatalf("AppendExclude through a symlink = %v, %v; want an unsafe-target refusal", added, err)
	}
	if b, _ := os.ReadFile(shared); string(b) != "*.log\n" {
		t.Errorf("the linked file was written through: %q", b)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", fi, err)
	}
	sh := exec.Command("/bin/sh", "-c", r.Retry)
	sh.Dir = t.TempDir()
	if out, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("pasting %q: %v\n%s", r.Retry, err, out)
	}
	if b, _ := os.ReadFile(shared); string(b) != "*.log\n/.worktrees/\n" {
		t.Errorf("after the retry the linked file holds %q", b)
	}
	if added, err := AppendExclude(common, "/.worktrees/", "again"); err != nil || added {
		t.Errorf("AppendExclude once the linked file holds the line = %v, %v; want nothing to do", added, err)
	}

	dangling := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dangling, "info"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dangling, "nowhere"), filepath.Join(dangling, "info", "exclude")); err != nil {
		t.Fatal(err)
	}
	_, err = AppendExclude(dangling, "/.worktrees/", "x")
	if !errors.As(err, &r) || r.Code != machine.CodeUnsafeTarget || !strings.Contains(r.Retry, "regular file") {
		t.Errorf("a dangling exclude link: %v, want an unsafe-target refusal with a retry", err)
	}
	if _, err := os.Lstat(filepath.Join(dangling, "nowhere")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the dangling link's target was made: %v", err)
	}

	linkedInfo, elsewhere := t.TempDir(), t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(linkedInfo, "info")); err != nil {
		t.Fatal(err)
	}
	if _, err = AppendExclude(linkedInfo, "/.worktrees/", "x"); !errors.As(err, &r) || r.Code != machine.CodeUnsafeTarget {
		t.Errorf("info/ a symlink: %v, want an unsafe-target refusal", err)
	}
	if ents, _ := os.ReadDir(elsewhere); len(ents) != 0 {
		t.Errorf("something was written through the info/ link: %v", ents)
	}
}
