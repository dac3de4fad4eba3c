package gitfiles_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/gitfiles"
)

// TestReadAdminEntry: every top-level member is listed with its type, and
// the members of logs/, refs/ and info/ one by one at any depth; any other
// directory (rebase-merge/) is one member; nothing is followed through a
// symlink; the list is sorted. A directory that cannot be read is an
// error, and a missing entry is one too.
func TestReadAdminEntry(t *testing.T) {
	t.Parallel()
	admin := filepath.Join(t.TempDir(), "worktrees", "k")
	for _, f := range []string{"HEAD", "ORIG_HEAD", "logs/HEAD", "logs/refs/worktree/x", "refs/worktree/x.lock",
		"info/sparse-checkout", "rebase-merge/onto", "FUTURE/inside"} {
		p := filepath.Join(admin, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(admin, "logs"), filepath.Join(admin, "refs", "linked")); err != nil {
		t.Fatal(err)
	}
	got, err := gitfiles.ReadAdminEntry(admin)
	if err != nil {
		t.Fatal(err)
	}
	f := func(n string) machine.AdminFile { return machine.AdminFile{Name: n, Type: machine.AdminRegular} }
	d := func(n string) machine.AdminFile { return machine.AdminFile{Name: n, Type: machine.AdminDir} }
	want := []machine.AdminFile{
		d("FUTURE"), f("HEAD"), f("ORIG_HEAD"), d("info"), f("info/sparse-checkout"),
		d("logs"), f("logs/HEAD"), d("logs/refs"), d("logs/refs/worktree"), f("logs/refs/worktree/x"),
		d("rebase-merge"), d("refs"), {Name: "refs/linked", Type: machine.AdminOther}, d("refs/worktree"), f("refs/worktree/x.lock"),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReadAdminEntry (-want +got):\n%s", diff)
	}
	if os.Geteuid() != 0 {
		if err := os.Chmod(filepath.Join(admin, "logs"), 0); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(filepath.Join(admin, "logs"), 0o755)
		if _, err := gitfiles.ReadAdminEntry(admin); err == nil {
			t.Errorf("an unreadable logs/ was listed without an error")
		}
	}
	if _, err := gitfiles.ReadAdminEntry(filepath.Join(admin, "gone")); err == nil {
		t.Errorf("a missing admin entry was listed without an error")
	}
}
