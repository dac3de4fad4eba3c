package machine

import (
	"path"
	"strings"
)

// BuildKind names what kind of regenerable build output a directory is,
// recognised by its structure (ClassifyBuildOutput), never by its name
// alone.
type BuildKind string

// The kinds of build output custody recognises. BuildNone is "not build
// output": the directory's content counts as the person's.
const (
	BuildNone BuildKind = ""
	// BuildCargoTarget is a Cargo target directory: a .rustc_info.json or
	// a profile directory holding .fingerprint/.
	BuildCargoTarget BuildKind = "cargo-target"
	// BuildNodeModules is node_modules/ beside a lockfile HEAD tracks.
	BuildNodeModules BuildKind = "node-modules"
	// BuildPythonVenv is a Python virtualenv: pyvenv.cfg at its root.
	BuildPythonVenv BuildKind = "python-venv"
	// BuildPythonBytecode is __pycache__/ holding only *.pyc and *.pyo
	// files.
	BuildPythonBytecode BuildKind = "python-bytecode"
	// BuildFlutterOutput is build/ or .dart_tool/ beside a tracked
	// pubspec.yaml.
	BuildFlutterOutput BuildKind = "flutter-output"
	// BuildCacheDir is any directory holding a CACHEDIR.TAG with the
	// standard signature.
	BuildCacheDir BuildKind = "cachedir-tag"
	// BuildDisposable matches a [cleanup] disposable pattern of an
	// approved custody.toml.
	BuildDisposable BuildKind = "disposable"
)

// CacheDirSignature is what a valid CACHEDIR.TAG begins with (the Cache
// Directory Tagging Specification, which Cargo follows).
const CacheDirSignature = "Signature: 8a477f597d28d172789f06886806bc55"

// nodeLockfiles are the lockfiles whose tracked presence beside a
// node_modules/ makes it regenerable.
var nodeLockfiles = []string{"package-lock.json", "yarn.lock", "pnpm-lock.yaml", "bun.lockb", "npm-shrinkwrap.json"}

// BuildChild is one direct entry of a candidate directory.
type BuildChild struct {
	Name string
	Kind EntryKind
	// Fingerprint is true for a directory that holds a .fingerprint
	// directory (a Cargo profile).
	Fingerprint bool
}

// BuildLink is a symbolic link found below a candidate, with its target
// as read.
type BuildLink struct {
	// Path is relative to the candidate, slash-separated.
	Path   string
	Target string
}

// BuildFacts is what observe found at one candidate path of a tree: its
// shape (always) and, once Walked, everything below it. Paths are
// slash-separated and relative to the tree's root.
type BuildFacts struct {
	Path string
	Kind EntryKind
	// Children are the direct entries of a directory.
	Children []BuildChild
	// CacheDirTag is the first bytes of a regular CACHEDIR.TAG child
	// ("" when there is none); CacheDirTagErr says why it could not be
	// read.
	CacheDirTag    string
	CacheDirTagErr string
	// PyvenvCfg is the content of a regular pyvenv.cfg child.
	PyvenvCfg string

	// Walked is true once the fields below were observed by walking
	// everything below Path without following symbolic links.
	Walked bool
	// GitEntry is the first .git entry (file, directory or symlink), or
	// directory that is a git directory (HEAD, objects/, refs/), found at
	// or below Path; "" when there is none.
	GitEntry string
	// Special is the first entry that is neither a regular file, a
	// directory nor a symbolic link.
	Special string
	// Unreadable says what could not be read, and why.
	Unreadable string
	// Escaping lists the symbolic links whose target leaves Path
	// (LinkEscapes).
	Escaping []BuildLink
	// Bytes is the size of every regular file and symlink below Path.
	Bytes int64
}

// DiscardedDir is one directory (or file) of build output a removal
// discards with the tree: recognised by structure or declared disposable,
// holding no repository, nothing tracked and nothing unrecognised.
type DiscardedDir struct {
	Path  string    `json:"path"`
	Kind  BuildKind `json:"kind"`
	Bytes int64     `json:"bytes"`
}

// TrackedSet answers which paths HEAD holds, and which directories hold a
// tracked path.
type TrackedSet struct {
	files map[string]bool
	dirs  map[string]bool
}

// NewTrackedSet indexes the tracked entries.
func NewTrackedSet(tracked []TrackedEntry) TrackedSet {
	t := TrackedSet{files: make(map[string]bool, len(tracked)), dirs: map[string]bool{}}
	for _, e := range tracked {
		t.files[e.Path] = e.Mode != "160000"
		for d := path.Dir(e.Path); d != "." && d != "/" && !t.dirs[d]; d = path.Dir(d) {
			t.dirs[d] = true
		}
	}
	return t
}

