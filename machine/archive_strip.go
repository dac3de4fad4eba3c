package machine

import (
	"path"
	"slices"
	"strings"
)

// ArchiveTreeEntry is one file or link of an archive's tree (its
// worktree_tree): slash-separated path, git mode and size.
type ArchiveTreeEntry struct {
	Path string `json:"path"`
	Mode string `json:"mode"`
	Size int64  `json:"size"`
}

// ArchiveStripFacts is what a strip observes of an archive: its tree,
// the paths of HEAD's files, the CACHEDIR.TAG files whose content begins
// with the standard signature, the target of every link, and the nested
// repositories' roots.
type ArchiveStripFacts struct {
	Entries     []ArchiveTreeEntry
	Head        []string
	SignedTags  []string
	LinkTargets map[string]string
	Nested      []string
}

// DecideArchiveStrip decides whether the archive may have its build output
// stripped: the local checks prune makes first, in the same order (a valid
// manifest whose digests hold and nothing unrecorded in the directory,
// then the tree no longer present). A strip deletes no archive, so the
// remotes are not asked.
func DecideArchiveStrip(obs ArchivePruneObservation) (ArchiveManifest, *Refusal) {
	d := obs.Dir
	m, problems := CheckArchive(d)
	if len(problems) > 0 {
		r := problems[0]
		r.Retry = "custody archive verify " + QuotePath(d.Dir)
		return m, &r
	}
	switch {
	case obs.TreeErr != "":
		r := refuse(CodePathUnknown, d.Dir, "custody archive prune --strip-build-output", "archive %s: whether its tree %s exists is unknown: %s", m.ID, m.Path, obs.TreeErr)
		return m, &r
	case obs.TreePresent:
		r := refuse(CodeArchiveTreePresent, d.Dir, "custody archive prune --strip-build-output",
			"archive %s: its tree %s still exists; strip the build output from the tree, or remove the tree first", m.ID, m.Path)
		return m, &r
	}
	return m, nil
}

