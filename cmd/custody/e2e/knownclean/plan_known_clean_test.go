package knownclean

import (
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/machine"
)

// TestPlanWithoutStatusStillAppliesThroughStatus: plan observes a tree
// that is exactly its HEAD without git status (decision 0185), so a
// failing git status does not change its plan — the tree is to be
// removed — but apply, which observes with status, refuses that item while
// status fails and leaves the tree exactly as it was; once git works again
// the same plan removes it. No removal ever skips git status.
func TestPlanWithoutStatusStillAppliesThroughStatus(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.Removable(t, r, "fast")
	env := clitest.PathEnv(r.FailingGit("status"))
	before := clitest.SnapKeptState(t, r, id, path)

	file := clitest.PlanFile(t, r)
	res := clitest.RunBin(t, clitest.Bin(), r, r.Dir, []string{env}, "plan", "-o", file, "--json")
	if res.Code != 0 {
		t.Fatalf("plan with a failing git status: %s", res)
	}
	if it := clitest.PlanItem(t, clitest.DecodeResult[machine.Plan](t, res, "plan"), id); it.Action != machine.ActionRemove {
		t.Fatalf("plan of a tree exactly its HEAD with a failing git status: %s %v, want remove (no status asked)", it.Action, clitest.RefusalCodes(it.Refusals))
	}

	a := clitest.Apply(t, r, file, 3, env)
	if o := clitest.ApplyOutcome(t, a, id); o.Outcome == machine.OutcomeRemoved || o.Refusal == nil {
		t.Fatalf("apply with a failing git status: %+v, want the item refused", o)
	}
	before.Check(t, r, id, "after apply with a failing git status")

	a = clitest.Apply(t, r, file, 0)
	if o := clitest.ApplyOutcome(t, a, id); o.Outcome != machine.OutcomeRemoved {
		t.Fatalf("apply of the same plan with git working: %+v, want removed", o)
	}
	clitest.AssertRemovedWithBranch(t, r, id, path)
}
