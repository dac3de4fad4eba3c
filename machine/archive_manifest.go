package machine

import (
	"bytes"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	json "github.com/custody-sh/custody/machine/bytejson"
)

// ArchiveFormat is the format tag of an archive's manifest.json.
const ArchiveFormat = "custody.archive/1"

// Names of the files an archive directory holds.
const (
	ArchiveManifestName = "manifest.json"
	ArchiveBundleName   = "commits.bundle"
	ArchivePatchName    = "dirty.patch"
)

// ArchiveManifest is manifest.json: everything needed to check and restore
// an archive without the repository it came from.
type ArchiveManifest struct {
	Format string `json:"format"`
	ID     string `json:"id"`
	// Repository is the repository id of the store that made it, and
	// CommonDir that repository's common git dir when it was captured.
	Repository string `json:"repository"`
	CommonDir  string `json:"common_dir"`
	// Record, Path, Head and Branch are the worktree record, its tree,
	// its HEAD commit and its branch ("" when detached).
	Record       string `json:"record"`
	Path         string `json:"path"`
	Head         string `json:"head"`
	Branch       string `json:"branch,omitempty"`
	ObjectFormat string `json:"object_format"`
	// Commits are the commits HEAD adds over the advertised tips (the
	// bundle's contents), and Prerequisites the tips the bundle stands
	// on, which a restore fetches from Remotes.
	Commits       []string        `json:"commits"`
	Prerequisites []string        `json:"prerequisites"`
	Remotes       []ArchiveRemote `json:"remotes"`
	// WorktreeTree is the tree object of the files as they were on disk,
	// hashed without filters; HeadTree is HEAD's. dirty.patch takes the
	// one to the other.
	WorktreeTree string `json:"worktree_tree"`
	HeadTree     string `json:"head_tree"`
	// Files lists every other file of the archive directory.
	Files []ArchiveFile `json:"files"`
	// Nested lists each nested git repository, imaged as a tar.
	Nested []ArchiveNested `json:"nested"`
	// EmptyDirs lists the tree's empty directories, which no git tree
	// holds.
	EmptyDirs []string `json:"empty_dirs"`
	// Modes are the permission bits of the tree's files and directories;
	// nil (absent) in an archive made before custody recorded them, which
	// restores files 0644 or 0755 and directories as the umask makes them.
	Modes *ArchiveModes `json:"modes,omitempty"`
	// BuildOutput lists the build-output directories left out of the
	// archive (path, kind, bytes), as the structural classifier or an
	// approved disposable pattern recognised them: layout below them is
	// not part of the fingerprint.
	BuildOutput []DiscardedDir `json:"build_output"`
	// Status is what git's index and status said of the tree when it was
	// captured (ArchiveStatus), which a strip decides over; nil in an
	// archive captured before it was recorded, which is never stripped.
	Status    *ArchiveStatus `json:"status,omitempty"`
	CreatedAt time.Time      `json:"created_at"`
}

// ArchiveRemote is one remote a restore may fetch prerequisites from.
type ArchiveRemote struct {
	Name string `json:"name"`
	URL  string `json:"url"`
}

