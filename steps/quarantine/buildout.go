package quarantine

import (
	"io/fs"
	"path"
	"path/filepath"
	"slices"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
)

// discardRoot returns the discarded directory at or above rel, and the
// kind of build output it was recognised as.
func (m Manifest) discardRoot(rel string) (string, machine.BuildKind, bool) {
	for p := rel; p != "." && p != "/" && p != ""; p = path.Dir(p) {
		if want, ok := m[p]; ok && want.Kind == "discard" {
			return p, want.Build, true
		}
	}
	return "", machine.BuildNone, false
}

// discardUnexpected says why the entry rel at full (lstat fi), at or below
// the discarded directory root recognised as kind, may not be deleted with
// it, "" when it may: a .git entry, a git directory or a special file is
// never build output, a directory recognised by structure is still a
// directory, and a __pycache__/ holds only bytecode files.
func discardUnexpected(kind machine.BuildKind, rel, root, full string, fi fs.FileInfo) string {
	mode := fi.Mode()
	switch {
	case rel == root && kind != machine.BuildDisposable && !mode.IsDir():
		return "build output " + root + " is no longer a directory"
	case path.Base(rel) == ".git":
		return "a .git entry in build output " + root
	case mode.IsDir() || mode&fs.ModeSymlink != 0:
	case !mode.IsRegular():
		return "a special file in build output " + root
	case path.Base(rel) == "HEAD" && observe.IsGitDir(filepath.Dir(full)):
		return "a git directory in build output " + root
	}
	if kind == machine.BuildPythonBytecode && rel != root && (!mode.IsRegular() || !machine.IsBytecode(path.Base(rel))) {
		return "not Python bytecode, in " + root
	}
	return ""
}

// reclassified classifies each discarded directory of m again in the
// quarantine q, against what HEAD holds by m and the disposable patterns,
// and returns the first one that is no longer the kind of build output it
// was recognised as, with why ("" when every one still is).
func (m Manifest) reclassified(q string, disposable machine.Patterns) (stray, why string) {
	var roots, tracked []string
	for p, want := range m {
		switch want.Kind {
		case "discard":
			roots = append(roots, p)
		case "file", "link", "dir":
			tracked = append(tracked, p)
		}
	}
	slices.Sort(roots)
	set := machine.TrackedPaths(tracked)
	for _, r := range roots {
		want := m[r].Build
		if got, f := observe.ClassifyBuild(q, r, set, disposable); got != want {
			why := "no longer recognised as " + string(want) + " build output"
			switch {
			case f.GitEntry != "":
				why += ": it holds a repository at " + f.GitEntry
			case f.Unreadable != "":
				why += ": " + f.Unreadable + " cannot be read"
			case f.Special != "":
				why += ": it holds a special file " + f.Special
			case len(f.Escaping) > 0:
				why += ": its link " + f.Escaping[0].Path + " leads outside it"
			}
			return filepath.Join(q, filepath.FromSlash(r)), why
		}
	}
	return "", ""
}
