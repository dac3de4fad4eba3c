package machine_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/machine"
)

func TestProvingRemotes(t *testing.T) {
	const h = "0123456789abcdef0123456789abcdef01234567"
	by := func(kind machine.ProofKind, remote string) *machine.Proof {
		return &machine.Proof{Kind: kind, Remote: remote, Ref: "refs/heads/x", Head: h}
	}
	remove := func(p *machine.Proof) machine.PlanItem {
		return machine.PlanItem{Action: machine.ActionRemove, Head: h, Proof: p}
	}
	settle := func(p *machine.Proof) machine.PlanItem {
		return machine.PlanItem{Action: machine.ActionSettle, Proof: p, Settlement: &machine.Settlement{Head: h, Proven: p != nil}}
	}
	keep := machine.PlanItem{Action: machine.ActionKeep}
	for _, c := range []struct {
		name  string
		items []machine.PlanItem
		want  []string
	}{
		{"no items: every remote", nil, nil},
		{"only kept items: every remote", []machine.PlanItem{keep}, nil},
		{"one proof", []machine.PlanItem{remove(by(machine.ProofAncestry, "origin")), keep}, []string{"origin"}},
		{"several, sorted, once each", []machine.PlanItem{
			remove(by(machine.ProofAncestry, "upstream")),
			remove(by(machine.ProofSquashMerged, "origin")),
			remove(by(machine.ProofPatchEquivalent, "upstream")),
			settle(by(machine.ProofAncestry, "-odd name")),
		}, []string{"-odd name", "origin", "upstream"}},
		{"a settlement nothing proved: every remote", []machine.PlanItem{
			remove(by(machine.ProofAncestry, "origin")), settle(nil),
		}, nil},
		{"a settlement marked unproven though it carries a proof: every remote", []machine.PlanItem{
			remove(by(machine.ProofAncestry, "origin")),
			{Action: machine.ActionSettle, Proof: by(machine.ProofAncestry, "origin"), Settlement: &machine.Settlement{Head: h}},
		}, nil},
		{"an archive's proof: every remote", []machine.PlanItem{
			remove(by(machine.ProofAncestry, "origin")), remove(&machine.Proof{Kind: machine.ProofArchive, Ref: "a1", Head: h}),
		}, nil},
		{"a proof naming no remote: every remote", []machine.PlanItem{remove(by(machine.ProofAncestry, ""))}, nil},
		{"a removal without a proof: every remote", []machine.PlanItem{remove(nil)}, nil},
		{"a resource's destroy needs no remote", []machine.PlanItem{
			{Action: machine.ActionDestroy, Kind: machine.KindResource}, remove(by(machine.ProofAncestry, "origin")),
		}, []string{"origin"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := machine.ProvingRemotes(machine.Plan{Items: c.items})
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("ProvingRemotes (-want +got):\n%s", diff)
			}
		})
	}
}
