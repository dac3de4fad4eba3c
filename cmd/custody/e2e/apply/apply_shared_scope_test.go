package apply

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/cmd/custody/internal/output"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
)

// TestApplySharedScopeStillSeesChanges: apply reads the advertisement,
// custody's own .env lines and the disposable patterns once, at its first
// removal, and verifies each removal from git's registry files. A tree a
// person changes after that read, before its own turn, is still refused
// (stale), and one changed after its intent was committed is kept whole
// (stale too, the intent stepped back):
// each tree is observed fresh before its intent and again after it, and
// nothing is deleted on the word of what was read once.
func TestApplySharedScopeStillSeesChanges(t *testing.T) {
	t.Parallel()
	planItems := func(t *testing.T, plan string) []string {
		t.Helper()
		b, err := os.ReadFile(plan)
		if err != nil {
			t.Fatal(err)
		}
		p, err := machine.ParsePlan(b)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, it := range p.Items {
			ids = append(ids, it.ID)
		}
		return ids
	}
	treeOf := func(t *testing.T, r *fixtures.Repo, id string) string {
		t.Helper()
		p := filepath.Join(r.Dir, ".worktrees", id)
		if fi, err := os.Lstat(filepath.Join(p, "README")); err != nil || !fi.Mode().IsRegular() {
			t.Fatalf("tree %s: README %v", p, err)
		}
		return p
	}

	t.Run("changed-after-the-shared-read", func(t *testing.T) {
		t.Parallel()
		r, _, plan := clitest.PausedPlan(t, 2)
		order := planItems(t, plan)
		second := treeOf(t, r, order[1])
		// Held at the first item's observation: the shared read is done.
		release, wait := clitest.Paused(t, r, "apply/before-observe", "apply", plan, "--json")
		if err := os.WriteFile(filepath.Join(second, "notes.txt"), []byte("mine\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		release()
		res := wait()
		if res.Code != output.ExitPending {
			t.Errorf("apply: want exit %d, got\n%s", output.ExitPending, res)
		}
		got := clitest.WantOutcomes(t, "apply", res, order[:1], "removed")
		if got[order[1]] != string(machine.OutcomeStale) {
			t.Errorf("%s changed after apply began: %q, want stale\n%s", order[1], got[order[1]], res)
		}
		if b, err := os.ReadFile(filepath.Join(second, "notes.txt")); err != nil || string(b) != "mine\n" {
			t.Errorf("the person's file in %s: %q, %v", second, b, err)
		}
	})

	t.Run("changed-after-the-intent", func(t *testing.T) {
		t.Parallel()
		r, ids, plan := clitest.PausedPlan(t, 1)
		tree := treeOf(t, r, ids[0])
		release, wait := clitest.Paused(t, r, "apply/after-intent", "apply", plan, "--json")
		if err := os.WriteFile(filepath.Join(tree, "notes.txt"), []byte("mine\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		release()
		res := wait()
		if res.Code != output.ExitPending {
			t.Errorf("apply: want exit %d, got\n%s", output.ExitPending, res)
		}
		clitest.WantOutcomes(t, "apply", res, ids, string(machine.OutcomeStale))
		if b, err := os.ReadFile(filepath.Join(tree, "notes.txt")); err != nil || string(b) != "mine\n" {
			t.Errorf("the person's file in %s: %q, %v", tree, b, err)
		}
		if _, err := os.Stat(filepath.Join(tree, "README")); err != nil {
			t.Errorf("the tree lost a tracked file: %v", err)
		}
	})
}
