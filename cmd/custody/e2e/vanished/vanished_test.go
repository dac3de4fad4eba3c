package vanished

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
)

// TestVanishedTreeIsSettled: a finished tree deleted by hand and pruned
// from git is already gone: plan settles its record (decision 0226). When
// the commit custody last knew of is published, the settlement carries
// that proof and apply deletes the owned branch; when only its branch
// holds that commit, the record settles with the branch kept and no
// proof; when nothing holds it any more (its branch deleted too), the
// record is kept as worktree-missing. Nothing is removed.
func TestVanishedTreeIsSettled(t *testing.T) {
	t.Parallel()
	r := fixtures.New(t, fixtures.Options{})
	clitest.MustCustody(t, r, 0, "init")
	pubID, pubPath := clitest.NewTree(t, r, "published")
	r.Commit(pubPath, "pub.txt", "published\n")
	r.Push(pubPath, "main")
	lostID, lostPath := clitest.NewTree(t, r, "lost")
	lostHead := r.Commit(lostPath, "lost.txt", "only here\n")
	goneID, gonePath := clitest.NewTree(t, r, "gone")
	r.Commit(gonePath, "gone.txt", "nowhere\n")
	clitest.MustCustody(t, r, 0, "finish", pubID, lostID, goneID)
	for _, p := range []string{pubPath, lostPath, gonePath} {
		if err := os.RemoveAll(p); err != nil {
			t.Fatal(err)
		}
	}
	r.Git("worktree", "prune")
	r.Git("branch", "-D", "custody/"+goneID)

	plan := clitest.DecodeResult[machine.Plan](t, clitest.MustCustody(t, r, 0, "plan", "--json", "-o", "plan.json"), "plan")
	got := map[string]string{}
	for _, it := range plan.Items {
		switch {
		case it.Action == machine.ActionSettle && it.Proof != nil:
			got[it.ID] = "settle " + string(it.Proof.Kind) + " branch " + it.Settlement.Branch
		case it.Action == machine.ActionSettle:
			got[it.ID] = "settle unproven branch " + it.Settlement.Branch
		case it.Refusal != nil:
			got[it.ID] = string(it.Action) + " " + string(it.Refusal.Code)
		}
	}
	want := map[string]string{pubID: "settle ancestry branch delete", lostID: "settle unproven branch keep", goneID: "keep worktree-missing"}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("plan (-want +got):\n%s", d)
	}
	clitest.MustCustody(t, r, 0, "apply", "plan.json") // every action of the plan is done
	if tip := r.BranchTip("custody/" + pubID); tip != "" {
		t.Errorf("the published tree's branch survived at %s", tip)
	}
	if tip := r.BranchTip("custody/" + lostID); tip != lostHead {
		t.Errorf("the unpublished tree's branch is at %q, want %s: its commit exists only there", tip, lostHead)
	}
	states := map[string]machine.State{}
	for _, rec := range clitest.ListRecords(t, r, true) {
		states[rec.ID] = rec.State
	}
	if states[pubID] != "tombstoned" || states[lostID] != "tombstoned" || states[goneID] != "finished" {
		t.Errorf("states %v; want %s and %s tombstoned, %s finished", states, pubID, lostID, goneID)
	}
}
