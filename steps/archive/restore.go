package archive

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/steps/beneath"
)

// ArchiveRestored is what `custody archive restore` did.
type ArchiveRestored struct {
	Archive string `json:"archive"`
	Dir     string `json:"dir"`
	Head    string `json:"head"`
	Branch  string `json:"branch,omitempty"`
	Files   int    `json:"files"`
	Nested  int    `json:"nested"`
	// Modes is "as-captured" when the archive records its permission bits
	// and they were given back, "not-recorded" for an archive made before
	// custody recorded them (files 0644 or 0755, directories as the umask
	// makes them).
	Modes string `json:"modes"`
	// ModesNotKept lists the directories whose recorded bits the system
	// narrowed (it drops setgid for a group the person is not in).
	ModesNotKept []string `json:"modes_not_kept,omitempty"`
}

// Values of ArchiveRestored.Modes.
const (
	ModesAsCaptured  = "as-captured"
	ModesNotRecorded = "not-recorded"
)

// restoreChunk bounds how many blob bytes one cat-file --batch returns.
const restoreChunk = 32 << 20

// RestoreArchive rebuilds the tree of the archive in dir at target, a
// path that does not exist yet or an empty directory: a new repository
// whose HEAD is the archived commit (from the bundle, standing on
// prerequisites fetched from the recorded remotes, or the repository it
// came from when that still exists), whose index is HEAD's tree, and
// whose files are the archived tree byte for byte: HEAD's tree with the
// patch applied must equal the recorded worktree_tree, then every file is
// written from its blob without filters (exec bits, symbolic links,
// dangling too, empty and binary files, any line ending), each nested
// repository extracted from its image, each empty directory made, and
// every file and directory given the permission bits the manifest
// records.
//
// It writes only below target, through one beneath.Root: no write follows
// a symbolic link. Before the first file of the tree is written, the whole
// layout (the tree's entries, the manifest's empty directories, nested
// repositories and modes, every image's entries) is checked by
// machine.CheckRestoreLayout; the manifest and the images are checked
// before anything at all is made. Whatever fails after target was made
// removes what the restore wrote (target itself when it made it), so a
// refused or failed restore leaves nothing.
//
// When e holds the archive's record, manifest.json must also be the one
// that was sealed.
func RestoreArchive(ctx context.Context, g *hostio.Git, e *steps.Env, dir, target string) (ArchiveRestored, error) {
	res := ArchiveRestored{Dir: target}
	obs := observe.ObserveArchiveDir(dir)
	m, problems := machine.CheckArchive(obs)
	if len(problems) > 0 {
		return res, &problems[0]
	}
	if r, err := sealedManifest(e, dir, m); err != nil || r != nil {
		if r != nil {
			return res, r
		}
		return res, err
	}
	res.Archive, res.Head, res.Branch = m.ID, m.Head, m.Branch
	retry := machine.ArchiveRestoreRetry(dir, target)
	if err := emptyTarget(target, retry); err != nil {
		return res, err
	}
	images, err := readImages(dir, m)
	if err != nil {
		return res, err
	}
	if r := machine.CheckRestoreLayout(dir, m, nil, images); r != nil {
		return res, r
	}
	perm := fs.FileMode(0o700) // until the restore gives it its recorded bits
	if m.Modes == nil {
		perm = 0o755 // under the umask, as git init made it before modes were recorded
	}
	made, err := makeTarget(target, perm)
	if err != nil {
		return res, fmt.Errorf("restore: make %s: %w", target, err)
	}
	root, err := beneath.Open(target)
	if err != nil {
		if made {
			os.Remove(target)
		}
		return res, fmt.Errorf("restore: %w", err)
	}
	defer root.Close()
	res, err = restoreInto(ctx, g, dir, m, images, root, retry, res)
	if err != nil {
		// Nothing of a refused or failed restore stays: the target was
		// new or empty, so all of it is the restore's own.
		if cerr := root.Clear(); cerr != nil {
			return res, fmt.Errorf("%w (and what it wrote could not all be removed: %v)", err, cerr)
		}
		if made {
			os.Remove(target)
		}
		return res, err
	}
	return res, nil
}

