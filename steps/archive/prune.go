package archive

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/proof"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/steps/failpoint"
	"github.com/custody-sh/custody/store"
)

// ArchivePruneItem is prune's verdict on one archive directory.
type ArchivePruneItem struct {
	Name    string           `json:"name"`
	Dir     string           `json:"dir"`
	Action  machine.Action   `json:"action"`
	Outcome machine.Outcome  `json:"outcome,omitempty"`
	Refusal *machine.Refusal `json:"refusal,omitempty"`
}

// ArchivePruneResult is what `custody archive prune` found and did.
type ArchivePruneResult struct {
	Root    string             `json:"root"`
	Items   []ArchivePruneItem `json:"items"`
	Skipped []string           `json:"skipped"`
}

// Pending reports whether an archive named with --apply was not pruned.
func (r ArchivePruneResult) Pending() bool {
	for _, it := range r.Items {
		if it.Outcome == machine.OutcomeRefused {
			return true
		}
	}
	return false
}

// assessPrune observes the archive directory dir and decides (the remotes
// asked, once, only when every local check passed).
func assessPrune(ctx context.Context, e *steps.Env, dir string, view **proof.RemoteView) (machine.ArchivePruneObservation, machine.ArchiveManifest, *machine.Refusal, error) {
	obs := machine.ArchivePruneObservation{Dir: observe.ObserveArchiveDir(dir)}
	m, _ := machine.CheckArchive(obs.Dir)
	if m.Path != "" {
		ok, err := present(m.Path)
		if err != nil {
			obs.TreeErr = err.Error()
		}
		obs.TreePresent = ok
	}
	if machine.ArchivePruneNeedsRemote(obs) {
		if *view == nil {
			v, err := proof.Advertise(ctx, e.Git, e.Repo)
			if err != nil {
				return obs, m, nil, err
			}
			*view = v
		}
		rem := &machine.ArchivePruneRemote{}
		for _, f := range (*view).Failures {
			rem.Unavailable = append(rem.Unavailable, f.Remote)
		}
		if len(rem.Unavailable) == 0 {
			commits := append(slices.Clone(m.Commits), m.Head)
			var err error
			if rem.NotOnRemote, err = observe.CommitsNotOnRemote(ctx, e.Git, e.Repo, commits, *view); err != nil {
				return obs, m, nil, err
			}
		}
		obs.Remote = rem
	}
	m, r := machine.DecideArchivePrune(obs)
	return obs, m, r, nil
}

// PruneArchives assesses every archive directory of this repository under
// the archives root (a name starting with "." is a capture's scratch and
// is skipped) and, for each exact name in apply, re-reads and re-assesses
// it immediately before deleting it: prune intent, every recorded file,
// the manifest last, then a non-recursive rmdir, so an entry that
// appeared meanwhile is kept and refuses. It is idempotent.
func PruneArchives(ctx context.Context, e *steps.Env, apply []string) (ArchivePruneResult, error) {
	root, err := ArchivesRoot()
	if err != nil {
		return ArchivePruneResult{}, err
	}
	repoID, err := e.Store.RepositoryID()
	if err != nil {
		return ArchivePruneResult{}, err
	}
	res := ArchivePruneResult{Root: filepath.Join(root, repoID), Items: []ArchivePruneItem{}, Skipped: []string{}}
	ents, err := os.ReadDir(res.Root)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return res, err
	}
	var view *proof.RemoteView
	names := map[string]bool{}
	for _, en := range ents {
		if strings.HasPrefix(en.Name(), ".") {
			res.Skipped = append(res.Skipped, en.Name())
			continue
		}
		names[en.Name()] = true
		if slices.Contains(apply, en.Name()) {
			continue
		}
		dir := filepath.Join(res.Root, en.Name())
		_, _, r, err := assessPrune(ctx, e, dir, &view)
		if err != nil {
			return res, err
		}
		it := ArchivePruneItem{Name: en.Name(), Dir: dir, Action: machine.ActionRemove, Refusal: r}
		if r != nil {
			it.Action = machine.ActionKeep
		}
		res.Items = append(res.Items, it)
	}
	for _, name := range apply {
		dir := filepath.Join(res.Root, name)
		it := ArchivePruneItem{Name: name, Dir: dir, Action: machine.ActionRemove}
		if !names[name] || strings.ContainsRune(name, '/') {
			it.Outcome, it.Refusal = machine.OutcomeRefused, machine.NoArchiveDirToPruneRefusal(dir, name, res.Root)
			res.Items = append(res.Items, it)
			continue
		}
		it.Outcome, it.Refusal, err = pruneOne(ctx, e, dir, &view)
		if err != nil {
			return res, err
		}
		if it.Refusal != nil {
			it.Action = machine.ActionKeep
		}
		res.Items = append(res.Items, it)
	}
	return res, nil
}

