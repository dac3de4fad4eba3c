package main

// Leases: a live lease keeps an active tree in use; an expired one lets
// plan treat the tree as finished. Leases are written straight into the
// store (no command acquires them yet).

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/store"
)

// PutLeases writes leases straight into the repository's store.
func PutLeases(t *testing.T, r *fixtures.Repo, leases ...machine.Lease) {
	t.Helper()
	st, err := store.Open(filepath.Join(r.Dir, ".git", "custody", "state.db"), 5*time.Second, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range leases {
		if err := st.PutLease(l); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLeases: a live lease refuses finish; an expired lease lets plan
// treat an active tree as finished, and apply removes it (firing expire
// first).
func TestLeases(t *testing.T) {
	t.Parallel()
	r := InitRepo(t)
	live, _ := NewTree(t, r, "live")
	expired, expPath := NewTree(t, r, "expired")
	now := time.Now()
	PutLeases(t, r,
		machine.Lease{Record: live, Holder: "agent-1", Expires: now.Add(time.Hour)},
		machine.Lease{Record: expired, Holder: "agent-2", Expires: now.Add(-time.Minute)})
	res := Custody(t, r, "finish", live, "--json")
	if res.Code != 3 {
		t.Fatalf("finish under a live lease: want exit 3, got %s", res)
	}
	fo := DecodeResult[ItemsResult[steps.Outcome]](t, res, "finish")
	if len(fo.Items) != 1 || fo.Items[0].Refusal == nil || fo.Items[0].Refusal.Code != "lease-live" {
		t.Errorf("finish under a live lease: %+v, want refused [lease-live]", fo.Items)
	}
	if s := RecordState(t, r, live); s != "active" {
		t.Errorf("%s is %s after a refused finish", live, s)
	}

	plan, file := PlanAny(t, r)
	if it := PlanItem(t, plan, expired); it.Action != "remove" || it.Proof == nil {
		t.Errorf("active tree with an expired lease: %s %v, want remove", it.Action, RefusalCodes(it.Refusals))
	}
	if it := PlanItem(t, plan, live); it.Action != "keep" || !HasCode(it.Refusals, "lease-live") {
		t.Errorf("active tree with a live lease: %s %v, want keep [lease-live]", it.Action, RefusalCodes(it.Refusals))
	}
	a := Apply(t, r, file, 0)
	if o := ApplyOutcome(t, a, expired); o.Outcome != "removed" {
		t.Errorf("apply: %+v", o)
	}
	AssertRemoved(t, r, expired, expPath, true)
}

// TestLeaseExpiredKeptIsPending: plan treats an active tree whose lease
// expired as finished; when such a tree is kept (here: an untracked
// file), it is kept like any finished tree: plan exits 0 (it made a plan,
// docs/exit-codes.md) and the plan says the tree is a person's to settle
// (Pending), so a script reading the plan does not take the repository
// for settled.
func TestLeaseExpiredKeptIsPending(t *testing.T) {
	t.Parallel()
	r := InitRepo(t)
	id, path := NewTree(t, r, "expired")
	r.WriteFile(path, "notes.txt", "unsaved\n")
	PutLeases(t, r, machine.Lease{Record: id, Holder: "agent-9", Expires: time.Now().Add(-time.Minute)})
	res := Custody(t, r, "plan", "--json")
	p := DecodeResult[machine.Plan](t, res, "plan")
	if it := PlanItem(t, p, id); it.Action != "keep" || !HasCode(it.Refusals, "untracked-files") {
		t.Fatalf("plan: %s %v, want keep [untracked-files]", it.Action, RefusalCodes(it.Refusals))
	}
	if res.Code != 0 {
		t.Errorf("plan keeps lease-expired %s (treated as finished) and exits %d, want 0: it made a plan", id, res.Code)
	}
	if !p.Pending() {
		t.Errorf("plan keeps lease-expired %s (treated as finished) but does not call it pending", id)
	}
}
