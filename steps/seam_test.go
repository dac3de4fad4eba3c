package steps

import (
	"context"
	"errors"
	"testing"

	"github.com/custody-sh/custody/machine"
)

// TestUnregisteredFeaturesRefuse: an Env built without the resource or
// archive feature never provisions a declared resource or completes an
// archive-backed removal silently; with nothing for the feature to do it
// goes on, and it proves nothing by archive.
func TestUnregisteredFeaturesRefuse(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := &Env{}
	if outs, r, err := e.resources().Provision(ctx, e, machine.Record{ID: "a"}); err != nil || r != nil || outs != nil {
		t.Errorf("Provision with no resource declared = %v, %v, %v; want nothing done", outs, r, err)
	}
	e.Config.Resources = []machine.ResourceSpec{{Name: "db"}}
	if _, _, err := e.resources().Provision(ctx, e, machine.Record{ID: "a"}); !errors.Is(err, errNoResources) {
		t.Errorf("Provision of a declared resource without the feature = %v, want errNoResources", err)
	}
	if _, _, err := e.resources().Reclaim(ctx, e, "a/db", "fp"); !errors.Is(err, errNoResources) {
		t.Errorf("Reclaim without the feature = %v, want errNoResources", err)
	}

	if p, r, err := e.archives().Proof(ctx, e, machine.Record{ID: "a"}, "head", nil); p != nil || r != nil || err != nil {
		t.Errorf("Proof without the archive feature = %v, %v, %v; want none", p, r, err)
	}
	if err := e.archives().SoleCopy(ctx, e, machine.Record{ID: "a"}); err != nil {
		t.Errorf("SoleCopy of a removal without an archive proof = %v, want nil", err)
	}
	rec := machine.Record{ID: "a", Intent: &machine.Intent{Proof: &machine.Proof{Kind: machine.ProofArchive}}}
	if err := e.archives().SoleCopy(ctx, e, rec); !errors.Is(err, errNoArchives) {
		t.Errorf("SoleCopy of an archive-backed removal without the feature = %v, want errNoArchives", err)
	}
	if _, err := e.archives().Contents(ctx, e, &machine.Proof{Kind: machine.ProofArchive}); !errors.Is(err, errNoArchives) {
		t.Errorf("Contents without the feature = %v, want errNoArchives", err)
	}
	if _, err := e.archives().Capture(ctx, e, "a"); !errors.Is(err, errNoCapture) {
		t.Errorf("Capture without the feature = %v, want errNoCapture", err)
	}
}
