package archive

import (
	"context"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/proof"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/steps/quarantine"
)

// Removal is the archive feature as removal asks for it (steps.Archives):
// custody.Register (steps/custody) registers it in steps.Env.Archives.
type Removal struct{}

var _ steps.Archives = Removal{}

// Proof looks for proof kind archive of rec at head (ArchiveProof).
func (Removal) Proof(ctx context.Context, e *steps.Env, rec machine.Record, head string, view *proof.RemoteView) (*machine.Proof, *machine.Refusal, error) {
	return ArchiveProof(ctx, e, rec, head, view)
}

// Archived is the set of record ids some active archive is of
// (archivedRecords).
func (Removal) Archived(e *steps.Env) map[string]bool { return archivedRecords(e) }

// Contents lists what a tree removed on the archive proof p may hold
// (archiveManifest).
func (Removal) Contents(ctx context.Context, e *steps.Env, p *machine.Proof) (quarantine.Manifest, error) {
	return archiveManifest(ctx, e, p)
}

// SoleCopy records the archive of a removed tree as the sole copy of its
// work (archiveSoleCopy).
func (Removal) SoleCopy(ctx context.Context, e *steps.Env, rec machine.Record) error {
	return archiveSoleCopy(ctx, e, rec)
}

// Capture archives the tree of record id (CaptureArchive).
func (Removal) Capture(ctx context.Context, e *steps.Env, id string) (steps.CapturedArchive, error) {
	a, err := CaptureArchive(ctx, e, id)
	if err != nil {
		return steps.CapturedArchive{}, err
	}
	return steps.CapturedArchive{ID: a.ID, Dir: a.Dir, Head: a.Head, Commits: a.Commits, Files: a.Files}, nil
}

// Workflow is the archive kind's part in the runner, for
// steps.Env.Workflows.
func Workflow() steps.Resumer { return archiveWorkflow().Resumer() }
