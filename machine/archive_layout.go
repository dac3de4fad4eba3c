package machine

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
)

// ArchiveModes is the permission bits of a tree's files and directories
// as a capture found them. A manifest without it (an archive made before
// custody recorded them) restores files 0644 or 0755 and directories as
// the umask makes them.
//
// Modes are four octal digits ("0600", "2775"): the permission bits, and
// for a directory its setgid (2000) and sticky (1000) bits. A file's mode
// carries no setuid, setgid or sticky bit, and its owner's exec bit (100)
// is set exactly when its tree holds it executable (100755).
type ArchiveModes struct {
	// Root is the mode of the tree's own directory.
	Root string `json:"root"`
	// File, Executable and Directory are the modes of every file of git
	// mode 100644, every file of 100755, and every directory (a nested
	// repository's root included) that Entries does not name.
	File       string `json:"file"`
	Executable string `json:"executable"`
	Directory  string `json:"directory"`
	// Entries names each file and directory whose mode is not its kind's,
	// in byte order of path.
	Entries []ArchiveMode `json:"entries"`
}

// ArchiveMode is the mode of one file or directory of a tree.
type ArchiveMode struct {
	Path string `json:"path"`
	Mode string `json:"mode"`
}

// Mode bits a restore gives back: permissions for every file, plus setgid
// and sticky for a directory. No restore makes a setuid or setgid file.
const (
	fileModeBits uint32 = 0o777
	dirModeBits  uint32 = 0o777 | 0o2000 | 0o1000
	ownerExec    uint32 = 0o100
)

// ParseMode parses four octal digits into mode bits.
func ParseMode(s string) (uint32, bool) {
	if len(s) != 4 {
		return 0, false
	}
	u, err := strconv.ParseUint(s, 8, 32)
	return uint32(u), err == nil
}

// FormatMode writes mode bits as four octal digits.
func FormatMode(u uint32) string { return fmt.Sprintf("%04o", u&0o7777) }

// ModeOf is one file or directory's mode as a capture read it: Git is the
// git mode of a file ("100644", "100755"), "" for a directory.
type ModeOf struct {
	Path string
	Git  string
	Mode uint32
}

