package archive

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/custody-sh/custody/machine"
	json "github.com/custody-sh/custody/machine/bytejson"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/steps/beneath"
	"github.com/custody-sh/custody/steps/failpoint"
	"github.com/custody-sh/custody/store"
)

// ArchiveStripItem is a strip's verdict on one archive directory: the
// build-output directories its patch holds that a strip leaves out.
type ArchiveStripItem struct {
	Name    string                 `json:"name"`
	Dir     string                 `json:"dir"`
	Strip   []machine.DiscardedDir `json:"strip"`
	Outcome machine.Outcome        `json:"outcome,omitempty"`
	Refusal *machine.Refusal       `json:"refusal,omitempty"`
}

// ArchiveStripResult is what `custody archive prune --strip-build-output`
// found and did. It never deletes an archive.
type ArchiveStripResult struct {
	Root    string             `json:"root"`
	Items   []ArchiveStripItem `json:"items"`
	Skipped []string           `json:"skipped"`
}

// Pending reports whether an archive named with --apply was not stripped.
func (r ArchiveStripResult) Pending() bool {
	return slices.ContainsFunc(r.Items, func(it ArchiveStripItem) bool { return it.Outcome == machine.OutcomeRefused })
}

// stripWork is one reconstruction of an archive's trees in a scratch
// repository: HEAD's tree and the tree of its files (HEAD's with the
// patch applied, checked to equal worktree_tree).
type stripWork struct {
	git   func(env []string, stdin []byte, args ...string) ([]byte, error)
	dir   string
	index string
}

// assessStrip observes the archive in dir and plans its strip, working in
// work (a directory of custody's own that it creates): the manifest as
// read, the paths to strip, or a refusal. The paths are what the tree's
// own classification finds over the facts it was captured with
// (machine.PlanArchiveStrip), with the approved disposable patterns a
// tree on disk is classified with now.
func assessStrip(ctx context.Context, e *steps.Env, dir, work string) ([]byte, machine.ArchiveManifest, []machine.DiscardedDir, *stripWork, *machine.Refusal, error) {
	obs := machine.ArchivePruneObservation{Dir: observe.ObserveArchiveDir(dir)}
	m, _ := machine.CheckArchive(obs.Dir)
	if m.Path != "" {
		ok, err := present(m.Path)
		if err != nil {
			obs.TreeErr = err.Error()
		}
		obs.TreePresent = ok
	}
	m, r := machine.DecideArchiveStrip(obs)
	if r != nil {
		return nil, m, nil, nil, r, nil
	}
	w, r, err := rebuildArchiveTree(ctx, e, dir, m, work)
	if err != nil || r != nil {
		return nil, m, nil, nil, r, err
	}
	facts, err := observe.ObserveArchiveStrip(ctx, e.Git, w.dir, m)
	if err != nil {
		return nil, m, nil, nil, nil, err
	}
	disposable, err := e.Disposable()
	if err != nil {
		return nil, m, nil, nil, nil, err
	}
	return obs.Dir.Manifest, m, machine.PlanArchiveStrip(facts, disposable), w, nil, nil
}

// rebuildArchiveTree makes a scratch repository in work holding HEAD's
// tree (this repository's and the original one's objects borrowed, or the bundle's
// prerequisites fetched from the recorded remotes and the bundle fetched,
// as a restore does) and the archive's tree: HEAD's with dirty.patch
// applied in a scratch index, which must equal worktree_tree.
func rebuildArchiveTree(ctx context.Context, e *steps.Env, dir string, m machine.ArchiveManifest, work string) (*stripWork, *machine.Refusal, error) {
	retry := machine.ArchiveVerifyRetry(dir)
	if err := os.MkdirAll(work, 0o700); err != nil {
		return nil, nil, err
	}
	w := &stripWork{dir: filepath.Join(work, "git"), index: filepath.Join(work, "index")}
	var alt []string
	for _, c := range []string{e.Repo.CommonDir, m.CommonDir} {
		if objs := filepath.Join(c, "objects"); c != "" && isDir(objs) && !slices.Contains(alt, objs) {
			alt = append(alt, objs)
		}
	}
	if _, err := observe.InitScratch(ctx, e.Git, w.dir, gitfiles.ObjectFormat(m.ObjectFormat), alt...); err != nil {
		return nil, nil, err
	}
	w.git = func(env []string, stdin []byte, args ...string) ([]byte, error) {
		return e.Git.RunWith(ctx, "/", env, stdin, append([]string{"--git-dir=" + w.dir, "-c", "core.attributesFile=/dev/null",
			"-c", "apply.whitespace=nowarn", "-c", "core.autocrlf=false"}, args...)...)
	}
	if _, err := w.git(nil, nil, "cat-file", "-e", m.HeadTree+"^{tree}"); err != nil {
		_ = fetchPrerequisites(m, func(stdin []byte, env []string, args ...string) ([]byte, error) { return w.git(env, stdin, args...) })
		if m.HasBundle() {
			ref := bundleRef(m.Branch)
			_, _ = w.git(nil, nil, "fetch", "--quiet", "--no-tags", filepath.Join(dir, machine.ArchiveBundleName), "+"+ref+":"+ref)
		}
		if _, err := w.git(nil, nil, "cat-file", "-e", m.HeadTree+"^{tree}"); err != nil {
			return nil, machine.ArchiveHeadTreeGoneRefusal(dir, retry, m.HeadTree, m.ID), nil
		}
	}
	env := []string{"GIT_INDEX_FILE=" + w.index}
	if _, err := w.git(env, nil, "read-tree", m.HeadTree); err != nil {
		return nil, nil, fmt.Errorf("read HEAD's tree: %w", err)
	}
	patch := filepath.Join(dir, machine.ArchivePatchName)
	if fi, err := os.Stat(patch); err == nil && fi.Size() > 0 {
		if _, err := w.git(env, nil, "apply", "--cached", "--binary", "--", patch); err != nil {
			return nil, machine.PatchNotApplyingRefusal(patch, retry, err), nil
		}
	}
	out, err := w.git(env, nil, "write-tree")
	if err != nil {
		return nil, nil, err
	}
	if got := strings.TrimSpace(string(out)); got != m.WorktreeTree {
		return nil, machine.PatchTreeMismatchRefusal(patch, retry, got, m.WorktreeTree), nil
	}
	return w, nil, nil
}

