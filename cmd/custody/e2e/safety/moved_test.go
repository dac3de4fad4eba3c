package safety

// A managed tree moved with `git worktree move`: git still registers it
// under the record's admin key, with custody's ready marker, at another
// path.

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

// TestMovedWorktreeRetries: plan keeps the record of a moved, finished
// tree, and every retry it names works (DESIGN §1.7: every refusal names
// the command that retries): when the record's retry is `custody doctor`,
// doctor reports the missing tree (it does not exit 0); when plan lists the
// tree at its new path with the retry `custody adopt PATH`, adopt does not
// fail.
func TestMovedWorktreeRetries(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.NewTree(t, r, "moved")
	clitest.Finish(t, r, id)
	dst := filepath.Join(r.Root, "moved-here")
	r.Git("worktree", "move", path, dst)

	plan, _ := clitest.PlanAny(t, r)
	it := clitest.PlanItem(t, plan, id)
	if it.Action != "keep" || it.Refusal == nil {
		t.Fatalf("plan: %+v", it)
	}
	if it.Refusal.Retry == "custody doctor" {
		if res := clitest.Custody(t, r, "doctor"); res.Code == 0 {
			t.Errorf("plan keeps %s [%s] and says to run custody doctor, but doctor finds nothing (exit 0):\n%s", id, it.Refusal.Code, res.Stdout)
		}
	}
	if mv := clitest.PlanItemAt(plan, dst); mv != nil && mv.Refusal != nil && strings.HasPrefix(mv.Refusal.Retry, "custody adopt ") {
		if res := clitest.Custody(t, r, "adopt", dst); res.Code == 1 {
			t.Errorf("plan lists the moved tree %s as %s [%s] with the retry %q, which fails:\n%s",
				dst, mv.ID, mv.Refusal.Code, mv.Refusal.Retry, res.Stderr)
		}
	}
}