// makeTarget makes target with perm (and the directories above it, as
// git init did) and reports whether it made it; an empty directory
// already there is used as it is.
func makeTarget(target string, perm fs.FileMode) (bool, error) {
	err := os.Mkdir(target, perm)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return false, err
		}
		err = os.Mkdir(target, perm)
	}
	return err == nil, err
}

// readImages reads the entries of every nested repository's image, by
// nested root, writing nothing.
func readImages(dir string, m machine.ArchiveManifest) (map[string][]machine.ImageEntry, error) {
	out := map[string][]machine.ImageEntry{}
	for _, nr := range m.Nested {
		f, err := os.Open(filepath.Join(dir, nr.Image))
		if err != nil {
			return nil, err
		}
		var ents []machine.ImageEntry
		err = observe.ReadImage(f, func(e machine.ImageEntry, _ string, _ io.Reader) error {
			ents = append(ents, e)
			return nil
		})
		f.Close()
		if err != nil {
			return nil, machine.NestedImageUnreadableRefusal(dir, filepath.Join(dir, nr.Image), nr.Image, nr.Path, err)
		}
		out[nr.Path] = ents
	}
	return out, nil
}

// restoreInto does the restore's work in root, its new or empty target.
func restoreInto(ctx context.Context, g *hostio.Git, dir string, m machine.ArchiveManifest, images map[string][]machine.ImageEntry,
	root *beneath.Root, retry string, res ArchiveRestored) (ArchiveRestored, error) {
	target := root.Path()
	format := gitfiles.ObjectFormat(m.ObjectFormat)
	if _, err := g.RunWith(ctx, filepath.Dir(target), nil, nil, "init", "--quiet", "--object-format="+string(format), "--", target); err != nil {
		return res, fmt.Errorf("restore: init %s: %w", target, err)
	}
	gitDir := filepath.Join(target, ".git")
	git := func(stdin []byte, env []string, args ...string) ([]byte, error) {
		return g.RunWith(ctx, target, env, stdin, append([]string{"--git-dir=" + gitDir, "-c", "core.attributesFile=/dev/null",
			"-c", "apply.whitespace=nowarn", "-c", "core.autocrlf=false"}, args...)...)
	}
	if err := fetchPrerequisites(m, git); err != nil {
		return res, err
	}
	ref := bundleRef(m.Branch)
	if m.HasBundle() {
		bundle := filepath.Join(dir, machine.ArchiveBundleName)
		tmp, err := os.MkdirTemp("", "custody-restore-check-")
		if err != nil {
			return res, err
		}
		defer os.RemoveAll(tmp)
		obs := observe.ObserveArchiveDir(dir)
		obs.Pack = observe.CheckPack(ctx, g, bundle, filepath.Join(gitDir, "objects"), filepath.Join(tmp, "iso"), format, m.Commits)
		if _, problems := machine.CheckArchive(obs); len(problems) > 0 {
			return res, &problems[0]
		}
		if obs.Pack.Skipped != "" {
			return res, machine.BundlePrerequisitesGoneRefusal(bundle, retry, m.Prerequisites, m.CommonDir)
		}
		if _, err := git(nil, nil, "fetch", "--quiet", "--no-tags", "--update-head-ok", bundle, "+"+ref+":"+ref); err != nil {
			return res, fmt.Errorf("restore: fetch %s: %w", bundle, err)
		}
	}
	if _, err := git(nil, nil, "update-ref", "--no-deref", ref, m.Head); err != nil {
		return res, machine.ArchiveHeadGoneRefusal(dir, retry, m.Head, m.ID, err)
	}
	if m.Branch != "" {
		_, err := git(nil, nil, "symbolic-ref", "HEAD", ref)
		if err != nil {
			return res, err
		}
	} else if _, err := git(nil, nil, "update-ref", "--no-deref", "HEAD", m.Head); err != nil {
		return res, err
	}
	// HEAD's tree with the patch applied, in a scratch index, must be the
	// recorded tree of the files.
	index := filepath.Join(gitDir, "custody-restore-index")
	defer os.Remove(index)
	env := []string{"GIT_INDEX_FILE=" + index}
	if _, err := git(nil, env, "read-tree", m.HeadTree); err != nil {
		return res, fmt.Errorf("restore: read HEAD's tree: %w", err)
	}
	patch := filepath.Join(dir, machine.ArchivePatchName)
	if fi, err := os.Stat(patch); err == nil && fi.Size() > 0 {
		if _, err := git(nil, env, "apply", "--cached", "--binary", "--", patch); err != nil {
			return res, machine.PatchNotApplyingRefusal(patch, retry, err)
		}
	}
	out, err := git(nil, env, "write-tree")
	if err != nil {
		return res, err
	}
	if got := strings.TrimSpace(string(out)); got != m.WorktreeTree {
		return res, machine.PatchTreeMismatchRefusal(patch, retry, got, m.WorktreeTree)
	}
	ents, err := listTree(git, m.WorktreeTree)
	if err != nil {
		return res, err
	}
	tree := make([]machine.ArchiveTreeEntry, len(ents))
	for i, en := range ents {
		tree[i] = machine.ArchiveTreeEntry{Path: en.path, Mode: en.mode, Size: en.size}
	}
	// The whole layout is judged before the first file is written.
	if r := machine.CheckRestoreLayout(dir, m, tree, images); r != nil {
		return res, r
	}
	w := newTreeWriter(root, m.Modes)
	if res.Files, err = w.materialize(git, ents); err != nil {
		return res, err
	}
	for _, nr := range m.Nested {
		if err := w.extract(filepath.Join(dir, nr.Image), nr.Path); err != nil {
			return res, fmt.Errorf("restore nested repository %s: %w", nr.Path, err)
		}
		res.Nested++
	}
	for _, d := range m.EmptyDirs {
		if err := w.mkdir(d); err != nil {
			return res, err
		}
	}
	// The index is HEAD's tree, so git shows the archived changes as
	// changes.
	if _, err := git(nil, nil, "read-tree", m.Head); err != nil {
		return res, fmt.Errorf("restore: index: %w", err)
	}
	if res.ModesNotKept, err = w.chmodDirs(); err != nil {
		return res, err
	}
	res.Modes = ModesNotRecorded
	if m.Modes != nil {
		res.Modes = ModesAsCaptured
	}
	return res, nil
}

