//go:build unix

package resource

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/cmd/custody/internal/output"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
)

// TestApplyDestroyRefusedIsPending: a planned destroy of an orphaned
// resource that apply's re-check keeps (its worktree's admin key is back)
// is the plan's action refused: apply reports it refused with the reason
// and exits 3, so `plan -o p && apply p && ...` does not go on as if the
// resource were gone.
func TestApplyDestroyRefusedIsPending(t *testing.T) {
	t.Parallel()
	r := fixtures.New(t, fixtures.Options{})
	log := filepath.Join(t.TempDir(), "log")
	clitest.WriteTrusted(t, r, fmt.Sprintf("[resources.db]\ncreate = '''echo create >> %s'''\ndestroy = '''echo destroy >> %s'''\n", log, log))
	clitest.MustCustody(t, r, 0, "init")
	id, path := clitest.NewTree(t, r, "orph")
	// The tree goes behind custody's back: its resource is an orphan.
	if out, err := exec.Command("git", "-C", r.Dir, "worktree", "remove", "--force", path).CombinedOutput(); err != nil {
		t.Fatalf("git worktree remove: %v\n%s", err, out)
	}
	tombstoneAt(t, r, path) // a live record alone keeps its resources
	plan := filepath.Join(r.Root, "plan.json")
	p := clitest.DecodeResult[machine.Plan](t, clitest.MustCustody(t, r, 0, "plan", "-o", plan, "--json"), "plan")
	if it, ok := p.Item(id + "/db"); !ok || it.Action != machine.ActionDestroy {
		t.Fatalf("plan does not destroy the orphan %s/db: %+v", id, p.Items)
	}
	// The worktree's admin key is back before apply: the resource is live.
	if err := os.MkdirAll(filepath.Join(r.Dir, ".git", "worktrees", id), 0o755); err != nil {
		t.Fatal(err)
	}
	res := clitest.Custody(t, r, "apply", plan, "--json")
	if res.Code != output.ExitPending {
		t.Fatalf("apply whose planned destroy is refused: want exit 3, got\n%s", res)
	}
	ap := clitest.DecodeResult[steps.ApplyResult](t, res, "apply")
	if len(ap.Items) != 1 || ap.Items[0].Outcome != machine.OutcomeRefused || ap.Items[0].Refusal == nil ||
		ap.Items[0].Refusal.Code != machine.CodeWorktreeLive {
		t.Errorf("apply: want %s/db refused [worktree-live], got %+v", id, ap.Items)
	}
	if b, _ := os.ReadFile(log); string(b) != "create\n" {
		t.Errorf("the resource's commands ran %q, want only its create", b)
	}
}
