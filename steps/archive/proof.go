package archive

import (
	"context"
	"fmt"
	"slices"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/proof"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/store"
)

// CoveringArchive returns the newest sealed archive of worktree record id
// whose HEAD is head, and false when there is none.
func CoveringArchive(e *steps.Env, id, head string) (machine.Archive, bool, error) {
	all, err := store.ListKind[machine.Archive](e.Store, machine.KindArchive)
	if err != nil {
		return machine.Archive{}, false, err
	}
	all = slices.DeleteFunc(all, func(a machine.Archive) bool {
		return a.Record != id || a.Head != head || a.State != machine.StateActive
	})
	if len(all) == 0 {
		return machine.Archive{}, false, nil
	}
	slices.SortFunc(all, func(a, b machine.Archive) int { return b.CreatedAt.Compare(a.CreatedAt) })
	return all[0], true, nil
}

// ArchiveProof looks for proof kind archive of rec at head against the
// fresh advertisement v: the newest sealed archive of rec at head,
// verified now (digests, the pack check, the sealed manifest), its bundle
// standing only on advertised commits, and the tree equal to its
// fingerprint. It returns nil, nil, nil when no archive covers rec.
func ArchiveProof(ctx context.Context, e *steps.Env, rec machine.Record, head string, v *proof.RemoteView) (*machine.Proof, *machine.Refusal, error) {
	a, ok, err := CoveringArchive(e, rec.ID, head)
	if err != nil || !ok {
		return nil, nil, err
	}
	c, err := VerifyArchive(ctx, e.Git, e, a.Dir)
	if err != nil {
		return nil, nil, fmt.Errorf("archive %s: %w", a.ID, err)
	}
	m, _ := machine.CheckArchive(observe.ObserveArchiveDir(a.Dir))
	obs := machine.ArchiveProofObservation{Archive: a, Manifest: m, Head: head}
	for i, p := range c.Problems {
		if p.Code == machine.CodeArchiveStale {
			obs.Fresh = &c.Problems[i]
		} else {
			obs.Problems = append(obs.Problems, p)
		}
	}
	if obs.Problems == nil && obs.Fresh == nil && c.Fresh != "equal" {
		obs.Fresh = machine.ArchiveUncomparedRefusal(rec.Path, a.ID, c.Fresh)
	}
	if obs.PrerequisitesPublished, err = observe.PrerequisitesPublished(ctx, e.Git, e.Repo, m.Prerequisites, v); err != nil {
		return nil, nil, err
	}
	p, r := machine.DecideArchiveProof(rec, obs)
	return p, r, nil
}