// StripArchives assesses every archive directory of this repository for
// build output its patch holds (what the tree's own classification
// recognises, machine.FindBuildOutput) and, for each exact name in apply, strips it:
// never deleting an archive, only rewriting its patch without those
// directories under a strip intent (relocating), in a scratch directory
// beside it, verified, then swapped into place. It is idempotent.
func StripArchives(ctx context.Context, e *steps.Env, apply []string) (ArchiveStripResult, error) {
	root, err := ArchivesRoot()
	if err != nil {
		return ArchiveStripResult{}, err
	}
	repoID, err := e.Store.RepositoryID()
	if err != nil {
		return ArchiveStripResult{}, err
	}
	res := ArchiveStripResult{Root: filepath.Join(root, repoID), Items: []ArchiveStripItem{}, Skipped: []string{}}
	ents, err := os.ReadDir(res.Root)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return res, err
	}
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
		it := ArchiveStripItem{Name: en.Name(), Dir: dir, Strip: []machine.DiscardedDir{}}
		tmp, err := os.MkdirTemp("", "custody-strip-")
		if err != nil {
			return res, err
		}
		_, _, dirs, _, r, err := assessStrip(ctx, e, dir, tmp)
		os.RemoveAll(tmp)
		if err != nil {
			return res, err
		}
		it.Refusal = r
		if dirs != nil {
			it.Strip = dirs
		}
		res.Items = append(res.Items, it)
	}
	for _, name := range apply {
		dir := filepath.Join(res.Root, name)
		it := ArchiveStripItem{Name: name, Dir: dir, Strip: []machine.DiscardedDir{}}
		if !names[name] || strings.ContainsRune(name, '/') {
			it.Outcome, it.Refusal = machine.OutcomeRefused, machine.NoArchiveDirToStripRefusal(dir, name, res.Root)
			res.Items = append(res.Items, it)
			continue
		}
		if it.Outcome, it.Strip, it.Refusal, err = stripOne(ctx, e, dir); err != nil {
			return res, err
		}
		res.Items = append(res.Items, it)
	}
	return res, nil
}