// TrackedPaths is NewTrackedSet over bare paths, each a tracked file.
func TrackedPaths(paths []string) TrackedSet {
	ents := make([]TrackedEntry, len(paths))
	for i, p := range paths {
		ents[i] = TrackedEntry{Path: p, Mode: "100644"}
	}
	return NewTrackedSet(ents)
}

// AtOrBelow reports whether p, or anything below it, is tracked.
func (t TrackedSet) AtOrBelow(p string) bool {
	_, ok := t.files[p]
	return ok || t.dirs[p]
}

// File reports whether p is tracked as a file or symlink (not a gitlink).
func (t TrackedSet) File(p string) bool { return t.files[p] }

// Gitlink reports whether p is tracked as a gitlink (a submodule's
// commit): git looks at nothing below it.
func (t TrackedSet) Gitlink(p string) bool {
	file, ok := t.files[p]
	return ok && !file
}

// LinkEscapes reports whether a symbolic link at link (relative to a
// candidate directory, slash-separated) whose target is target points
// outside that directory: an absolute target, or a relative one whose
// lexical resolution climbs above it.
func LinkEscapes(link, target string) bool {
	if target == "" || strings.HasPrefix(target, "/") {
		return true
	}
	depth := strings.Count(path.Dir(link), "/") + 1
	if path.Dir(link) == "." {
		depth = 0
	}
	for _, part := range strings.Split(target, "/") {
		switch part {
		case "", ".":
		case "..":
			depth--
			if depth < 0 {
				return true
			}
		default:
			depth++
		}
	}
	return false
}

// StructureKind decides what kind of build output the shape of f alone
// makes it (its name, its direct children, its CACHEDIR.TAG, what HEAD
// tracks beside it), before anything below it is walked. BuildNone means
// it cannot be build output, whatever it holds; any other kind still
// needs ClassifyBuildOutput over the walked facts. It is pure.
func StructureKind(f BuildFacts, tracked TrackedSet, disposable Patterns) BuildKind {
	if f.Path == "" || f.Path == "." || tracked.AtOrBelow(f.Path) {
		return BuildNone
	}
	if f.Kind != EntryDir {
		if f.Kind != EntryOther && disposable.Match(f.Path, false) {
			return BuildDisposable
		}
		return BuildNone
	}
	if disposable.Match(f.Path, true) {
		return BuildDisposable
	}
	child := map[string]BuildChild{}
	for _, c := range f.Children {
		child[c.Name] = c
	}
	tag, hasTag := child["CACHEDIR.TAG"]
	if hasTag && (tag.Kind != EntryFile || f.CacheDirTagErr != "" || !strings.HasPrefix(f.CacheDirTag, CacheDirSignature)) {
		// A tag that claims a cache but does not carry the signature is
		// ambiguous: the directory is not recognised by any rule.
		return BuildNone
	}
	name, parent := path.Base(f.Path), path.Dir(f.Path)
	beside := func(file string) string {
		if parent == "." {
			return file
		}
		return parent + "/" + file
	}
	if c, ok := child[".rustc_info.json"]; ok && c.Kind == EntryFile {
		return BuildCargoTarget
	}
	for _, c := range f.Children {
		if c.Kind == EntryDir && c.Fingerprint {
			return BuildCargoTarget
		}
	}
	if c, ok := child["pyvenv.cfg"]; ok && c.Kind == EntryFile {
		return BuildPythonVenv
	}
	switch name {
	case "node_modules":
		if nodeModulesAt(f.Path, tracked) {
			return BuildNodeModules
		}
	case "__pycache__":
		if onlyBytecode(f.Children) {
			return BuildPythonBytecode
		}
	case "build", ".dart_tool":
		if tracked.File(beside("pubspec.yaml")) {
			return BuildFlutterOutput
		}
	}
	if hasTag {
		return BuildCacheDir
	}
	return BuildNone
}

// nodeModulesAt reports whether the node_modules directory at p is
// regenerable from what HEAD tracks: a lockfile beside it, or, for a
// workspace package (a tracked package.json beside it), a lockfile in a
// directory above it (the workspace root).
func nodeModulesAt(p string, tracked TrackedSet) bool {
	parent := path.Dir(p)
	in := func(dir, file string) string {
		if dir == "." {
			return file
		}
		return dir + "/" + file
	}
	for dir := parent; ; dir = path.Dir(dir) {
		for _, l := range nodeLockfiles {
			if tracked.File(in(dir, l)) {
				return true
			}
		}
		if dir == "." || dir == "/" || !tracked.File(in(parent, "package.json")) {
			return false
		}
	}
}