// emptyTarget refuses a target that exists and is not an empty directory.
func emptyTarget(target, retry string) error {
	fi, err := os.Lstat(target)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.IsDir() && fi.Mode()&fs.ModeSymlink == 0 {
		ents, err := os.ReadDir(target)
		if err == nil && len(ents) == 0 {
			return nil
		}
	}
	return machine.RestoreTargetTakenRefusal(target, retry)
}

// fetchPrerequisites fetches the commits the bundle stands on (and HEAD,
// when there is no bundle) from each recorded remote, then from the
// repository the archive came from, until all are present.
func fetchPrerequisites(m machine.ArchiveManifest, git func([]byte, []string, ...string) ([]byte, error)) error {
	need := append([]string(nil), m.Prerequisites...)
	if !m.HasBundle() {
		need = append(need, m.Head)
	}
	missing := func() bool {
		for _, c := range need {
			if _, err := git(nil, nil, "cat-file", "-e", c+"^{commit}"); err != nil {
				return true
			}
		}
		return false
	}
	if len(need) == 0 || !missing() {
		return nil
	}
	for _, r := range m.Remotes {
		if _, err := git(nil, nil, "remote", "add", "--", r.Name, r.URL); err != nil {
			continue
		}
		_, _ = git(nil, nil, "fetch", "--quiet", "--no-tags", "--", r.Name)
		if !missing() {
			return nil
		}
	}
	if m.CommonDir != "" && isDir(m.CommonDir) {
		_, _ = git(nil, nil, "fetch", "--quiet", "--no-tags", "--", m.CommonDir, "+refs/*:refs/custody-restore/*")
		if refs, err := git(nil, nil, "for-each-ref", "--format=%(refname)", "refs/custody-restore/"); err == nil {
			var del bytes.Buffer
			for _, r := range strings.Fields(string(refs)) {
				del.WriteString("delete " + r + "\n")
			}
			_, _ = git(del.Bytes(), nil, "update-ref", "--stdin")
		}
	}
	return nil // CheckPack or update-ref says what is still missing
}
