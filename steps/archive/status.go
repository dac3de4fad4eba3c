package archive

import (
	"context"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/steps"
)

// archiveClassification is what a capture of rec's tree (HEAD head)
// leaves out and records of its classification: the build output a
// removal would discard (archiveBuildOutput's answer) and the facts that
// answer was decided over beyond the tree's files (machine.CaptureStatus:
// the index against HEAD's tree, the directories status reported ignored
// whole), which a strip decides over later. A tree whose status cannot be
// read has neither: everything is archived, and the archive is never
// stripped.
func archiveClassification(ctx context.Context, e *steps.Env, rec machine.Record, head string) ([]machine.DiscardedDir, *machine.ArchiveStatus, error) {
	disposable, err := e.Disposable()
	if err != nil {
		return nil, nil, err
	}
	obs, _, err := e.ObserveRecord(ctx, rec, observe.Scope{Status: true, Disposable: disposable})
	if err != nil {
		return nil, nil, err
	}
	if obs.StatusErr != "" {
		return []machine.DiscardedDir{}, nil, nil
	}
	build := append([]machine.DiscardedDir{}, obs.Discarded...)
	index, headEnts, err := observe.IndexAndHead(ctx, e.Git, e.Repo, rec.Path, obs.AdminKey, head)
	if err != nil {
		return nil, nil, err
	}
	st := machine.CaptureStatus(headEnts, index, obs.Status.Ignored, build)
	return build, &st, nil
}