// stripOne re-assesses the archive in dir and, when its patch holds build
// output it recognises, rewrites it under a strip intent.
func stripOne(ctx context.Context, e *steps.Env, dir string) (machine.Outcome, []machine.DiscardedDir, *machine.Refusal, error) {
	none := []machine.DiscardedDir{}
	tmp, err := os.MkdirTemp("", "custody-strip-")
	if err != nil {
		return "", none, nil, err
	}
	before, m, dirs, _, r, err := assessStrip(ctx, e, dir, tmp)
	os.RemoveAll(tmp)
	if err != nil || r != nil {
		return machine.OutcomeRefused, none, r, err
	}
	a, err := LoadArchive(e, m.ID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && a.Dir != dir) {
		return machine.OutcomeRefused, none, machine.UnrecordedArchiveToStripRefusal(m.ID, dir), nil
	}
	if err != nil {
		return "", none, nil, err
	}
	if r, err := sealedManifest(e, dir, m); err != nil || r != nil {
		return machine.OutcomeRefused, none, r, err
	}
	if len(dirs) == 0 {
		return machine.OutcomeAlreadyDone, none, nil, nil
	}
	in := &machine.ArchiveIntent{Kind: machine.IntentArchiveStrip, Holder: e.Holder, At: e.Now().UTC(),
		Scratch: filepath.Join(filepath.Dir(dir), ".scratch-"+a.ID), Dir: a.Dir}
	a, err = fireArchive(ctx, e, a, machine.TriggerStrip, machine.ArchiveFiring{Intent: in})
	if err != nil {
		var ref *machine.Refusal
		if errors.As(err, &ref) {
			return machine.OutcomeRefused, none, ref, nil
		}
		return "", none, nil, err
	}
	failpoint.At("archive/strip-after-intent")
	if err := writeStripped(ctx, e, a, before, dirs); err != nil {
		return "", dirs, nil, fmt.Errorf("strip %s: %w (custody resume undoes it)", a.ID, err)
	}
	failpoint.At("archive/strip-after-scratch")
	r, err = swapStripped(a)
	if err != nil || r != nil {
		return machine.OutcomeRefused, dirs, r, err
	}
	o, err := settleStrip(ctx, e, a)
	if err != nil {
		return "", dirs, nil, err
	}
	return o, dirs, nil, nil
}

// writeStripped writes the new patch and manifest of a into its intent's
// scratch directory: the archive's tree rebuilt there, the entries below
// dirs removed from the scratch index, the patch from HEAD's tree to the
// result, verified by applying it to HEAD's tree afresh; the manifest last
// (written beside, fsynced, then renamed into the scratch), so a scratch
// manifest is always a complete one. The manifest on disk must still be
// before.
func writeStripped(ctx context.Context, e *steps.Env, a machine.Archive, before []byte, want []machine.DiscardedDir) error {
	root, sname, err := openArchivesDir(a)
	if err != nil {
		return err
	}
	defer root.Close()
	scratch := a.Intent.Scratch
	if err := root.Mkdir(sname, 0o700); err != nil {
		return err
	}
	_, m, dirs, w, r, err := assessStrip(ctx, e, a.Dir, filepath.Join(scratch, "work"))
	if err != nil {
		return err
	}
	if r != nil {
		return r
	}
	if !slices.Equal(dirs, want) {
		return fmt.Errorf("the build output found changed between two readings of %s", a.Dir)
	}
	env := []string{"GIT_INDEX_FILE=" + w.index}
	ls, err := w.git(env, nil, "ls-files", "-z")
	if err != nil {
		return err
	}
	// Mode 0 in --index-info removes the path (no work tree needed).
	var drop bytes.Buffer
	var kept []string
	zero := strings.Repeat("0", len(m.HeadTree))
	for _, p := range bytes.Split(bytes.TrimSuffix(ls, []byte{0}), []byte{0}) {
		if slices.ContainsFunc(dirs, func(d machine.DiscardedDir) bool {
			return string(p) == d.Path || strings.HasPrefix(string(p), d.Path+"/")
		}) {
			fmt.Fprintf(&drop, "0 %s\t%s\x00", zero, p)
		} else if len(p) > 0 {
			kept = append(kept, string(p))
		}
	}
	if _, err := w.git(env, drop.Bytes(), "update-index", "-z", "--index-info"); err != nil {
		return fmt.Errorf("leave the build output out of the scratch index: %w", err)
	}
	out, err := w.git(env, nil, "write-tree")
	if err != nil {
		return err
	}
	tree := strings.TrimSpace(string(out))
	patch := filepath.Join(scratch, machine.ArchivePatchName)
	if err := observe.WritePatch(ctx, e.Git, w.dir, m.HeadTree, tree, patch); err != nil {
		return err
	}
	if err := fsyncFile(patch); err != nil {
		return err
	}
	// Verify: HEAD's tree with the new patch is the new tree.
	check := []string{"GIT_INDEX_FILE=" + w.index + "-check"}
	if _, err := w.git(check, nil, "read-tree", m.HeadTree); err != nil {
		return err
	}
	fi, err := os.Stat(patch)
	if err != nil {
		return err
	}
	if fi.Size() > 0 {
		if _, err := w.git(check, nil, "apply", "--cached", "--binary", "--", patch); err != nil {
			return fmt.Errorf("the new patch does not apply to HEAD's tree: %w", err)
		}
	}
	if out, err = w.git(check, nil, "write-tree"); err != nil {
		return err
	}
	if got := strings.TrimSpace(string(out)); got != tree {
		return fmt.Errorf("HEAD's tree with the new patch is %s, want %s", got, tree)
	}
	sum, err := observe.SHA256File(patch)
	if err != nil {
		return err
	}
	body, err := json.MarshalIndent(machine.StrippedManifest(m, dirs, tree, kept, sum, fi.Size()), "", "  ")
	if err != nil {
		return err
	}
	tmp := sname + "/" + machine.ArchiveManifestName + ".new"
	if err := writeSyncedBeneath(root, tmp, append(body, '\n')); err != nil {
		return err
	}
	if now := observe.ObserveArchiveDir(a.Dir).Manifest; !bytes.Equal(now, before) {
		return machine.ManifestChangedBeforeSwapRefusal(a.Dir)
	}
	if err := root.Rename(tmp, sname+"/"+machine.ArchiveManifestName); err != nil {
		return err
	}
	return root.Sync(sname)
}