// ArchiveFile is one file of an archive directory with its digest.
type ArchiveFile struct {
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// ArchiveNested is one nested git repository: its path in the tree and
// the archive file holding its tar image, whose SHA-256 is the root's
// fingerprint.
type ArchiveNested struct {
	Path  string `json:"path"`
	Image string `json:"image"`
}

// ArchiveEntry is one entry of an archive directory as observed (links
// not followed).
type ArchiveEntry struct {
	Name string
	// Regular is false for anything but a regular file.
	Regular bool
	Size    int64
	SHA256  string
	// Err is why the entry could not be read, if it could not.
	Err string
}

// ArchiveDirObservation is one observation of an archive directory.
type ArchiveDirObservation struct {
	Dir string
	// Err is why the directory could not be read ("" when it could).
	Err string
	// Symlink is true when Dir itself is a symbolic link.
	Symlink bool
	Entries []ArchiveEntry
	// Manifest is manifest.json's bytes, nil when it is absent.
	Manifest []byte
	// Pack is the pack check of the bundle: nil when it was not run.
	Pack *PackCheck
}

// PackCheck is the bundle indexed in an isolated repository and compared
// with `rev-list --objects` over the same range.
type PackCheck struct {
	// Missing lists objects the range needs that the pack lacks (at most
	// a few), or the commits of the manifest the bundle does not hold.
	Missing []string
	// Err is why the bundle could not be indexed or walked.
	Err string
	// Skipped says why the check could not run (no repository holds the
	// prerequisites the thin pack's deltas need).
	Skipped string
}

// ParseArchiveManifest parses manifest.json strictly: unknown fields, a
// foreign format, or a name that is not a plain file of the directory is
// an archive-invalid refusal.
func ParseArchiveManifest(dir string, b []byte) (ArchiveManifest, *Refusal) {
	var m ArchiveManifest
	bad := func(format string, args ...any) (ArchiveManifest, *Refusal) {
		r := refuse(CodeArchiveInvalid, dir, "custody archive list", "%s/%s: %s", dir, ArchiveManifestName, fmt.Sprintf(format, args...))
		return m, &r
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return bad("not a manifest: %v", err)
	}
	if trailing(dec) {
		return bad("trailing data after the manifest")
	}
	if m.Format != ArchiveFormat {
		return bad("format %q, want %q", m.Format, ArchiveFormat)
	}
	if m.ID == "" || m.Head == "" || m.WorktreeTree == "" {
		return bad("it lacks its id, head or worktree_tree")
	}
	seen := map[string]bool{ArchiveManifestName: true}
	for _, f := range m.Files {
		if !plainName(f.Name) || seen[f.Name] {
			return bad("it names %q, which is not one plain file of the archive", f.Name)
		}
		seen[f.Name] = true
	}
	for _, n := range m.Nested {
		if !seen[n.Image] || !TreePathSafe(n.Path) {
			return bad("nested repository %q has no recorded image %q, or its path leaves the tree", n.Path, n.Image)
		}
	}
	for _, d := range m.EmptyDirs {
		if !TreePathSafe(d) {
			return bad("empty directory %q leaves the tree", d)
		}
	}
	for _, d := range m.BuildOutput {
		if !TreePathSafe(d.Path) || d.Kind == BuildNone {
			return bad("build output %q leaves the tree or names no kind", d.Path)
		}
	}
	if m.Status != nil {
		if p, bad2 := m.Status.invalid(); bad2 {
			return bad("status names %q, which leaves the tree or is out of order", p)
		}
	}
	if p := layoutProblem(m); p != "" {
		return bad("%s", p)
	}
	return m, nil
}

// plainName reports whether name is one path component naming a file of
// the archive directory.
func plainName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/\x00") && !strings.HasPrefix(name, ".")
}

// TreePathSafe reports whether p, a slash-separated path inside a tree, is
// relative, clean and holds no "..", no ".git" component and no NUL: a
// restore may write it below its directory.
func TreePathSafe(p string) bool {
	if p == "" || strings.ContainsRune(p, 0) || path.IsAbs(p) || path.Clean(p) != p {
		return false
	}
	for _, c := range strings.Split(p, "/") {
		if c == ".." || c == "." || strings.EqualFold(c, ".git") {
			return false
		}
	}
	return true
}

