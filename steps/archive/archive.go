package archive

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/custody-sh/custody/machine"
	json "github.com/custody-sh/custody/machine/bytejson"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/proof"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/steps/failpoint"
	"github.com/custody-sh/custody/store"
)

// ArchivesRoot returns where archives live: $XDG_DATA_HOME/custody/archives,
// or ~/.local/share/custody/archives when XDG_DATA_HOME is unset, so an
// archive outlives the repository it came from.
func ArchivesRoot() (string, error) {
	base := os.Getenv("XDG_DATA_HOME")
	if base == "" || !filepath.IsAbs(base) {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("archives root: neither XDG_DATA_HOME nor HOME is set: %w", err)
		}
		base = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(base, "custody", "archives"), nil
}

// ensurePrivateDir makes dir (one level: its parent exists) with mode
// 0700 unless it exists, and refuses a dir that is a symlink or not a
// directory.
func ensurePrivateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err == nil {
		if fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir() {
			return machine.ArchivesDirUnsafeRefusal(dir)
		}
		return nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("archives directory %s: %w", dir, err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("make %s: %w", dir, err)
	}
	return os.Chmod(dir, 0o700)
}

// ensureArchiveDir makes <root>/<repository-id>: the data home as any
// program would (0755 when missing), then custody/, archives/ and the
// repository's directory, each 0700 and never a symlink.
func ensureArchiveDir(root, repoID string) (string, error) {
	custody := filepath.Dir(root)
	if err := os.MkdirAll(filepath.Dir(custody), 0o755); err != nil {
		return "", fmt.Errorf("data home %s: %w", filepath.Dir(custody), err)
	}
	dir := filepath.Join(root, repoID)
	for _, d := range []string{custody, root, dir} {
		if err := ensurePrivateDir(d); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// ArchiveCreated is what `custody archive create` did.
type ArchiveCreated struct {
	ID      string   `json:"id"`
	Record  string   `json:"record"`
	Path    string   `json:"path"`
	Head    string   `json:"head"`
	Dir     string   `json:"dir"`
	Commits []string `json:"commits"`
	Files   int      `json:"files"`
	Nested  []string `json:"nested"`
}

// archiveTransition fires trigger t on an archive record.
func fireArchive(ctx context.Context, e *steps.Env, a machine.Archive, t machine.Trigger, f machine.ArchiveFiring) (machine.Archive, error) {
	f.Arc = a
	f.Now = e.Now().UTC()
	return steps.Fire(ctx, e, steps.Transition[machine.Archive, machine.ArchiveFiring]{
		Spec: machine.ArchiveSpec(),
		Next: func(to machine.State, t machine.Trigger, f machine.ArchiveFiring) machine.Archive {
			return machine.NextArchive(a, to, t, f)
		},
	}, a, t, f, string(t))
}

// archiveSource is what a capture observed before it committed its intent.
type archiveSource struct {
	rec     machine.Record
	head    string
	branch  string
	format  gitfiles.ObjectFormat
	view    *proof.RemoteView
	commits []string
	scan    observe.TreeScan
	// build is the build output the capture leaves out and lists, and
	// status the facts it was decided over (archiveClassification).
	build  []machine.DiscardedDir
	status *machine.ArchiveStatus
}

// observeForArchive reads everything a capture of rec needs, writing
// nothing: HEAD and its branch, the remotes' fresh advertisement, the
// commits HEAD adds over it, and the tree walked on the filesystem.
func observeForArchive(ctx context.Context, e *steps.Env, id string) (archiveSource, error) {
	var s archiveSource
	rec, err := e.Store.Get(id)
	if errors.Is(err, store.ErrNotFound) {
		return s, machine.NoRecordRefusal(id)
	}
	if err != nil {
		return s, err
	}
	s.rec = rec
	if rec.State != machine.StateActive && rec.State != machine.StateFinished {
		return s, machine.ArchiveWrongStateRefusal(id, rec)
	}
	fi, err := os.Lstat(rec.Path)
	if err != nil || !fi.IsDir() {
		return s, machine.ArchiveTreeMissingRefusal(id, rec.Path, err)
	}
	out, err := e.Git.Observe(ctx, rec.Path, "rev-parse", "--verify", "--end-of-options", "HEAD^{commit}")
	if err != nil {
		return s, machine.ArchiveHeadUnknownRefusal(id, rec.Path, err)
	}
	s.head = strings.TrimSpace(string(out))
	if out, err := e.Git.Observe(ctx, rec.Path, "symbolic-ref", "-q", "HEAD"); err == nil {
		s.branch = strings.TrimSpace(string(out))
	}
	if s.format, err = observe.ObjectFormatOf(ctx, e.Git, rec.Path); err != nil {
		return s, err
	}
	if s.view, err = proof.Advertise(ctx, e.Git, e.Repo); err != nil {
		return s, fmt.Errorf("archive %s: advertised refs: %w", id, err)
	}
	if s.commits, err = observe.UnpublishedCommits(ctx, e.Git, e.Repo, s.head, s.view); err != nil {
		return s, err
	}
	if s.build, s.status, err = archiveClassification(ctx, e, rec, s.head); err != nil {
		return s, err
	}
	leave := make([]string, 0, len(s.build))
	for _, d := range s.build {
		leave = append(leave, d.Path)
	}
	if s.scan, err = observe.ScanTreeLeaving(rec.Path, s.format, leave); err != nil {
		return s, err
	}
	if len(s.scan.Unsupported) > 0 {
		return s, machine.ArchiveUnsupportedRefusal(id, rec.Path, filepath.Join(rec.Path, filepath.FromSlash(s.scan.Unsupported[0].Path)), s.scan.UnsupportedText())
	}
	return s, nil
}

// CaptureArchive archives the tree of worktree record id: the commits its
// HEAD adds over the freshly advertised tips (commits.bundle), its files as
// they are on disk (dirty.patch over HEAD's tree, byte-exact, tracked,
// untracked and ignored), each nested repository as a tar image, and
// manifest.json, written last and fsynced, before the directory is renamed
// into place and sealed. The capture intent is committed before anything
// is written; a capture killed midway leaves only its scratch directory,
// which resume removes. The repository gains no ref and no object; the
// tree's index is not read or rewritten.
func CaptureArchive(ctx context.Context, e *steps.Env, id string) (ArchiveCreated, error) {
	src, err := observeForArchive(ctx, e, id)
	if err != nil {
		return ArchiveCreated{}, err
	}
	repoID, err := e.Store.RepositoryID()
	if err != nil {
		return ArchiveCreated{}, err
	}
	root, err := ArchivesRoot()
	if err != nil {
		return ArchiveCreated{}, err
	}
	repoDir, err := ensureArchiveDir(root, repoID)
	if err != nil {
		return ArchiveCreated{}, err
	}
	var rnd [4]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return ArchiveCreated{}, err
	}
	aid := id + "-" + hex.EncodeToString(rnd[:])
	in := &machine.ArchiveIntent{Kind: machine.IntentArchiveCapture, Holder: e.Holder, At: e.Now().UTC(),
		Scratch: filepath.Join(repoDir, ".scratch-"+aid), Dir: filepath.Join(repoDir, aid)}
	a := machine.Archive{ID: aid, Record: id, Path: src.rec.Path, Head: src.head}
	a, err = fireArchive(ctx, e, a, machine.TriggerCapture, machine.ArchiveFiring{Intent: in})
	if err != nil {
		return ArchiveCreated{}, err
	}
	failpoint.At("archive/after-intent")
	m, err := writeArchive(ctx, e, src, a, repoID)
	if err != nil {
		return ArchiveCreated{}, fmt.Errorf("archive %s of %s: %w (nothing counts until it is sealed; `custody resume` removes %s)", aid, id, err, in.Scratch)
	}
	failpoint.At("archive/before-seal")
	a, err = sealArchive(ctx, e, a)
	if err != nil {
		return ArchiveCreated{}, err
	}
	out := ArchiveCreated{ID: a.ID, Record: id, Path: a.Path, Head: a.Head, Dir: a.Dir, Commits: m.Commits, Files: len(src.scan.Files), Nested: src.scan.Nested}
	if out.Commits == nil {
		out.Commits = []string{}
	}
	if out.Nested == nil {
		out.Nested = []string{}
	}
	return out, nil
}

// writeArchive writes the archive of src into the intent's scratch
// directory and renames it into place: everything but the seal.
func writeArchive(ctx context.Context, e *steps.Env, src archiveSource, a machine.Archive, repoID string) (machine.ArchiveManifest, error) {
	scratch := a.Intent.Scratch
	if err := os.Mkdir(scratch, 0o700); err != nil {
		return machine.ArchiveManifest{}, err
	}
	work, out := filepath.Join(scratch, "work"), filepath.Join(scratch, "archive")
	if err := os.Mkdir(out, 0o700); err != nil {
		return machine.ArchiveManifest{}, err
	}
	gitDir := filepath.Join(work, "git")
	sourceObjects := filepath.Join(e.Repo.CommonDir, "objects")
	objects, err := observe.InitScratch(ctx, e.Git, gitDir, src.format, sourceObjects)
	if err != nil {
		return machine.ArchiveManifest{}, err
	}
	m := machine.ArchiveManifest{
		Format: machine.ArchiveFormat, ID: a.ID, Repository: repoID, CommonDir: e.Repo.CommonDir,
		Record: a.Record, Path: a.Path, Head: src.head, Branch: src.branch, ObjectFormat: string(src.format),
		Commits: slices.Clone(src.commits), Prerequisites: []string{}, Remotes: archiveRemotes(ctx, e, src.view),
		Files: []machine.ArchiveFile{}, Nested: []machine.ArchiveNested{},
		EmptyDirs: nonNil(src.scan.EmptyDirs), BuildOutput: slices.Clone(src.build), Status: src.status, CreatedAt: e.Now().UTC(),
		Modes: machine.CaptureModes(src.scan.RootMode, src.scan.Modes()),
	}
	if m.Commits == nil {
		m.Commits = []string{}
	}
	// The commits HEAD adds, bundled from the scratch repository (its only
	// ref is its own; the source's objects are its alternates).
	if len(m.Commits) > 0 {
		ref := bundleRef(src.branch)
		if _, err := e.Git.RunWith(ctx, "/", nil, nil, "--git-dir="+gitDir, "update-ref", ref, src.head); err != nil {
			return m, fmt.Errorf("scratch ref: %w", err)
		}
		var tips []string
		for _, t := range src.view.Tips {
			if !slices.Contains(tips, t.Commit) {
				tips = append(tips, t.Commit)
			}
		}
		bundle := filepath.Join(out, machine.ArchiveBundleName)
		if err := observe.CreateBundle(ctx, e.Git, gitDir, ref, tips, bundle); err != nil {
			return m, err
		}
		h, err := observe.ReadBundleHeader(bundle)
		if err != nil {
			return m, err
		}
		m.Prerequisites = nonNil(h.Prerequisites)
		pc := observe.CheckPack(ctx, e.Git, bundle, sourceObjects, filepath.Join(work, "iso"), src.format, m.Commits)
		if pc.Err != "" || len(pc.Missing) > 0 || pc.Skipped != "" {
			return m, fmt.Errorf("the bundle fails its pack check: %+v", *pc)
		}
	}
	// The tree's files, hashed without filters into the scratch objects
	// and a scratch index; the patch takes HEAD's tree to it.
	if err := src.scan.WriteBlobs(objects, src.format); err != nil {
		return m, err
	}
	if m.WorktreeTree, err = observe.WriteScratchTree(ctx, e.Git, gitDir, filepath.Join(work, "index"), src.scan, false); err != nil {
		return m, err
	}
	ht, err := e.Git.RunWith(ctx, "/", nil, nil, "--git-dir="+gitDir, "rev-parse", "--verify", "--end-of-options", src.head+"^{tree}")
	if err != nil {
		return m, fmt.Errorf("tree of %s: %w", src.head, err)
	}
	m.HeadTree = strings.TrimSpace(string(ht))
	if err := observe.WritePatch(ctx, e.Git, gitDir, m.HeadTree, m.WorktreeTree, filepath.Join(out, machine.ArchivePatchName)); err != nil {
		return m, err
	}
	failpoint.At("archive/after-patch")
	for i, rel := range src.scan.Nested {
		name := fmt.Sprintf("nested-%d.tar", i+1)
		if err := writeImage(src.scan.Root, rel, filepath.Join(out, name)); err != nil {
			return m, err
		}
		m.Nested = append(m.Nested, machine.ArchiveNested{Path: rel, Image: name})
	}
	ents, err := os.ReadDir(out)
	if err != nil {
		return m, err
	}
	for _, en := range ents {
		p := filepath.Join(out, en.Name())
		fi, err := os.Lstat(p)
		if err != nil {
			return m, err
		}
		sum, err := observe.SHA256File(p)
		if err != nil {
			return m, err
		}
		m.Files = append(m.Files, machine.ArchiveFile{Name: en.Name(), SHA256: sum, Size: fi.Size()})
	}
	body, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return m, err
	}
	// The manifest last, fsynced with its directory.
	if err := writeFileSynced(filepath.Join(out, machine.ArchiveManifestName), append(body, '\n')); err != nil {
		return m, err
	}
	failpoint.At("archive/after-manifest")
	if err := os.Rename(out, a.Dir); err != nil {
		return m, fmt.Errorf("seal %s: %w", a.Dir, err)
	}
	if err := steps.SyncDir(filepath.Dir(a.Dir)); err != nil {
		return m, err
	}
	failpoint.At("archive/after-rename")
	if err := os.RemoveAll(scratch); err != nil {
		return m, fmt.Errorf("remove scratch %s: %w", scratch, err)
	}
	return m, nil
}