// onlyBytecode reports whether children are at least one entry and every
// one a regular *.pyc or *.pyo file.
func onlyBytecode(children []BuildChild) bool {
	for _, c := range children {
		if c.Kind != EntryFile || !IsBytecode(c.Name) {
			return false
		}
	}
	return len(children) > 0
}

// IsBytecode reports whether name is a Python bytecode file's name.
func IsBytecode(name string) bool {
	return strings.HasSuffix(name, ".pyc") || strings.HasSuffix(name, ".pyo")
}

// ClassifyBuildOutput decides whether the candidate f is regenerable build
// output, and of which kind: its structure must be recognised
// (StructureKind), and walking everything below it must have found no
// .git entry or git directory at any depth, nothing tracked, nothing
// unreadable, no special file and no symbolic link leaving it (except a
// virtualenv's interpreter links into the home its pyvenv.cfg names, and a
// node_modules/ link to a directory HEAD tracks in the same tree: a
// workspace package).
// Facts that were not walked are never build output. It is pure.
func ClassifyBuildOutput(f BuildFacts, tracked TrackedSet, disposable Patterns) BuildKind {
	kind := StructureKind(f, tracked, disposable)
	if kind == BuildNone || !f.Walked || f.GitEntry != "" || f.Special != "" || f.Unreadable != "" {
		return BuildNone
	}
	home := venvHome(f.PyvenvCfg)
	for _, l := range f.Escaping {
		if !(kind == BuildPythonVenv && venvInterpreter(l, home)) && !(kind == BuildNodeModules && workspaceLink(f.Path, l, tracked)) {
			return BuildNone
		}
	}
	return kind
}

// venvHome is the "home" key of a pyvenv.cfg: the directory of the
// interpreter the virtualenv was made from.
func venvHome(cfg string) string {
	for _, line := range strings.Split(cfg, "\n") {
		k, v, ok := strings.Cut(line, "=")
		if ok && strings.TrimSpace(k) == "home" {
			return path.Clean(strings.TrimSpace(v))
		}
	}
	return ""
}

// venvInterpreter reports whether l is a virtualenv's interpreter link:
// bin/python* pointing at an absolute path in the directory home names.
func venvInterpreter(l BuildLink, home string) bool {
	dir, name := path.Split(l.Path)
	return home != "" && home != "." && dir == "bin/" && strings.HasPrefix(name, "python") &&
		strings.HasPrefix(l.Target, "/") && path.Dir(path.Clean(l.Target)) == home
}

// workspaceLink reports whether l, below the candidate dir, is a relative
// link that stays in the same tree and leads to a directory holding
// tracked paths (how npm, yarn and pnpm workspaces link a package of the
// repository into node_modules/) or into another node_modules/ that is
// regenerable (how pnpm links a workspace package's dependencies into the
// root's node_modules/.pnpm/): deleting the link loses nothing HEAD does
// not hold or a tool does not regenerate.
func workspaceLink(dir string, l BuildLink, tracked TrackedSet) bool {
	if strings.HasPrefix(l.Target, "/") {
		return false
	}
	to := path.Join(path.Dir(dir+"/"+l.Path), l.Target)
	if to == "." || to == ".." || strings.HasPrefix(to, "../") {
		return false
	}
	if tracked.dirs[to] {
		return true
	}
	parts := strings.Split(to, "/")
	for i, p := range parts {
		if p == "node_modules" && nodeModulesAt(strings.Join(parts[:i+1], "/"), tracked) {
			return true
		}
	}
	return false
}

// WithoutBuildOutput returns the observation's status and unaccounted
// content less what lies at or below one of its discarded directories:
// untracked and ignored paths, and entries HEAD does not track. What is
// left is the tree's extra content that keeps it.
func WithoutBuildOutput(o WorktreeObservation) (Status, []Unaccounted) {
	if len(o.Discarded) == 0 {
		return o.Status, o.Content
	}
	below := func(p string) bool {
		p = strings.TrimSuffix(p, "/")
		for _, d := range o.Discarded {
			if p == d.Path || strings.HasPrefix(p, d.Path+"/") {
				return true
			}
		}
		return false
	}
	keep := func(ps []string) []string {
		var out []string
		for _, p := range ps {
			if !below(p) {
				out = append(out, p)
			}
		}
		return out
	}
	st := o.Status
	st.Untracked, st.Ignored = keep(st.Untracked), keep(st.Ignored)
	var content []Unaccounted
	for _, u := range o.Content {
		if u.Code != CodeUntrackedContent || !below(u.Path) {
			content = append(content, u)
		}
	}
	return st, content
}
