package machine

import (
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

// ArchiveStripFacts is what a strip decides over: the archive's tree (its
// worktree_tree: every file and link with mode and size, the target of
// every link, which CACHEDIR.TAG files begin with the standard signature,
// the content of each regular pyvenv.cfg), HEAD's entries, and from the
// manifest the nested repositories' roots, the empty directories, what
// git's index and status said at capture (Status) and the build output
// already left out (Done).
type ArchiveStripFacts struct {
	Entries     []ArchiveTreeEntry
	Head        []TrackedEntry
	SignedTags  []string
	LinkTargets map[string]string
	PyvenvCfgs  map[string]string
	Nested      []string
	EmptyDirs   []string
	Status      ArchiveStatus
	Done        []string
}

// DecideArchiveStrip decides whether the archive may have its build output
// stripped: the local checks prune makes first, in the same order (a valid
// manifest whose digests hold and nothing unrecorded in the directory,
// then the tree no longer present), then the manifest recording the
// index and status its tree was captured with (archive-status-unknown). A strip deletes no archive, so the
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
	case m.Status == nil:
		r := refuse(CodeArchiveStatusUnknown, d.Dir, "custody archive list",
			"archive %s does not record what the index and status of its tree %s said when it was captured, so the build output in its patch cannot be told from a person's work; it is kept whole", m.ID, m.Path)
		return m, &r
	}
	return m, nil
}

// PlanArchiveStrip returns the paths of the archive's tree to strip: the
// build output FindBuildOutput finds in it, the one decision a tree on disk
// is classified by, over the same facts the tree gave when it was
// captured. The index is HEAD's entries with the recorded staged changes
// (ArchiveStatus.Index), so only a project marker the index held counts
// and nothing the index held is stripped; what status reported is every
// path of the archive's tree the index does not hold, a directory status
// reported ignored as a whole standing for everything below it; and what
// each directory holds is what the archive's tree holds, with its empty
// directories, its nested repositories and the build output it already
// left out (archiveBuild). disposable are the approved [cleanup]
// disposable patterns, as a tree on disk is classified with. Sorted by
// path.
func PlanArchiveStrip(f ArchiveStripFacts, disposable Patterns) []DiscardedDir {
	tracked := NewTrackedSet(f.Status.Index(f.Head))
	src := newArchiveBuild(f)
	ignoredUnder := func(p string) string {
		for _, d := range f.Status.IgnoredDirs {
			if p == d || strings.HasPrefix(p, d+"/") {
				return d + "/"
			}
		}
		return p
	}
	var reported []string
	for _, e := range f.Entries {
		if _, ok := tracked.files[e.Path]; !ok {
			reported = append(reported, ignoredUnder(e.Path))
		}
	}
	for _, n := range f.Nested {
		if _, ok := tracked.files[n]; !ok {
			reported = append(reported, ignoredUnder(n))
		}
	}
	for _, d := range f.Status.IgnoredDirs {
		reported = append(reported, d+"/")
	}
	reported = append(reported, f.Done...)
	return FindBuildOutput(src, reported, tracked, disposable, f.Done)
}

// archiveBuild is an archive's tree as a BuildSource: what a tree on disk
// would show of each path, from the archive's facts alone.
type archiveBuild struct {
	f ArchiveStripFacts
	// entries are f.Entries sorted by path; dirs every directory (those
	// holding an entry, the empty ones, the nested roots, the build
	// output left out), sorted.
	entries []ArchiveTreeEntry
	dirs    []string
	isDir   map[string]bool
	byPath  map[string]ArchiveTreeEntry
	signed  map[string]bool
	// children maps a directory to the names of its direct entries.
	children map[string]map[string]bool
}

// newArchiveBuild indexes f.
func newArchiveBuild(f ArchiveStripFacts) *archiveBuild {
	a := &archiveBuild{f: f, isDir: map[string]bool{}, byPath: map[string]ArchiveTreeEntry{}, signed: map[string]bool{}, children: map[string]map[string]bool{}}
	a.entries = slices.Clone(f.Entries)
	slices.SortFunc(a.entries, func(x, y ArchiveTreeEntry) int { return strings.Compare(x.Path, y.Path) })
	for _, p := range f.SignedTags {
		a.signed[p] = true
	}
	link := func(p string) {
		for ; p != "." && p != ""; p = parentDir(p) {
			parent, name := parentDir(p), p[strings.LastIndexByte(p, '/')+1:]
			m := a.children[parent]
			if m == nil {
				m = map[string]bool{}
				a.children[parent] = m
			}
			if m[name] {
				return // this path and everything above it are recorded
			}
			m[name] = true
		}
	}
	dir := func(p string) {
		for d := p; d != "." && d != "" && !a.isDir[d]; d = parentDir(d) {
			a.isDir[d] = true
			a.dirs = append(a.dirs, d)
		}
		link(p)
	}
	for _, e := range a.entries {
		a.byPath[e.Path] = e
		if e.Mode == "160000" {
			dir(e.Path)
			continue
		}
		dir(parentDir(e.Path))
		link(e.Path)
	}
	for _, ps := range [][]string{f.EmptyDirs, f.Nested, f.Done} {
		for _, p := range ps {
			dir(p)
		}
	}
	slices.Sort(a.dirs)
	return a
}