// sealArchive reads the renamed directory back, verifies it (digests, no
// pack check: it ran before the manifest was written) and seals the
// record. A directory that does not verify is not sealed.
func sealArchive(ctx context.Context, e *steps.Env, a machine.Archive) (machine.Archive, error) {
	obs := observe.ObserveArchiveDir(a.Dir)
	if _, problems := machine.CheckArchive(obs); len(problems) > 0 {
		return a, &problems[0]
	}
	sum, err := observe.SHA256File(filepath.Join(a.Dir, machine.ArchiveManifestName))
	if err != nil {
		return a, err
	}
	if scratch := a.Intent.Scratch; scratch != "" {
		if err := os.RemoveAll(scratch); err != nil {
			return a, fmt.Errorf("remove scratch %s: %w", scratch, err)
		}
	}
	return fireArchive(ctx, e, a, machine.TriggerSeal, machine.ArchiveFiring{Verified: true, Manifest: sum})
}

// archiveRemotes lists the remotes a restore may fetch the bundle's
// prerequisites from, credentials stripped.
func archiveRemotes(ctx context.Context, e *steps.Env, v *proof.RemoteView) []machine.ArchiveRemote {
	out := []machine.ArchiveRemote{}
	if v == nil {
		return out
	}
	for _, r := range v.Remotes {
		// The URL git reads for the remote, exactly (a newline inside it
		// stays inside it), credentials removed.
		if u, ok := v.URL(r); ok {
			out = append(out, machine.ArchiveRemote{Name: r, URL: u})
		}
	}
	return out
}