// pruneOne re-assesses the archive in dir and, when it may go, deletes it
// under a prune intent.
func pruneOne(ctx context.Context, e *steps.Env, dir string, view **proof.RemoteView) (machine.Outcome, *machine.Refusal, error) {
	_, m, r, err := assessPrune(ctx, e, dir, view)
	if err != nil || r != nil {
		return machine.OutcomeRefused, r, err
	}
	a, err := LoadArchive(e, m.ID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && a.Dir != dir) {
		return machine.OutcomeRefused, machine.UnrecordedArchiveToPruneRefusal(m.ID, dir), nil
	}
	if err != nil {
		return "", nil, err
	}
	manifestBytes := observe.ObserveArchiveDir(dir).Manifest
	in := &machine.ArchiveIntent{Kind: machine.IntentArchivePrune, Holder: e.Holder, At: e.Now().UTC(), Dir: a.Dir}
	a, err = fireArchive(ctx, e, a, machine.TriggerPrune, machine.ArchiveFiring{Intent: in})
	if err != nil {
		var ref *machine.Refusal
		if errors.As(err, &ref) {
			return machine.OutcomeRefused, ref, nil
		}
		return "", nil, err
	}
	failpoint.At("archive/prune-after-intent")
	if r, err := deleteArchive(a.Dir, manifestBytes); err != nil || r != nil {
		return machine.OutcomeRefused, r, err
	}
	if _, err := fireArchive(ctx, e, a, machine.TriggerPruned, machine.ArchiveFiring{DirGone: true}); err != nil {
		return "", nil, err
	}
	return machine.OutcomeRemoved, nil, nil
}

// deleteArchive deletes the archive in dir: the manifest on disk must equal
// want (the one assessed; nil on resume, when any valid manifest names what
// to delete), then each recorded regular file, the manifest last, then the
// directory with a non-recursive rmdir. An entry the manifest does not
// name stays, and the rmdir refuses.
func deleteArchive(dir string, want []byte) (*machine.Refusal, error) {
	obs := observe.ObserveArchiveDir(dir)
	if obs.Symlink {
		return machine.ArchiveBecameSymlinkRefusal(dir), nil
	}
	if obs.Manifest != nil {
		if want != nil && !bytes.Equal(obs.Manifest, want) {
			return machine.ManifestChangedBeforeDeleteRefusal(dir), nil
		}
		m, r := machine.ParseArchiveManifest(dir, obs.Manifest)
		if r != nil {
			return r, nil
		}
		for _, f := range m.Files {
			p := filepath.Join(dir, f.Name)
			fi, err := os.Lstat(p)
			if errors.Is(err, os.ErrNotExist) {
				continue // deleted by an interrupted prune
			}
			if err != nil {
				return nil, err
			}
			if !fi.Mode().IsRegular() {
				return machine.ArchiveFileNotRegularRefusal(dir, p), nil
			}
			if err := os.Remove(p); err != nil {
				return nil, err
			}
			failpoint.At("archive/prune-during-delete")
		}
		if err := os.Remove(filepath.Join(dir, machine.ArchiveManifestName)); err != nil {
			return nil, err
		}
	}
	if err := os.Remove(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return machine.ArchiveHoldsUnnamedRefusal(dir, err), nil
	}
	return nil, steps.SyncDir(filepath.Dir(dir))
}