// kindOf is what the path p of the archive's tree is, as lstat would say
// of it on disk.
func (a *archiveBuild) kindOf(p string) EntryKind {
	if a.isDir[p] {
		return EntryDir
	}
	if e, ok := a.byPath[p]; ok {
		if e.Mode == "120000" {
			return EntrySymlink
		}
		return EntryFile
	}
	return EntryOther
}

// Shape is what BuildShape reads of rel on disk: its kind, its direct
// entries (a directory marked when it holds a .fingerprint directory), a
// signed CACHEDIR.TAG's signature and a regular pyvenv.cfg's content.
func (a *archiveBuild) Shape(rel string) BuildFacts {
	f := BuildFacts{Path: rel, Kind: a.kindOf(rel)}
	if f.Kind != EntryDir {
		return f
	}
	for name := range a.children[rel] {
		p := rel + "/" + name
		c := BuildChild{Name: name, Kind: a.kindOf(p)}
		c.Fingerprint = c.Kind == EntryDir && a.isDir[p+"/.fingerprint"]
		f.Children = append(f.Children, c)
		if c.Kind != EntryFile {
			continue
		}
		switch {
		case name == "CACHEDIR.TAG" && a.signed[p]:
			f.CacheDirTag = CacheDirSignature
		case name == "pyvenv.cfg":
			f.PyvenvCfg = a.f.PyvenvCfgs[p]
		}
	}
	slices.SortFunc(f.Children, func(x, y BuildChild) int { return strings.Compare(x.Name, y.Name) })
	return f
}

// Walk is what WalkBuild finds below f.Path on disk: a nested repository
// (a .git entry) or a git directory (a regular HEAD beside objects/ and
// refs/ directories) at or below it, the links below it that leave it,
// and the bytes of its files and links. The archive holds no special file
// and nothing unreadable; build output it already left out below f.Path
// is unknown content (Unreadable), since whatever it held would have been
// walked on disk. A link whose target was not read is unreadable too.
func (a *archiveBuild) Walk(f *BuildFacts) {
	f.Walked = true
	at := func(p string) bool { return p == f.Path || strings.HasPrefix(p, f.Path+"/") }
	for _, n := range a.f.Nested {
		if at(n) {
			f.GitEntry = n + "/.git"
			return
		}
	}
	for _, d := range a.f.Done {
		if strings.HasPrefix(d, f.Path+"/") {
			f.Unreadable = d + ": build output left out of the archive when it was captured"
			return
		}
	}
	gitDir := func(d string) bool {
		e, ok := a.byPath[d]
		return (ok && e.Mode == "160000") || (a.kindOf(d+"/HEAD") == EntryFile && a.isDir[d+"/objects"] && a.isDir[d+"/refs"])
	}
	if a.isDir[f.Path] && gitDir(f.Path) {
		f.GitEntry = f.Path
		return
	}
	for i := sortSearch(a.dirs, f.Path+"/"); i < len(a.dirs) && strings.HasPrefix(a.dirs[i], f.Path+"/"); i++ {
		if gitDir(a.dirs[i]) {
			f.GitEntry = a.dirs[i]
			return
		}
	}
	if f.Kind != EntryDir {
		e := a.byPath[f.Path]
		f.Bytes = e.Size
		if e.Mode == "120000" {
			a.link(f, ".", e.Path)
		}
		return
	}
	for i := sortSearchEntry(a.entries, f.Path+"/"); i < len(a.entries) && strings.HasPrefix(a.entries[i].Path, f.Path+"/"); i++ {
		e := a.entries[i]
		f.Bytes += e.Size
		if e.Mode == "120000" {
			a.link(f, e.Path[len(f.Path)+1:], e.Path)
		}
	}
}

// link records the link at p (rel below f.Path) in f: escaping when its
// target leaves f.Path, unreadable when its target is unknown.
func (a *archiveBuild) link(f *BuildFacts, rel, p string) {
	t, ok := a.f.LinkTargets[p]
	switch {
	case !ok:
		if f.Unreadable == "" {
			f.Unreadable = p + ": its target was not read"
		}
	case LinkEscapes(rel, t):
		f.Escaping = append(f.Escaping, BuildLink{Path: rel, Target: t})
	}
}

// sortSearch is the index of the first of the sorted ps not before p.
func sortSearch(ps []string, p string) int {
	i, _ := slices.BinarySearch(ps, p)
	return i
}

// sortSearchEntry is the index of the first of the sorted entries whose
// path is not before p.
func sortSearchEntry(es []ArchiveTreeEntry, p string) int {
	i, _ := slices.BinarySearchFunc(es, p, func(e ArchiveTreeEntry, p string) int { return strings.Compare(e.Path, p) })
	return i
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
	n.EmptyDirs = slices.DeleteFunc(slices.Clone(m.EmptyDirs), func(e string) bool {
		return slices.ContainsFunc(dirs, func(d DiscardedDir) bool { return e == d.Path || strings.HasPrefix(e, d.Path+"/") })
	})
	n.BuildOutput = append(slices.Clone(m.BuildOutput), dirs...)
	slices.SortFunc(n.BuildOutput, func(a, b DiscardedDir) int { return strings.Compare(a.Path, b.Path) })
	return n
}
