package records

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
)

// TestNoWriteThroughLinksUnderGitDir: custody never writes through a
// symlink under the git directory. For each file or directory it writes
// there (info/exclude, info/, the state directory, state.db, the registry
// lock, the holder note, the worktrees/ directory holding the ready
// marker), a link to somewhere else is planted; the command refuses or
// leaves the link alone, and what the link names is exactly as it was.
func TestNoWriteThroughLinksUnderGitDir(t *testing.T) {
	t.Parallel()
	type plant struct {
		// link is the path below .git that becomes a symlink.
		link string
		// dir: the link names a directory (else a file).
		dir bool
		// initFirst runs custody init before the link is planted.
		initFirst bool
		// args is the command run; want its exit code (-1: any but a
		// panic, the command may refuse or go on without the link).
		args []string
		want int
	}
	for name, c := range map[string]plant{
		"info-exclude":  {link: "info/exclude", args: []string{"init"}, want: 1},
		"info-dir":      {link: "info", dir: true, args: []string{"init"}, want: 1},
		"state-dir":     {link: "custody", dir: true, args: []string{"init"}, want: 1},
		"state-dir-new": {link: "custody", dir: true, args: []string{"new", "x"}, want: 1},
		"state-db":      {link: "custody/state.db", initFirst: true, args: []string{"new", "x"}, want: 1},
		"registry-lock": {link: "custody/registry.lock", initFirst: true, args: []string{"new", "x"}, want: 1},
		"holder-note":   {link: "custody/state.db.holder", initFirst: true, args: []string{"new", "x"}, want: -1},
		"worktrees-dir": {link: "worktrees", dir: true, initFirst: true, args: []string{"new", "x"}, want: -1},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := fixtures.New(t, fixtures.Options{})
			if c.initFirst {
				clitest.MustCustody(t, r, 0, "init")
			}
			link := filepath.Join(r.Dir, ".git", filepath.FromSlash(c.link))
			if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.RemoveAll(link); err != nil {
				t.Fatal(err)
			}
			elsewhere := filepath.Join(t.TempDir(), "elsewhere")
			const content = "a person's own file\n"
			if c.dir {
				if err := os.Mkdir(elsewhere, 0o755); err != nil {
					t.Fatal(err)
				}
			} else if err := os.WriteFile(elsewhere, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(elsewhere, link); err != nil {
				t.Fatal(err)
			}
			res := clitest.Custody(t, r, c.args...)
			if c.want >= 0 && res.Code != c.want {
				t.Errorf("custody %s with %s a symlink: exit %d, want %d\n%s", strings.Join(c.args, " "), c.link, res.Code, c.want, res)
			}
			if c.want == 1 && !strings.Contains(res.Stderr, "[unsafe-target]") && !strings.Contains(res.Stderr, "symlink") && !strings.Contains(res.Stderr, "symbolic link") {
				t.Errorf("the refusal does not say a symlink is in the way:\n%s", res)
			}
			if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Errorf("%s is no longer the link: %v", c.link, err)
			}
			if c.dir {
				if ents, _ := os.ReadDir(elsewhere); c.link != "worktrees" && len(ents) != 0 {
					t.Errorf("custody wrote through the %s link: %s holds %v", c.link, elsewhere, ents)
				}
				// git itself makes its admin entry through a linked
				// worktrees/; custody's ready marker is never written there.
				markers, _ := filepath.Glob(filepath.Join(elsewhere, "*", "custody-ready"))
				if len(markers) != 0 {
					t.Errorf("custody wrote its ready marker through the link: %v", markers)
				}
			} else if b, err := os.ReadFile(elsewhere); err != nil || string(b) != content {
				t.Errorf("custody wrote through the %s link: it now holds %q (%v)", c.link, b, err)
			}
		})
	}
}