// CaptureModes returns the modes a manifest records for a tree whose root
// has mode root and whose files and directories have the modes listed:
// for each kind, the mode most of them have (the standard 0644, 0755,
// 0755 when none or tied), and every other one named.
func CaptureModes(root uint32, entries []ModeOf) *ArchiveModes {
	kind := func(e ModeOf) int {
		switch e.Git {
		case "":
			return 2
		case "100755":
			return 1
		}
		return 0
	}
	std := [3]uint32{0o644, 0o755, 0o755}
	bits := [3]uint32{fileModeBits, fileModeBits, dirModeBits}
	var counts [3]map[uint32]int
	for i := range counts {
		counts[i] = map[uint32]int{}
	}
	for _, e := range entries {
		k := kind(e)
		counts[k][e.Mode&bits[k]]++
	}
	var def [3]uint32
	for k := range def {
		// The most common; the standard one on a tie with it, else the
		// lowest of those tied.
		def[k] = std[k]
		best := counts[k][std[k]]
		for m, n := range counts[k] {
			if n > best || (n == best && def[k] != std[k] && m < def[k]) {
				def[k], best = m, n
			}
		}
	}
	out := &ArchiveModes{Root: FormatMode(root & dirModeBits), File: FormatMode(def[0]), Executable: FormatMode(def[1]),
		Directory: FormatMode(def[2]), Entries: []ArchiveMode{}}
	for _, e := range entries {
		k := kind(e)
		if m := e.Mode & bits[k]; m != def[k] {
			out.Entries = append(out.Entries, ArchiveMode{Path: e.Path, Mode: FormatMode(m)})
		}
	}
	slices.SortFunc(out.Entries, func(a, b ArchiveMode) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// Within is ms naming only the files of files and the directories a
// restore makes for files, emptyDirs and nested (those above a file,
// the empty directories, the nested roots and those above them): the
// modes of a tree some of whose files were left out. A nil ms stays nil.
func (ms *ArchiveModes) Within(files, emptyDirs, nested []string) *ArchiveModes {
	if ms == nil {
		return nil
	}
	keep := map[string]bool{}
	above := func(p string, self bool) {
		if self {
			keep[p] = true
		}
		for d := path.Dir(p); d != "." && !keep[d]; d = path.Dir(d) {
			keep[d] = true
		}
	}
	for _, f := range files {
		above(f, true)
	}
	for _, d := range emptyDirs {
		above(d, true)
	}
	for _, d := range nested {
		above(d, true)
	}
	out := *ms
	out.Entries = []ArchiveMode{}
	for _, e := range ms.Entries {
		if keep[e.Path] {
			out.Entries = append(out.Entries, e)
		}
	}
	return &out
}

// NestedPaths lists the roots of the manifest's nested repositories.
func (m ArchiveManifest) NestedPaths() []string {
	out := make([]string, 0, len(m.Nested))
	for _, n := range m.Nested {
		out = append(out, n.Path)
	}
	return out
}

// modesProblem is what is wrong with the recorded modes alone, or "".
func modesProblem(ms *ArchiveModes) string {
	if ms == nil {
		return ""
	}
	for _, d := range []struct{ name, v string }{{"root", ms.Root}, {"directory", ms.Directory}} {
		if u, ok := ParseMode(d.v); !ok || u&^dirModeBits != 0 {
			return fmt.Sprintf("modes: %s mode %q is not four octal digits of permission, setgid and sticky bits", d.name, d.v)
		}
	}
	for _, f := range []struct {
		name, v string
		exec    bool
	}{{"file", ms.File, false}, {"executable", ms.Executable, true}} {
		u, ok := ParseMode(f.v)
		if !ok || u&^fileModeBits != 0 || (u&ownerExec != 0) != f.exec {
			return fmt.Sprintf("modes: %s mode %q is not four octal digits of permission bits with the owner's exec bit %s", f.name, f.v, map[bool]string{true: "set", false: "clear"}[f.exec])
		}
	}
	seen := map[string]bool{}
	for _, e := range ms.Entries {
		if !TreePathSafe(e.Path) {
			return fmt.Sprintf("modes: %q leaves the tree", e.Path)
		}
		if seen[e.Path] {
			return fmt.Sprintf("modes: %q is named twice", e.Path)
		}
		seen[e.Path] = true
		if u, ok := ParseMode(e.Mode); !ok || u&^dirModeBits != 0 {
			return fmt.Sprintf("modes: %q has mode %q, which is not four octal digits of permission, setgid and sticky bits", e.Path, e.Mode)
		}
	}
	return ""
}

// layoutProblem is what is wrong with the paths the manifest itself
// names (nested repositories, empty directories), or "": one named twice,
// or one below another that holds none.
func layoutProblem(m ArchiveManifest) string {
	what := map[string]string{}
	var paths []string
	for _, n := range m.Nested {
		if what[n.Path] != "" {
			return fmt.Sprintf("%q is named twice (%s and nested repository)", n.Path, what[n.Path])
		}
		what[n.Path] = "nested repository"
		paths = append(paths, n.Path)
	}
	for _, d := range m.EmptyDirs {
		if what[d] != "" {
			return fmt.Sprintf("%q is named twice (%s and empty directory)", d, what[d])
		}
		what[d] = "empty directory"
		paths = append(paths, d)
	}
	for _, p := range paths {
		for a := path.Dir(p); a != "."; a = path.Dir(a) {
			if w := what[a]; w != "" {
				return fmt.Sprintf("%q lies inside %s %q", p, w, a)
			}
		}
	}
	return modesProblem(m.Modes)
}

// ImageEntry is one entry of a nested repository's tar image as read:
// its name relative to the nested root (no trailing slash), its kind and
// its mode bits.
type ImageEntry struct {
	Name string
	// Kind is "dir", "file" or "symlink", or what else the entry is ("a
	// character device", "a hard link", ...), which no restore writes.
	Kind string
	Mode uint32
}

// restore entry kinds.
const (
	kindFile     = "file"
	kindExec     = "executable file"
	kindLink     = "symbolic link"
	kindGitlink  = "submodule directory"
	kindEmpty    = "empty directory"
	kindNested   = "nested repository"
	kindImgDir   = "image directory"
	kindImgFile  = "image file"
	kindImgLink  = "image symbolic link"
	kindImplicit = "directory"
)

// holdsNothing reports whether kind is an entry no other entry may lie
// below: a file, a link, a submodule's or an empty directory.
func holdsNothing(kind string) bool {
	switch kind {
	case kindFile, kindExec, kindLink, kindGitlink, kindEmpty, kindImgFile, kindImgLink:
		return true
	}
	return false
}

// imageNameSafe reports whether an image entry's name is relative, clean
// and free of "..", "." and NUL (".git" is what a nested image holds).
func imageNameSafe(p string) bool {
	if p == "" || strings.ContainsRune(p, 0) || path.IsAbs(p) || path.Clean(p) != p {
		return false
	}
	for _, c := range strings.Split(p, "/") {
		if c == ".." || c == "." {
			return false
		}
	}
	return true
}

// CheckRestoreLayout checks everything a restore of m would write before
// it writes anything: the tree's entries (modes git writes, safe paths),
// the manifest's empty directories and nested repositories, and each
// nested image's entries (by nested root). No path may be named twice, or
// lie below a file, a symbolic link, a submodule's or an empty directory,
// or inside a nested repository unless its image holds it; an image holds
// only directories, files and links with safe names; and the recorded
// modes name only files and directories of the tree, consistent with its
// exec bits (judged only once tree is known: a nil tree checks the
// manifest and images alone, before the restore makes anything). It
// returns one archive-invalid refusal naming up to three problems, or nil
// when the restore may write.
func CheckRestoreLayout(dir string, m ArchiveManifest, tree []ArchiveTreeEntry, images map[string][]ImageEntry) *Refusal {
	var problems []string
	kinds := map[string]string{}
	add := func(p, kind string) {
		if k, ok := kinds[p]; ok {
			problems = append(problems, fmt.Sprintf("%s is named twice (%s and %s)", quoteLayout(p), k, kind))
			return
		}
		kinds[p] = kind
	}
	for _, e := range tree {
		if !TreePathSafe(e.Path) {
			problems = append(problems, fmt.Sprintf("its tree names %s, which leaves the target", quoteLayout(e.Path)))
			continue
		}
		switch e.Mode {
		case "100644":
			add(e.Path, kindFile)
		case "100755":
			add(e.Path, kindExec)
		case "120000":
			add(e.Path, kindLink)
		case "160000":
			add(e.Path, kindGitlink)
		default:
			problems = append(problems, fmt.Sprintf("its tree holds %s with mode %s, which no restore writes", quoteLayout(e.Path), e.Mode))
		}
	}
	for _, d := range m.EmptyDirs {
		add(d, kindEmpty)
	}
	nestedRoots := map[string]bool{}
	for _, n := range m.Nested {
		add(n.Path, kindNested)
		nestedRoots[n.Path] = true
	}
	roots := make([]string, 0, len(images))
	for r := range images {
		roots = append(roots, r)
	}
	slices.Sort(roots)
	for _, root := range roots {
		for _, e := range images[root] {
			p := root + "/" + e.Name
			if !imageNameSafe(e.Name) {
				problems = append(problems, fmt.Sprintf("the image of %s names %s, which leaves it", quoteLayout(root), quoteLayout(e.Name)))
				continue
			}
			switch e.Kind {
			case "dir":
				if e.Mode&^dirModeBits != 0 {
					problems = append(problems, fmt.Sprintf("the image of %s gives %s mode %s, which no restore writes", quoteLayout(root), quoteLayout(e.Name), FormatMode(e.Mode)))
				}
				add(p, kindImgDir)
			case "file":
				if e.Mode&^fileModeBits != 0 {
					problems = append(problems, fmt.Sprintf("the image of %s gives %s mode %s, which no restore writes", quoteLayout(root), quoteLayout(e.Name), FormatMode(e.Mode)))
				}
				add(p, kindImgFile)
			case "symlink":
				add(p, kindImgLink)
			default:
				problems = append(problems, fmt.Sprintf("the image of %s holds %s, %s, which no restore writes", quoteLayout(root), quoteLayout(e.Name), e.Kind))
			}
		}
	}
	paths := make([]string, 0, len(kinds))
	for p := range kinds {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	implicit := map[string]bool{}
	for _, p := range paths {
		inImage := strings.HasPrefix(kinds[p], "image ")
		for a := path.Dir(p); a != "."; a = path.Dir(a) {
			k, ok := kinds[a]
			if !ok {
				implicit[a] = true
				continue
			}
			if holdsNothing(k) {
				problems = append(problems, fmt.Sprintf("%s lies below %s, a %s", quoteLayout(p), quoteLayout(a), k))
				break
			}
			if k == kindNested && !inImage {
				problems = append(problems, fmt.Sprintf("%s lies inside nested repository %s, which only its image fills", quoteLayout(p), quoteLayout(a)))
				break
			}
		}
	}
	if ms := m.Modes; ms != nil && tree != nil {
		for _, e := range ms.Entries {
			u, _ := ParseMode(e.Mode)
			k, ok := kinds[e.Path]
			switch {
			case !ok && implicit[e.Path], k == kindEmpty, k == kindNested, k == kindGitlink:
				// a directory: any directory bits
			case k == kindFile || k == kindExec:
				if u&^fileModeBits != 0 || (u&ownerExec != 0) != (k == kindExec) {
					problems = append(problems, fmt.Sprintf("modes give the %s %s mode %s", k, quoteLayout(e.Path), e.Mode))
				}
			case !ok:
				problems = append(problems, fmt.Sprintf("modes name %s, which the tree does not hold", quoteLayout(e.Path)))
			default:
				problems = append(problems, fmt.Sprintf("modes name %s, a %s", quoteLayout(e.Path), k))
			}
		}
	}
	if len(problems) == 0 {
		return nil
	}
	r := refuse(CodeArchiveInvalid, dir, "custody archive verify "+QuotePath(dir),
		"archive %s in %s is refused, nothing was written: %s; a restore writes only inside its target and through no symbolic link",
		m.ID, dir, listSome(problems, 3))
	return &r
}

// quoteLayout quotes a path of an archive's tree for a refusal, its odd
// bytes escaped.
func quoteLayout(p string) string { return strconv.Quote(p) }