// openArchivesDir opens the directory holding archive a and its strip's
// scratch (the repository's archives directory) as the root every write
// of the strip goes through, and returns the scratch's name in it.
func openArchivesDir(a machine.Archive) (*beneath.Root, string, error) {
	parent := filepath.Dir(a.Dir)
	if filepath.Dir(a.Intent.Scratch) != parent {
		return nil, "", fmt.Errorf("the strip's scratch %s is not beside archive %s", a.Intent.Scratch, a.Dir)
	}
	root, err := beneath.Open(parent)
	if err != nil {
		return nil, "", err
	}
	return root, filepath.Base(a.Intent.Scratch), nil
}

// writeSyncedBeneath writes data to the new file name below root, fsyncs
// it and its directory.
func writeSyncedBeneath(root *beneath.Root, name string, data []byte) error {
	f, err := root.Create(name, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return root.Sync(path.Dir(name))
}

// swapStripped moves the new patch, then the new manifest, from the
// intent's scratch into the archive directory, each rename fsynced; a
// rename already done is skipped, so it is what resume repeats. The
// archive's manifest must still be the one its record was sealed with.
func swapStripped(a machine.Archive) (*machine.Refusal, error) {
	scratch := a.Intent.Scratch
	root, sname, err := openArchivesDir(a)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	aname := filepath.Base(a.Dir)
	sum, err := observe.SHA256File(filepath.Join(a.Dir, machine.ArchiveManifestName))
	if err != nil {
		return nil, err
	}
	if sum != a.Manifest {
		return machine.ManifestSwapDigestRefusal(a.Dir, sum, a.ID, a.Manifest), nil
	}
	newPatch := filepath.Join(scratch, machine.ArchivePatchName)
	if ok, err := present(newPatch); err != nil {
		return nil, err
	} else if ok {
		if err := root.Rename(sname+"/"+machine.ArchivePatchName, aname+"/"+machine.ArchivePatchName); err != nil {
			return nil, err
		}
		if err := root.Sync(aname); err != nil {
			return nil, err
		}
	}
	failpoint.At("archive/strip-after-patch")
	if err := root.Rename(sname+"/"+machine.ArchiveManifestName, aname+"/"+machine.ArchiveManifestName); err != nil {
		return nil, err
	}
	if err := root.Sync(aname); err != nil {
		return nil, err
	}
	failpoint.At("archive/strip-after-manifest")
	return nil, nil
}

// settleStrip ends a strip: the scratch removed, the archive directory
// read back and verified with whatever manifest it holds now (the new one
// once swapped: stripped; the sealed one otherwise: abandoned), and the
// record back to finished with that manifest's digest.
func settleStrip(ctx context.Context, e *steps.Env, a machine.Archive) (machine.Outcome, error) {
	t, err := settleStripTrigger(ctx, e, a)
	if t == machine.TriggerStripAbandoned {
		return machine.OutcomeSteppedBack, err
	}
	return machine.OutcomeRelocated, err
}

// settleStripTrigger is settleStrip's work; it returns the trigger fired.
func settleStripTrigger(ctx context.Context, e *steps.Env, a machine.Archive) (machine.Trigger, error) {
	if err := removeScratch(a); err != nil {
		return "", err
	}
	scratch, err := present(a.Intent.Scratch)
	if err != nil {
		return "", err
	}
	m, problems := machine.CheckArchive(observe.ObserveArchiveDir(a.Dir))
	if len(problems) > 0 {
		return "", &problems[0]
	}
	if m.ID != a.ID || m.Head != a.Head {
		return "", fmt.Errorf("%s names archive %s at %s, the record %s at %s", a.Dir, m.ID, m.Head, a.ID, a.Head)
	}
	sum, err := observe.SHA256File(filepath.Join(a.Dir, machine.ArchiveManifestName))
	if err != nil {
		return "", err
	}
	tree, err := present(a.Path)
	if err != nil {
		return "", err
	}
	t := machine.TriggerStripped
	if sum == a.Manifest {
		t = machine.TriggerStripAbandoned
	}
	_, err = fireArchive(ctx, e, a, t, machine.ArchiveFiring{Verified: true, Manifest: sum, ScratchGone: !scratch, TreeGone: !tree})
	return t, err
}

// fsyncFile fsyncs the file p.
func fsyncFile(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
