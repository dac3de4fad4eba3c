package archive

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/store"
)

// ArchiveCheck is what verifying one archive found.
type ArchiveCheck struct {
	Dir        string        `json:"dir"`
	ID         string        `json:"id,omitempty"`
	Repository string        `json:"repository,omitempty"`
	Record     string        `json:"record,omitempty"`
	Path       string        `json:"path,omitempty"`
	Head       string        `json:"head,omitempty"`
	CreatedAt  string        `json:"created_at,omitempty"`
	State      machine.State `json:"state,omitempty"`
	// Pack says how the bundle was checked: "checked", "no bundle", or
	// why it could not be.
	Pack string `json:"pack,omitempty"`
	// Fresh says whether the tree was compared with the archive: "equal",
	// "tree absent", or "" when it was not.
	Fresh    string            `json:"fresh,omitempty"`
	Problems []machine.Refusal `json:"problems"`
}

// Pending reports whether the archive did not verify (exit 3).
func (c ArchiveCheck) Pending() bool { return len(c.Problems) > 0 }

// ResolveArchiveDir returns the directory ref names: a path (it holds a
// separator or is "." or "..") as it is, else an archive id, found in the
// store's records when e is not nil, else under every repository of the
// archives root.
func ResolveArchiveDir(e *steps.Env, ref string) (string, error) {
	if strings.ContainsRune(ref, filepath.Separator) || ref == "." || ref == ".." {
		return ref, nil
	}
	if e != nil && e.Store != nil {
		if a, err := LoadArchive(e, ref); err == nil {
			return a.Dir, nil
		}
	}
	root, err := ArchivesRoot()
	if err != nil {
		return "", err
	}
	repos, _ := os.ReadDir(root)
	for _, r := range repos {
		p := filepath.Join(root, r.Name(), ref)
		if _, err := os.Lstat(p); err == nil && !strings.HasPrefix(r.Name(), ".") {
			return p, nil
		}
	}
	return "", machine.NoArchiveRefusal(ref, root)
}

// VerifyArchive checks the archive in dir: its manifest and every digest
// (CheckArchive), the bundle's pack check against the objects of the
// repository it came from when that repository is at hand, and, when e
// knows the archive and its tree is still there, that the tree still
// equals the archive's fingerprint (archive-stale otherwise). It works
// without the repository: the manifest describes itself.
func VerifyArchive(ctx context.Context, g *hostio.Git, e *steps.Env, dir string) (ArchiveCheck, error) {
	c := ArchiveCheck{Dir: dir, Problems: []machine.Refusal{}}
	obs := observe.ObserveArchiveDir(dir)
	if obs.Err != "" && errors.Is(statErr(dir), fs.ErrNotExist) {
		return c, machine.ArchiveMissingRefusal(dir)
	}
	m, problems := machine.CheckArchive(obs)
	c.ID, c.Repository, c.Record, c.Path, c.Head = m.ID, m.Repository, m.Record, m.Path, m.Head
	if !m.CreatedAt.IsZero() {
		c.CreatedAt = m.CreatedAt.UTC().Format("2006-01-02T15:04:05Z")
	}
	if len(problems) > 0 {
		c.Problems = problems
		return c, nil
	}
	c.Pack = "no bundle"
	if m.HasBundle() {
		tmp, err := os.MkdirTemp("", "custody-archive-check-")
		if err != nil {
			return c, err
		}
		defer os.RemoveAll(tmp)
		base := ""
		if objs := filepath.Join(m.CommonDir, "objects"); m.CommonDir != "" && isDir(objs) {
			base = objs
		}
		obs.Pack = observe.CheckPack(ctx, g, filepath.Join(dir, machine.ArchiveBundleName), base, filepath.Join(tmp, "iso"),
			gitfiles.ObjectFormat(m.ObjectFormat), m.Commits)
		c.Pack = "checked"
		if obs.Pack.Skipped != "" {
			c.Pack = "not checked: " + obs.Pack.Skipped
		}
		if _, problems = machine.CheckArchive(obs); len(problems) > 0 {
			c.Problems = problems
			return c, nil
		}
	}
	if e == nil || e.Store == nil {
		return c, nil
	}
	a, err := LoadArchive(e, m.ID)
	if err != nil {
		return c, nil // not this repository's archive: self-described only
	}
	c.State = a.State
	if r, err := sealedManifest(e, dir, m); err != nil || r != nil {
		if r != nil {
			c.Problems = append(c.Problems, *r)
		}
		return c, err
	}
	if ok, err := present(m.Path); err != nil || !ok {
		c.Fresh = "tree absent"
		return c, err
	}
	fp, err := TreeFingerprint(ctx, g, m.Path, m.BuildOutputPaths())
	if err != nil {
		return c, err
	}
	if fp.WorktreeTree != m.WorktreeTree {
		if fp.Unrecorded, err = unrecordedBuildOutput(ctx, e, a.Record, m); err != nil {
			return c, err
		}
	}
	if r := machine.CheckArchiveFresh(m, fp); r != nil {
		c.Problems = append(c.Problems, *r)
		return c, nil
	}
	c.Fresh = "equal"
	return c, nil
}