// PlanArchiveStrip returns the directories of the archive's tree to strip,
// recognised by structure alone, outermost first and never again below
// one already recognised (sorted by path). The rules are StructureKind's,
// the ones a tree on disk is classified by (stripKind), over what the
// archive's tree shows of each directory, with HEAD's files and the
// tree's pubspec.yaml files as the project's own; a strip takes only:
//
//   - a Cargo target: a directory holding a CACHEDIR.TAG that begins with
//     the signature, a regular .rustc_info.json, or a direct subdirectory
//     holding a .fingerprint/ directory (a profile); a CACHEDIR.TAG without
//     the signature disqualifies it from every rule;
//   - Flutter output: <P>/build or <P>/.dart_tool where HEAD or the
//     archive's tree holds <P>/pubspec.yaml.
//
// A directory is stripped only when every entry at or below it is a pure
// addition (HEAD holds nothing at, below or above its path), no nested
// repository is at or below it, and no link below it leads outside it.
func PlanArchiveStrip(f ArchiveStripFacts) []DiscardedDir {
	head := map[string]bool{}
	for _, p := range f.Head {
		head[p] = true
	}
	headDirs := map[string]bool{}
	for _, p := range f.Head {
		for d := path.Dir(p); d != "." && !headDirs[d]; d = path.Dir(d) {
			headDirs[d] = true
		}
	}
	shapes := archiveShapes(f)
	project := slices.Clone(f.Head)
	for _, e := range f.Entries {
		if path.Base(e.Path) == "pubspec.yaml" && !head[e.Path] {
			project = append(project, e.Path)
		}
	}
	tracked := TrackedPaths(project)
	cands := make([]string, 0, len(shapes))
	for d := range shapes {
		cands = append(cands, d)
	}
	slices.SortFunc(cands, func(a, b string) int {
		if n := strings.Count(a, "/") - strings.Count(b, "/"); n != 0 {
			return n
		}
		return strings.Compare(a, b)
	})
	below := func(p, dir string) bool { return strings.HasPrefix(p, dir+"/") }
	var out []DiscardedDir
	for _, c := range cands {
		if slices.ContainsFunc(out, func(d DiscardedDir) bool { return below(c, d.Path) }) {
			continue
		}
		kind := stripKind(shapes[c], tracked)
		if kind == BuildNone || !strippable(c, f, head, headDirs) {
			continue
		}
		d := DiscardedDir{Path: c, Kind: kind}
		for _, e := range f.Entries {
			if below(e.Path, c) {
				d.Bytes += e.Size
			}
		}
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b DiscardedDir) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// stripKind is the kind of build output the directory the facts f
// describe is by its structure alone: StructureKind, the one set of rules
// every tree is classified by, with tracked as the project's own files and
// no disposable patterns. A strip takes only Cargo targets and Flutter
// output (docs/decisions/0086); a directory recognised by its signed
// CACHEDIR.TAG alone is counted a Cargo target there, as 0086 has it
// (Cargo tags every target directory). Any other kind stays in the patch.
func stripKind(f BuildFacts, tracked TrackedSet) BuildKind {
	switch k := StructureKind(f, tracked, Patterns{}); k {
	case BuildCargoTarget, BuildFlutterOutput:
		return k
	case BuildCacheDir:
		return BuildCargoTarget
	}
	return BuildNone
}

// archiveShapes returns, for every directory of the archive's tree below
// its root, the facts StructureKind reads of it, as a tree on disk gives
// them before any walk: its direct children (a file or link each entry, a
// directory each deeper path, marked when it holds a .fingerprint/
// directory), and the signature of its CACHEDIR.TAG when f found it signed.
func archiveShapes(f ArchiveStripFacts) map[string]BuildFacts {
	signed := map[string]bool{}
	for _, p := range f.SignedTags {
		signed[p] = true
	}
	children := map[string]map[string]EntryKind{}
	profiles := map[string]bool{} // directories holding a .fingerprint/ directory
	for _, e := range f.Entries {
		kind := EntryFile
		if e.Mode == "120000" {
			kind = EntrySymlink
		}
		for p := e.Path; path.Dir(p) != "."; p = path.Dir(p) {
			dir, name := path.Dir(p), path.Base(p)
			m := children[dir]
			if m == nil {
				m = map[string]EntryKind{}
				children[dir] = m
			}
			if _, seen := m[name]; seen && kind == EntryDir {
				break // an earlier entry recorded this directory and all above it
			}
			m[name] = kind
			if kind == EntryDir && name == ".fingerprint" {
				profiles[dir] = true
			}
			kind = EntryDir
		}
	}
	out := make(map[string]BuildFacts, len(children))
	for dir, m := range children {
		bf := BuildFacts{Path: dir, Kind: EntryDir}
		for name, kind := range m {
			bf.Children = append(bf.Children, BuildChild{Name: name, Kind: kind, Fingerprint: kind == EntryDir && profiles[dir+"/"+name]})
		}
		slices.SortFunc(bf.Children, func(a, b BuildChild) int { return strings.Compare(a.Name, b.Name) })
		if signed[dir+"/CACHEDIR.TAG"] {
			bf.CacheDirTag = CacheDirSignature
		}
		out[dir] = bf
	}
	return out
}

// strippable reports whether everything at and below c is a pure
// addition the archive may drop: HEAD holds nothing at, below or above c
// as a file, no nested repository is at or below it, and no link below it
// leads outside it (absolute, or climbing above it lexically).
func strippable(c string, f ArchiveStripFacts, head, headDirs map[string]bool) bool {
	if head[c] || headDirs[c] {
		return false
	}
	for d := path.Dir(c); d != "."; d = path.Dir(d) {
		if head[d] {
			return false
		}
	}
	for _, n := range f.Nested {
		if n == c || strings.HasPrefix(n, c+"/") {
			return false
		}
	}
	for _, e := range f.Entries {
		rest, ok := strings.CutPrefix(e.Path, c+"/")
		if !ok || e.Mode != "120000" {
			continue
		}
		t, known := f.LinkTargets[e.Path]
		if !known || path.IsAbs(t) {
			return false
		}
		if j := path.Join(path.Dir(rest), t); j == ".." || strings.HasPrefix(j, "../") {
			return false
		}
	}
	return true
}

// StrippedManifest is m after its build output dirs were stripped from the
// patch: the new tree of its files (kept lists its paths), the new
// dirty.patch's digest and size, the stripped directories listed as build
// output left out, and the recorded modes of only what a restore still
// makes.
func StrippedManifest(m ArchiveManifest, dirs []DiscardedDir, worktreeTree string, kept []string, patchSHA string, patchSize int64) ArchiveManifest {
	n := m
	n.WorktreeTree = worktreeTree
	n.Modes = m.Modes.Within(kept, m.EmptyDirs, m.NestedPaths())
	n.Files = slices.Clone(m.Files)
	for i, f := range n.Files {
		if f.Name == ArchivePatchName {
			n.Files[i].SHA256, n.Files[i].Size = patchSHA, patchSize
		}
	}
	n.BuildOutput = append(slices.Clone(m.BuildOutput), dirs...)
	slices.SortFunc(n.BuildOutput, func(a, b DiscardedDir) int { return strings.Compare(a.Path, b.Path) })
	return n
}