// archiveBuildOutput is the build output of rec's tree as a removal
// would discard it: status's untracked and ignored paths classified by
// structure (observe.BuildOutput) or by an approved disposable pattern.
// A capture leaves these directories out and lists them. A tree whose
// status cannot be read has none: everything is archived.
func archiveBuildOutput(ctx context.Context, e *steps.Env, rec machine.Record) ([]machine.DiscardedDir, error) {
	disposable, err := e.Disposable()
	if err != nil {
		return nil, err
	}
	obs, _, err := e.ObserveRecord(ctx, rec, observe.Scope{Status: true, Disposable: disposable})
	if err != nil {
		return nil, err
	}
	if obs.StatusErr != "" {
		return []machine.DiscardedDir{}, nil
	}
	return append([]machine.DiscardedDir{}, obs.Discarded...), nil
}

// bundleRef is the ref the bundle carries: the tree's branch, or
// refs/heads/archived for a detached HEAD.
func bundleRef(branch string) string {
	if strings.HasPrefix(branch, "refs/heads/") {
		return branch
	}
	return "refs/heads/archived"
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// writeImage images the nested repository rel of root into file, then
// reads the image back and compares its digest with the tree's.
func writeImage(root, rel, file string) error {
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	sum, err := observe.ImageNested(root, rel, f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	back, err := observe.SHA256File(file)
	if err != nil {
		return err
	}
	if back != sum {
		return fmt.Errorf("the image of %s reads back as %s, written as %s", rel, back, sum)
	}
	return nil
}

// writeFileSynced writes data to a new file p, fsyncs it and its directory.
func writeFileSynced(p string, data []byte) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
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
	return steps.SyncDir(filepath.Dir(p))
}
