package archive

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/store"
)

// present reports whether p exists (lstat); an lstat that fails otherwise
// is an error: unknown is never absent.
func present(p string) (bool, error) {
	if p == "" {
		return false, nil
	}
	_, err := os.Lstat(p)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return false, fmt.Errorf("lstat %s: %w", p, err)
}

// observeArchiveResume observes what resume needs of a.
func observeArchiveResume(a machine.Archive) (machine.ArchiveResumeObservation, error) {
	var obs machine.ArchiveResumeObservation
	var err error
	if a.Intent == nil {
		return obs, nil
	}
	if obs.ScratchPresent, err = present(a.Intent.Scratch); err != nil {
		return obs, err
	}
	if obs.DirPresent, err = present(a.Intent.Dir); err != nil {
		return obs, err
	}
	if obs.DirPresent && a.Intent.Kind != machine.IntentArchiveStrip {
		_, obs.Problems = machine.CheckArchive(observe.ObserveArchiveDir(a.Intent.Dir))
	}
	if a.Intent.Kind == machine.IntentArchiveStrip && a.Intent.Scratch != "" {
		if obs.StripReady, err = present(filepath.Join(a.Intent.Scratch, machine.ArchiveManifestName)); err != nil {
			return obs, err
		}
	}
	return obs, nil
}

// removeScratch removes a capture's scratch directory: only a real
// directory named .scratch-<id> beside the archive's own directory, never
// anything else the intent might name.
func removeScratch(a machine.Archive) error {
	s := a.Intent.Scratch
	if filepath.Dir(s) != filepath.Dir(a.Intent.Dir) || filepath.Base(s) != ".scratch-"+a.ID {
		return machine.ArchiveScratchUnsafeRefusal(a.ID, s)
	}
	fi, err := os.Lstat(s)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() || fi.Mode()&fs.ModeSymlink != 0 {
		return os.Remove(s) // a link or a file: the entry itself, never what it points at
	}
	return os.RemoveAll(s)
}

// archiveWorkflow is the archive kind's part in the resume runner: an
// interrupted capture whose directory was renamed into place is sealed;
// one whose directory is absent loses its scratch and is discarded.
func archiveWorkflow() steps.Workflow[machine.Archive] {
	return steps.Workflow[machine.Archive]{
		Kind: machine.KindArchive,
		TakeOver: func(ctx context.Context, e *steps.Env, a machine.Archive) (machine.Archive, error) {
			in := *a.Intent
			in.Holder = e.Holder
			return fireArchive(ctx, e, a, machine.TriggerTakeOver, machine.ArchiveFiring{Intent: &in})
		},
		Decide: func(_ context.Context, _ *steps.Env, a machine.Archive) (string, *machine.Refusal, error) {
			obs, err := observeArchiveResume(a)
			if err != nil {
				return "", nil, err
			}
			action, r := machine.DecideArchiveResume(a, obs)
			return action, r, nil
		},
		Continue: map[string]func(context.Context, *steps.Env, machine.Archive) ([]steps.ResumeItem, error){
			machine.ArchiveResumeSeal: func(ctx context.Context, e *steps.Env, a machine.Archive) ([]steps.ResumeItem, error) {
				if _, err := sealArchive(ctx, e, a); err != nil {
					return nil, err
				}
				return []steps.ResumeItem{{ID: a.ID, Outcome: machine.OutcomeActivated}}, nil
			},
			machine.ArchiveResumePrune: func(ctx context.Context, e *steps.Env, a machine.Archive) ([]steps.ResumeItem, error) {
				if r, err := deleteArchive(a.Dir, nil); err != nil || r != nil {
					if r != nil {
						return []steps.ResumeItem{{ID: a.ID, Outcome: machine.OutcomeRefused, Refusal: r}}, nil
					}
					return nil, err
				}
				if _, err := fireArchive(ctx, e, a, machine.TriggerPruned, machine.ArchiveFiring{DirGone: true}); err != nil {
					return nil, err
				}
				return []steps.ResumeItem{{ID: a.ID, Outcome: machine.OutcomeRemoved}}, nil
			},
			machine.ArchiveResumePruned: func(ctx context.Context, e *steps.Env, a machine.Archive) ([]steps.ResumeItem, error) {
				if _, err := fireArchive(ctx, e, a, machine.TriggerPruned, machine.ArchiveFiring{DirGone: true}); err != nil {
					return nil, err
				}
				return []steps.ResumeItem{{ID: a.ID, Outcome: machine.OutcomeRemoved}}, nil
			},
			machine.ArchiveResumeSwap: func(ctx context.Context, e *steps.Env, a machine.Archive) ([]steps.ResumeItem, error) {
				if r, err := swapStripped(a); err != nil || r != nil {
					if r != nil {
						return []steps.ResumeItem{{ID: a.ID, Outcome: machine.OutcomeRefused, Refusal: r}}, nil
					}
					return nil, err
				}
				o, err := settleStrip(ctx, e, a)
				if err != nil {
					return nil, err
				}
				return []steps.ResumeItem{{ID: a.ID, Outcome: o}}, nil
			},
			machine.ArchiveResumeUnstrip: func(ctx context.Context, e *steps.Env, a machine.Archive) ([]steps.ResumeItem, error) {
				o, err := settleStrip(ctx, e, a)
				if err != nil {
					return nil, err
				}
				return []steps.ResumeItem{{ID: a.ID, Outcome: o}}, nil
			},
			machine.ArchiveResumeDiscard: func(ctx context.Context, e *steps.Env, a machine.Archive) ([]steps.ResumeItem, error) {
				if err := removeScratch(a); err != nil {
					return nil, err
				}
				gone, err := present(a.Intent.Scratch)
				if err != nil {
					return nil, err
				}
				dir, err := present(a.Intent.Dir)
				if err != nil {
					return nil, err
				}
				if _, err := fireArchive(ctx, e, a, machine.TriggerDiscard, machine.ArchiveFiring{ScratchGone: !gone && !dir}); err != nil {
					return nil, err
				}
				return []steps.ResumeItem{{ID: a.ID, Outcome: machine.OutcomeDiscarded}}, nil
			},
		},
	}
}

// LoadArchive returns the archive record id of the store.
func LoadArchive(e *steps.Env, id string) (machine.Archive, error) {
	return store.Load[machine.Archive](e.Store, machine.KindArchive, id)
}
