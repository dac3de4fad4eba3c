package agent

// Leases: a live lease keeps an active tree in use; an expired one lets
// plan treat the tree as finished. Leases are written straight into the
// store (no command acquires them yet).

import (
	"testing"
	"time"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
)

// TestLeases: a live lease refuses finish; an expired lease lets plan
// treat an active tree as finished, and apply removes it (firing expire
// first).
func TestLeases(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	live, _ := clitest.NewTree(t, r, "live")
	expired, expPath := clitest.NewTree(t, r, "expired")
	now := time.Now()
	clitest.PutLeases(t, r,
		machine.Lease{Record: live, Holder: "agent-1", Expires: now.Add(time.Hour)},
		machine.Lease{Record: expired, Holder: "agent-2", Expires: now.Add(-time.Minute)})
	res := clitest.Custody(t, r, "finish", live, "--json")
	if res.Code != 3 {
		t.Fatalf("finish under a live lease: want exit 3, got %s", res)
	}
	fo := clitest.DecodeResult[clitest.ItemsResult[steps.Outcome]](t, res, "finish")
	if len(fo.Items) != 1 || fo.Items[0].Refusal == nil || fo.Items[0].Refusal.Code != "lease-live" {
		t.Errorf("finish under a live lease: %+v, want refused [lease-live]", fo.Items)
	}
	if s := clitest.RecordState(t, r, live); s != "active" {
		t.Errorf("%s is %s after a refused finish", live, s)
	}

	plan, file := clitest.PlanAny(t, r)
	if it := clitest.PlanItem(t, plan, expired); it.Action != "remove" || it.Proof == nil {
		t.Errorf("active tree with an expired lease: %s %v, want remove", it.Action, clitest.RefusalCodes(it.Refusals))
	}
	if it := clitest.PlanItem(t, plan, live); it.Action != "keep" || !clitest.HasCode(it.Refusals, "lease-live") {
		t.Errorf("active tree with a live lease: %s %v, want keep [lease-live]", it.Action, clitest.RefusalCodes(it.Refusals))
	}
	a := clitest.Apply(t, r, file, 0)
	if o := clitest.ApplyOutcome(t, a, expired); o.Outcome != "removed" {
		t.Errorf("apply: %+v", o)
	}
	clitest.AssertRemoved(t, r, expired, expPath, true)
}

// TestLeaseExpiredKeptIsPending: plan treats an active tree whose lease
// expired as finished; when such a tree is kept (here: an untracked
// file), it is kept like any finished tree: plan exits 0 (it made a plan,
// docs/exit-codes.md) and the plan says the tree is a person's to settle
// (Pending), so a script reading the plan does not take the repository
// for settled.
func TestLeaseExpiredKeptIsPending(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.NewTree(t, r, "expired")
	r.WriteFile(path, "notes.txt", "unsaved\n")
	clitest.PutLeases(t, r, machine.Lease{Record: id, Holder: "agent-9", Expires: time.Now().Add(-time.Minute)})
	res := clitest.Custody(t, r, "plan", "--json")
	p := clitest.DecodeResult[machine.Plan](t, res, "plan")
	if it := clitest.PlanItem(t, p, id); it.Action != "keep" || !clitest.HasCode(it.Refusals, "untracked-files") {
		t.Fatalf("plan: %s %v, want keep [untracked-files]", it.Action, clitest.RefusalCodes(it.Refusals))
	}
	if res.Code != 0 {
		t.Errorf("plan keeps lease-expired %s (treated as finished) and exits %d, want 0: it made a plan", id, res.Code)
	}
	if !p.Pending() {
		t.Errorf("plan keeps lease-expired %s (treated as finished) but does not call it pending", id)
	}
}
