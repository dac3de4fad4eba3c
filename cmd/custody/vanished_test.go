package main

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
)

// TestVanishedTreeIsSettled: a tree deleted by hand and pruned from git is
// already gone. When the commit custody last knew of is published, plan
// settles the record (remove, with the proof) and apply tombstones it and
// deletes the owned branch, removing nothing. When that commit is on no
// remote, the record is kept as worktree-missing and the branch stays.
func TestVanishedTreeIsSettled(t *testing.T) {
	t.Parallel()
	r := fixtures.New(t, fixtures.Options{})
	mustCustody(t, r, 0, "init")
	pubID, pubPath := newTree(t, r, "published")
	r.Commit(pubPath, "pub.txt", "published\n")
	r.Push(pubPath, "main")
	lostID, lostPath := newTree(t, r, "lost")
	lostHead := r.Commit(lostPath, "lost.txt", "only here\n")
	mustCustody(t, r, 0, "finish", pubID, lostID)
	for _, p := range []string{pubPath, lostPath} {
		if err := os.RemoveAll(p); err != nil {
			t.Fatal(err)
		}
	}
	r.Git("worktree", "prune")

	plan := decodeResult[machine.Plan](t, mustCustody(t, r, 0, "plan", "--json", "-o", "plan.json"), "plan")
	got := map[string]string{}
	for _, it := range plan.Items {
		switch {
		case it.Action == "remove" && it.Proof != nil:
			got[it.ID] = "remove " + string(it.Proof.Kind)
		case it.Refusal != nil:
			got[it.ID] = string(it.Action) + " " + string(it.Refusal.Code)
		}
	}
	if got[pubID] != "remove ancestry" || got[lostID] != "keep worktree-missing" {
		t.Fatalf("plan: %v; want %s removed by ancestry and %s kept worktree-missing", got, pubID, lostID)
	}
	mustCustody(t, r, 0, "apply", "plan.json") // every action of the plan is done
	if tip := r.BranchTip("custody/" + pubID); tip != "" {
		t.Errorf("the published tree's branch survived at %s", tip)
	}
	if tip := r.BranchTip("custody/" + lostID); tip != lostHead {
		t.Errorf("the unpublished tree's branch is at %q, want %s: its commit exists only there", tip, lostHead)
	}
	states := map[string]machine.State{}
	for _, rec := range listRecords(t, r, true) {
		states[rec.ID] = rec.State
	}
	if states[pubID] != "tombstoned" || states[lostID] != "finished" {
		t.Errorf("states %v; want %s tombstoned, %s finished", states, pubID, lostID)
	}
}
