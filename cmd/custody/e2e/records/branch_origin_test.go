package records

// Branch ownership across versions: a record written before custody
// recorded where its branch came from keeps the rule it was written under.

import (
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	json "github.com/custody-sh/custody/machine/bytejson"
	"github.com/custody-sh/custody/steps"
)

// TestBranchOwnershipOfOlderRecords: a record without branch_origin (as an
// older custody wrote it) owns its branch only when it is exactly
// <prefix><id>: its custody/<id> branch is deleted after a proven removal,
// and once the project's prefix changed the tree is not custody's to
// remove (not-owned), as before. A record that says custody created its
// branch owns it whatever the prefix says now.
func TestBranchOwnershipOfOlderRecords(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)

	// Under the prefix it was made with: the older record's branch goes.
	old, _ := clitest.NewTree(t, r, "old")
	dropBranchOrigin(t, r, old)
	clitest.MustCustody(t, r, 0, "finish", old)
	out := applyPlan(t, r)
	if b := out[old].Branch; out[old].Outcome != machine.OutcomeRemoved || b == nil || b.Outcome != machine.BranchDeleted {
		t.Errorf("older record: %+v (branch %+v), want removed with its branch deleted", out[old], b)
	}
	if tip := r.BranchTip("custody/" + old); tip != "" {
		t.Errorf("custody/%s is still at %s", old, tip)
	}

	// The prefix changes: the older record's tree is no longer shown to
	// be custody's; the recorded one is, and so is its branch.
	older, _ := clitest.NewTree(t, r, "older")
	dropBranchOrigin(t, r, older)
	recent, _ := clitest.NewTree(t, r, "recent")
	clitest.MustCustody(t, r, 0, "finish", older, recent)
	r.WriteFile(r.Dir, "custody.toml", "[worktree]\nbranch_prefix = \"wt/\"\n")
	p := clitest.DecodeResult[machine.Plan](t, clitest.MustCustody(t, r, 0, "plan", "--json"), "plan")
	for _, it := range p.Items {
		switch it.ID {
		case older:
			if it.Action != machine.ActionKeep || it.Refusal == nil || it.Refusal.Code != machine.CodeNotOwned {
				t.Errorf("older record under a new prefix: %s %+v, want kept not-owned", it.Action, it.Refusal)
			}
		case recent:
			if it.Action != machine.ActionRemove || it.BranchKept != "" {
				t.Errorf("recorded record under a new prefix: %s %+v (branch kept %q), want removed with its branch", it.Action, it.Refusals, it.BranchKept)
			}
		}
	}
	out = applyPlan(t, r)
	if b := out[recent].Branch; out[recent].Outcome != machine.OutcomeRemoved || b == nil || b.Outcome != machine.BranchDeleted {
		t.Errorf("recorded record: %+v (branch %+v), want removed with its branch deleted", out[recent], b)
	}
	if tip := r.BranchTip("custody/" + older); tip == "" {
		t.Errorf("custody/%s was deleted with its tree kept", older)
	}
}

// applyPlan plans to a file, applies it and returns each item's outcome.
func applyPlan(t *testing.T, r *fixtures.Repo) map[string]steps.Outcome {
	t.Helper()
	file := clitest.PlanOutside(t, r, 0)
	res := clitest.DecodeResult[steps.ApplyResult](t, clitest.Custody(t, r, "apply", file, "--json"), "apply")
	out := map[string]steps.Outcome{}
	for _, o := range res.Items {
		out[o.ID] = o
	}
	return out
}

// dropBranchOrigin rewrites record id in r's state file without
// branch_origin, as a custody that did not record it wrote it.
func dropBranchOrigin(t *testing.T, r *fixtures.Repo, id string) {
	t.Helper()
	db, err := bolt.Open(filepath.Join(r.Dir, ".git", "custody", "state.db"), 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("records"))
		var rec map[string]json.RawMessage
		if err := json.Unmarshal(b.Get([]byte(id)), &rec); err != nil {
			return err
		}
		if string(rec["branch_origin"]) != `"created"` {
			t.Errorf("record %s has branch_origin %s, want \"created\"", id, rec["branch_origin"])
		}
		delete(rec, "branch_origin")
		v, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		return b.Put([]byte(id), v)
	})
	if err != nil {
		t.Fatal(err)
	}
}
