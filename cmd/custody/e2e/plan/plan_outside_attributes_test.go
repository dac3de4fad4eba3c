package plan

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
)

// TestPlanAsksStatusWhenAttributesComeFromOutside: plan calls a tree that is
// byte for byte its HEAD clean without git status only while no attribute
// from outside the repository can make git see its bytes as other bytes.
// Otherwise apply's status could find the tree changed and refuse it as
// stale on every run, and "custody plan" would be advice that loops. Each
// source of such attributes puts status back: the global attributes file,
// core.attributesFile, a conditional include (which could set it for some
// branches only), and a tree's own config.worktree. So does a partial
// clone, whose status may need objects it must fetch first (offline it
// fails, and plan must keep the tree then, as apply would).
func TestPlanAsksStatusWhenAttributesComeFromOutside(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		setup func(t *testing.T, r *fixtures.Repo, keys []string)
		want  int // status runs over the three trees
	}{
		{"nothing from outside", func(*testing.T, *fixtures.Repo, []string) {}, 0},
		{"the global attributes file", func(t *testing.T, r *fixtures.Repo, _ []string) {
			dir := filepath.Join(r.Home, ".config", "git")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "attributes"), []byte("*.txt filter=upper\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			r.Git("config", "filter.upper.clean", "tr a-z A-Z")
		}, 3},
		{"core.attributesFile", func(t *testing.T, r *fixtures.Repo, _ []string) {
			r.Git("config", "core.attributesFile", filepath.Join(r.Root, "attributes-anywhere"))
		}, 3},
		{"a conditional include", func(t *testing.T, r *fixtures.Repo, _ []string) {
			r.Git("config", "includeIf.onbranch:custody/**.path", filepath.Join(r.Root, "custody-only.config"))
		}, 3},
		{"a partial clone", func(t *testing.T, r *fixtures.Repo, _ []string) {
			r.Git("config", "remote.origin.promisor", "true")
			r.Git("config", "extensions.partialClone", "origin")
		}, 3},
		{"one tree's config.worktree", func(t *testing.T, r *fixtures.Repo, keys []string) {
			r.Git("config", "extensions.worktreeConfig", "true")
			admin := filepath.Join(r.Dir, ".git", "worktrees", keys[1], "config.worktree")
			if err := os.WriteFile(admin, []byte("[core]\n\tattributesFile = /nowhere\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := clitest.InitRepo(t)
			ids := mergedTrees(t, r, "attr", 3)
			c.setup(t, r, ids)
			plan := clitest.MustCustody(t, r, 0, "plan", "--debug")
			if got := clitest.GitRuns(plan.Stderr, "-c core.fsmonitor=false"); got != c.want {
				t.Errorf("plan ran git status %d times over 3 clean trees, want %d:\n%s", got, c.want, plan.Stderr)
			}
		})
	}
}