// CheckArchive verifies one observation of an archive directory against
// its manifest, in a fixed order: the directory and manifest are readable
// and valid (archive-invalid), every recorded file is present
// (archive-incomplete), every digest and size matches
// (archive-digest-mismatch), nothing unrecorded is there (archive-invalid),
// and the bundle passes the pack check (archive-bundle-invalid). It
// returns the manifest (when it parsed) and every problem, none when the
// archive verifies.
func CheckArchive(obs ArchiveDirObservation) (ArchiveManifest, []Refusal) {
	retry := "custody archive verify " + QuotePath(obs.Dir)
	one := func(code Code, format string, args ...any) []Refusal {
		return []Refusal{refuse(code, obs.Dir, retry, format, args...)}
	}
	switch {
	case obs.Symlink:
		return ArchiveManifest{}, one(CodeArchiveInvalid, "%s is a symbolic link; an archive is only ever a real directory", obs.Dir)
	case obs.Err != "":
		return ArchiveManifest{}, one(CodeArchiveInvalid, "%s cannot be read: %s", obs.Dir, obs.Err)
	case obs.Manifest == nil:
		return ArchiveManifest{}, one(CodeArchiveIncomplete, "%s has no %s: it was never sealed", obs.Dir, ArchiveManifestName)
	}
	m, r := ParseArchiveManifest(obs.Dir, obs.Manifest)
	if r != nil {
		r.Retry = retry
		return m, []Refusal{*r}
	}
	byName := map[string]ArchiveEntry{}
	for _, e := range obs.Entries {
		byName[e.Name] = e
	}
	var out []Refusal
	recorded := map[string]bool{ArchiveManifestName: true}
	for _, f := range m.Files {
		recorded[f.Name] = true
		e, ok := byName[f.Name]
		switch {
		case !ok:
			out = append(out, refuse(CodeArchiveIncomplete, obs.Dir+"/"+f.Name, retry, "%s/%s is missing", obs.Dir, f.Name))
		case e.Err != "":
			out = append(out, refuse(CodeArchiveIncomplete, obs.Dir+"/"+f.Name, retry, "%s/%s cannot be read: %s", obs.Dir, f.Name, e.Err))
		case !e.Regular:
			out = append(out, refuse(CodeArchiveInvalid, obs.Dir+"/"+f.Name, retry, "%s/%s is not a regular file", obs.Dir, f.Name))
		case e.Size != f.Size || e.SHA256 != f.SHA256:
			out = append(out, refuse(CodeArchiveDigestMismatch, obs.Dir+"/"+f.Name, retry,
				"%s/%s has %d bytes with SHA-256 %s; the manifest records %d bytes with %s", obs.Dir, f.Name, e.Size, e.SHA256, f.Size, f.SHA256))
		}
	}
	var extra []string
	for _, e := range obs.Entries {
		if !recorded[e.Name] {
			extra = append(extra, e.Name)
		}
	}
	slices.Sort(extra)
	if len(extra) > 0 {
		out = append(out, refuse(CodeArchiveInvalid, obs.Dir, retry, "%s holds %s, which the manifest does not name", obs.Dir, listSome(extra, 3)))
	}
	if len(out) == 0 && obs.Pack != nil && obs.Pack.Skipped == "" {
		switch {
		case obs.Pack.Err != "":
			out = append(out, refuse(CodeArchiveBundleInvalid, obs.Dir+"/"+ArchiveBundleName, retry, "%s/%s does not index: %s", obs.Dir, ArchiveBundleName, obs.Pack.Err))
		case len(obs.Pack.Missing) > 0:
			out = append(out, refuse(CodeArchiveBundleInvalid, obs.Dir+"/"+ArchiveBundleName, retry,
				"%s/%s lacks objects its commits need: %s", obs.Dir, ArchiveBundleName, listSome(obs.Pack.Missing, 3)))
		}
	}
	return m, out
}

// HasBundle reports whether the manifest records a commits.bundle.
func (m ArchiveManifest) HasBundle() bool {
	return slices.ContainsFunc(m.Files, func(f ArchiveFile) bool { return f.Name == ArchiveBundleName })
}

// ArchiveFingerprint is what an archive says the tree was: the tree of its
// files hashed without filters, and each nested root's image digest.
type ArchiveFingerprint struct {
	Head         string
	WorktreeTree string
	// Nested maps each nested root to its image's SHA-256.
	Nested map[string]string
	// Unrecorded lists the build-output directories recognised in the
	// tree now that the archive does not record: their layout stays in
	// the fingerprint, and a mismatch names them.
	Unrecorded []string
	// Modes are the permission bits of the tree's files and directories
	// (nil in an archive that records none: then they are not compared).
	Modes *ArchiveModes
}

