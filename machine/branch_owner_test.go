package machine_test

import (
	"testing"

	"github.com/custody-sh/custody/machine"
)

// TestBranchOwned: custody owns a branch only when it recorded that it
// created it (new, new --branch), or, for a record written before that fact
// was recorded, when the record is custody's and the branch is exactly
// prefix+id. A branch it did not create (new --checkout, adopt) is never
// owned, whatever its name; neither is one of an unknown origin.
func TestBranchOwned(t *testing.T) {
	t.Parallel()
	pol := machine.DefaultPolicy()
	other := machine.Policy{BranchPrefix: "wt/"}
	rec := func(origin machine.Origin, branch string, bo machine.BranchOrigin) machine.Record {
		r := removableRecord()
		r.Origin, r.Branch, r.BranchOrigin = origin, branch, bo
		return r
	}
	created, existing := machine.BranchOriginCreated, machine.BranchOriginExisting
	tests := []struct {
		name string
		rec  machine.Record
		pol  machine.Policy
		want bool
	}{
		{"created/own-name", rec(machine.OriginCreated, testBranch, created), pol, true},
		{"created/named", rec(machine.OriginCreated, "feature/login", created), pol, true},
		{"created/named-prefix-changed", rec(machine.OriginCreated, "feature/login", created), other, true},
		{"created/own-name-prefix-changed", rec(machine.OriginCreated, testBranch, created), other, true},
		{"existing", rec(machine.OriginCreated, "topic", existing), pol, false},
		{"existing/named-like-custodys", rec(machine.OriginCreated, testBranch, existing), pol, false},
		{"unknown-origin", rec(machine.OriginCreated, testBranch, "guessed"), pol, false},
		{"no-branch", rec(machine.OriginCreated, "", created), pol, false},
		{"adopted", rec(machine.OriginAdopted, testBranch, ""), pol, false},
		{"adopted/created-said", rec(machine.OriginAdopted, testBranch, created), pol, false},
		{"legacy/prefix-id", rec(machine.OriginCreated, testBranch, ""), pol, true},
		{"legacy/other-name", rec(machine.OriginCreated, "feature/login", ""), pol, false},
		{"legacy/prefix-changed", rec(machine.OriginCreated, testBranch, ""), other, false},
		{"legacy/other-prefix", rec(machine.OriginCreated, "wt/"+testID, ""), other, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := machine.BranchOwned(tt.rec, tt.pol); got != tt.want {
				t.Errorf("BranchOwned = %v, want %v", got, tt.want)
			}
			want := machine.BranchNotCreated
			if tt.want || tt.rec.Branch == "" {
				want = ""
			}
			if got := machine.BranchKeptReason(tt.rec, tt.pol); got != want {
				t.Errorf("BranchKeptReason = %q, want %q", got, want)
			}
		})
	}
}

// TestSettlementKeepsBranchNotCreated: a vanished tree's record settles
// with its branch deleted only when custody created it; one made on an
// existing branch keeps it, saying so.
func TestSettlementKeepsBranchNotCreated(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		origin machine.BranchOrigin
		branch string
		reason string
	}{
		{"named", machine.BranchOriginCreated, machine.SettleBranchDelete, ""},
		{"existing", machine.BranchOriginExisting, machine.SettleBranchKeep, machine.BranchNotCreated},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := removableRecord()
			rec.Branch, rec.BranchOrigin = "feature/login", tt.origin
			s, r := machine.DecideSettlement(rec, vanishedObs(headCommit, true, headCommit), machine.DefaultPolicy())
			if r != nil {
				t.Fatalf("DecideSettlement refused: %v", r)
			}
			if s.Branch != tt.branch || s.BranchReason != tt.reason {
				t.Errorf("branch %q (%q), want %q (%q)", s.Branch, s.BranchReason, tt.branch, tt.reason)
			}
		})
	}
}