// sealedManifest refuses a manifest.json other than the one e's record of
// the archive was sealed with (archive-digest-mismatch); with no such
// record (no repository, another repository's archive) it says nothing.
func sealedManifest(e *steps.Env, dir string, m machine.ArchiveManifest) (*machine.Refusal, error) {
	if e == nil || e.Store == nil {
		return nil, nil
	}
	a, err := LoadArchive(e, m.ID)
	if err != nil || a.Manifest == "" {
		return nil, nil
	}
	p := filepath.Join(dir, machine.ArchiveManifestName)
	sum, err := observe.SHA256File(p)
	if err != nil {
		return nil, err
	}
	if sum == a.Manifest {
		return nil, nil
	}
	return machine.ArchiveManifestDigestRefusal(dir, p, sum, a.ID, a.Manifest), nil
}

// unrecordedBuildOutput lists the build-output directories recognised in
// record id's tree now that m does not record as left out (none when the
// record is gone).
func unrecordedBuildOutput(ctx context.Context, e *steps.Env, id string, m machine.ArchiveManifest) ([]string, error) {
	rec, err := e.Store.Get(id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	now, err := archiveBuildOutput(ctx, e, rec)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range now {
		if !slices.Contains(m.BuildOutputPaths(), d.Path) {
			out = append(out, d.Path)
		}
	}
	return out, nil
}

// TreeFingerprint observes the tree at path as an archive records it:
// HEAD, the tree of its files hashed without filters (only ids: no object
// of the repository is written) leaving out the build-output directories
// leave (those the archive records, and only those), and each nested
// root's image digest.
func TreeFingerprint(ctx context.Context, g *hostio.Git, path string, leave []string) (machine.ArchiveFingerprint, error) {
	fp := machine.ArchiveFingerprint{Nested: map[string]string{}}
	out, err := g.Observe(ctx, path, "rev-parse", "--verify", "--end-of-options", "HEAD^{commit}")
	if err != nil {
		return fp, fmt.Errorf("HEAD of %s: %w", path, err)
	}
	fp.Head = strings.TrimSpace(string(out))
	format, err := observe.ObjectFormatOf(ctx, g, path)
	if err != nil {
		return fp, err
	}
	scan, err := observe.ScanTreeLeaving(path, format, leave)
	if err != nil {
		return fp, err
	}
	if len(scan.Unsupported) > 0 {
		fp.WorktreeTree = "unreadable: " + scan.UnsupportedText()
		return fp, nil
	}
	fp.Modes = machine.CaptureModes(scan.RootMode, scan.Modes())
	tmp, err := os.MkdirTemp("", "custody-fingerprint-")
	if err != nil {
		return fp, err
	}
	defer os.RemoveAll(tmp)
	gitDir := filepath.Join(tmp, "git")
	if _, err := observe.InitScratch(ctx, g, gitDir, format); err != nil {
		return fp, err
	}
	if fp.WorktreeTree, err = observe.WriteScratchTree(ctx, g, gitDir, filepath.Join(tmp, "index"), scan, true); err != nil {
		return fp, err
	}
	for _, rel := range scan.Nested {
		if fp.Nested[rel], err = observe.NestedDigest(path, rel); err != nil {
			return fp, err
		}
	}
	return fp, nil
}

// ListArchives verifies every archive directory under root
// (<root>/<repository>/<archive>/, names starting with "." skipped: a
// capture's scratch) by its manifest and digests alone, without any
// repository, sorted by directory.
func ListArchives(root string) ([]ArchiveCheck, error) {
	out := []ArchiveCheck{}
	repos, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return out, fmt.Errorf("archives root %s: %w", root, err)
	}
	for _, r := range repos {
		if strings.HasPrefix(r.Name(), ".") || !r.IsDir() {
			continue
		}
		ents, err := os.ReadDir(filepath.Join(root, r.Name()))
		if err != nil {
			return out, err
		}
		for _, en := range ents {
			if strings.HasPrefix(en.Name(), ".") {
				continue
			}
			dir := filepath.Join(root, r.Name(), en.Name())
			m, problems := machine.CheckArchive(observe.ObserveArchiveDir(dir))
			c := ArchiveCheck{Dir: dir, ID: m.ID, Repository: m.Repository, Record: m.Record, Path: m.Path, Head: m.Head, Problems: problems}
			if c.Problems == nil {
				c.Problems = []machine.Refusal{}
			}
			if !m.CreatedAt.IsZero() {
				c.CreatedAt = m.CreatedAt.UTC().Format("2006-01-02T15:04:05Z")
			}
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b ArchiveCheck) int { return strings.Compare(a.Dir, b.Dir) })
	return out, nil
}

func statErr(p string) error { _, err := os.Lstat(p); return err }

func isDir(p string) bool { fi, err := os.Stat(p); return err == nil && fi.IsDir() }

// ArchiveNames returns the names of the archive directories under root
// (<root>/<repository>/<archive>/, names starting with "." skipped), each
// once and sorted: the names ResolveArchiveDir takes. Nothing is read
// beyond the two directory levels (shell completion offers them); a root
// that does not exist has none.
func ArchiveNames(root string) ([]string, error) {
	repos, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("archives root %s: %w", root, err)
	}
	var names []string
	for _, r := range repos {
		if strings.HasPrefix(r.Name(), ".") || !r.IsDir() {
			continue
		}
		ents, err := os.ReadDir(filepath.Join(root, r.Name()))
		if err != nil {
			return nil, fmt.Errorf("archives root %s: %w", root, err)
		}
		for _, en := range ents {
			if !strings.HasPrefix(en.Name(), ".") && en.IsDir() {
				names = append(names, en.Name())
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}