// Fingerprint returns the fingerprint the manifest records.
func (m ArchiveManifest) Fingerprint() ArchiveFingerprint {
	// Unrecorded stays empty: it describes a tree observed now.
	fp := ArchiveFingerprint{Head: m.Head, WorktreeTree: m.WorktreeTree, Nested: map[string]string{}, Modes: m.Modes}
	digest := map[string]string{}
	for _, f := range m.Files {
		digest[f.Name] = f.SHA256
	}
	for _, n := range m.Nested {
		fp.Nested[n.Path] = digest[n.Image]
	}
	return fp
}

// CheckArchiveFresh compares the tree as it is now with the archive's
// fingerprint: archive-stale names the first difference.
func CheckArchiveFresh(m ArchiveManifest, now ArchiveFingerprint) *Refusal {
	want := m.Fingerprint()
	retry := CommandOn([]string{"custody", "archive", "create"}, m.Record)
	stale := func(format string, args ...any) *Refusal {
		r := refuse(CodeArchiveStale, m.Path, retry, "archive %s no longer matches %s: %s", m.ID, m.Path, fmt.Sprintf(format, args...))
		return &r
	}
	switch {
	case now.Head != want.Head:
		return stale("HEAD is %s, the archive holds %s", now.Head, want.Head)
	case now.WorktreeTree != want.WorktreeTree && len(now.Unrecorded) > 0:
		return stale("its files hash to tree %s, the archive holds %s; %s is build output the archive does not leave out, so its layout counts",
			now.WorktreeTree, want.WorktreeTree, strings.Join(now.Unrecorded, ", "))
	case now.WorktreeTree != want.WorktreeTree:
		return stale("its files hash to tree %s, the archive holds %s", now.WorktreeTree, want.WorktreeTree)
	}
	var roots []string
	for p := range want.Nested {
		roots = append(roots, p)
	}
	for p := range now.Nested {
		if _, ok := want.Nested[p]; !ok {
			roots = append(roots, p)
		}
	}
	slices.Sort(roots)
	for _, p := range roots {
		if now.Nested[p] != want.Nested[p] {
			return stale("nested repository %s differs from its image", p)
		}
	}
	if want.Modes != nil && now.Modes != nil {
		if d := modesDiffer(*want.Modes, *now.Modes); d != "" {
			return stale("%s", d)
		}
	}
	return nil
}

// modesDiffer names the first difference between the recorded modes a and
// the modes b of the tree now, or "" when they are equal. Both come from
// CaptureModes over the same paths (the trees are equal), so equal bits
// record equally.
func modesDiffer(a, b ArchiveModes) string {
	for _, d := range []struct{ what, a, b string }{{"the tree's own directory", a.Root, b.Root},
		{"most files", a.File, b.File}, {"most executable files", a.Executable, b.Executable}, {"most directories", a.Directory, b.Directory}} {
		if d.a != d.b {
			return fmt.Sprintf("the permission bits of %s are %s now, the archive holds %s", d.what, d.b, d.a)
		}
	}
	am, bm := map[string]string{}, map[string]string{}
	var paths []string
	for _, e := range a.Entries {
		am[e.Path] = e.Mode
		paths = append(paths, e.Path)
	}
	for _, e := range b.Entries {
		bm[e.Path] = e.Mode
		if _, ok := am[e.Path]; !ok {
			paths = append(paths, e.Path)
		}
	}
	slices.Sort(paths)
	for _, p := range paths {
		if am[p] != bm[p] {
			was, is := am[p], bm[p]
			if was == "" {
				was = "its kind's"
			}
			if is == "" {
				is = "its kind's"
			}
			return fmt.Sprintf("the permission bits of %s are %s now, the archive holds %s", p, is, was)
		}
	}
	return ""
}

// QuotePath quotes a path for a command line shown to a person, always:
// an archive's directory is a path even when no character in it needs
// quoting, and reads as one.
func QuotePath(p string) string { return ShellWord(p) }

// BuildOutputPaths returns the paths of the build-output directories the
// manifest records as left out.
func (m ArchiveManifest) BuildOutputPaths() []string {
	out := make([]string, 0, len(m.BuildOutput))
	for _, d := range m.BuildOutput {
		out = append(out, d.Path)
	}
	return out
}
