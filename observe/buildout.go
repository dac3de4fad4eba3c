package observe

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/safefile"
)

// buildFileLimit bounds what custody reads of a pyvenv.cfg.
const buildFileLimit = 64 << 10

// BuildOutput finds the regenerable build output of the tree at dir among
// the paths status reported untracked or ignored: machine.FindBuildOutput,
// the one decision a tree and its archive share, over the tree on disk
// (diskBuild: a candidate's shape by BuildShape, everything below it by
// WalkBuild, symlinks never followed). The result is sorted by path.
func BuildOutput(dir string, st machine.Status, tracked machine.TrackedSet, disposable machine.Patterns) []machine.DiscardedDir {
	return machine.FindBuildOutput(diskBuild(dir), slices.Concat(st.Untracked, st.Ignored), tracked, disposable, nil)
}

// diskBuild is the tree on disk at its root, as a machine.BuildSource.
type diskBuild string

// DiskBuild is the tree on disk at dir, as a machine.BuildSource: a
// candidate's shape by BuildShape, everything below it by WalkBuild.
func DiskBuild(dir string) machine.BuildSource { return diskBuild(dir) }

// Shape is BuildShape of rel.
func (d diskBuild) Shape(rel string) machine.BuildFacts { return BuildShape(string(d), rel) }

// Walk is WalkBuild of f.
func (d diskBuild) Walk(f *machine.BuildFacts) { WalkBuild(string(d), f) }

// ClassifyBuild observes the candidate rel (slash-separated, relative to
// the tree at dir) and decides what build output it is: its shape first,
// and only when that is recognised, everything below it.
func ClassifyBuild(dir, rel string, tracked machine.TrackedSet, disposable machine.Patterns) (machine.BuildKind, machine.BuildFacts) {
	f := BuildShape(dir, rel)
	if machine.StructureKind(f, tracked, disposable) == machine.BuildNone {
		return machine.BuildNone, f
	}
	WalkBuild(dir, &f)
	return machine.ClassifyBuildOutput(f, tracked, disposable), f
}

// BuildShape observes the candidate rel of the tree at dir without walking
// below it: what it is, its direct entries (and which of them hold a
// .fingerprint directory), the head of its CACHEDIR.TAG and its
// pyvenv.cfg.
func BuildShape(dir, rel string) machine.BuildFacts {
	full := filepath.Join(dir, filepath.FromSlash(rel))
	f := machine.BuildFacts{Path: rel, Kind: machine.EntryOther}
	fi, err := os.Lstat(full)
	if err != nil {
		return f
	}
	f.Kind = entryKind(fi.Mode())
	if f.Kind != machine.EntryDir {
		return f
	}
	ents, err := os.ReadDir(full)
	if err != nil {
		f.Kind = machine.EntryOther // unknown content is never build output
		return f
	}
	for _, e := range ents {
		c := machine.BuildChild{Name: e.Name(), Kind: entryKind(e.Type())}
		if c.Kind == machine.EntryDir {
			fp, err := os.Lstat(filepath.Join(full, e.Name(), ".fingerprint"))
			c.Fingerprint = err == nil && fp.IsDir()
		}
		f.Children = append(f.Children, c)
		switch {
		case c.Name == "CACHEDIR.TAG" && c.Kind == machine.EntryFile:
			head, err := readHead(filepath.Join(full, c.Name), len(machine.CacheDirSignature))
			f.CacheDirTag = string(head)
			if err != nil {
				f.CacheDirTagErr = err.Error()
			}
		case c.Name == "pyvenv.cfg" && c.Kind == machine.EntryFile:
			if b, err := safefile.Read(filepath.Join(full, c.Name), buildFileLimit); err == nil {
				f.PyvenvCfg = string(b)
			}
		}
	}
	return f
}

// WalkBuild walks everything below f's path in the tree at dir (lstat,
// symlinks never followed) and records in f what decides whether it is
// build output: a .git entry or git directory at any depth, a special
// file, what cannot be read, the symlinks that leave it, and the bytes it
// holds. It stops at the first .git, which settles the answer.
func WalkBuild(dir string, f *machine.BuildFacts) {
	root := filepath.Join(dir, filepath.FromSlash(f.Path))
	f.Walked = true
	if path.Base(f.Path) == ".git" {
		f.GitEntry = f.Path
		return
	}
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if err != nil {
			f.Unreadable = path.Join(f.Path, rel) + ": " + err.Error()
			return fs.SkipAll
		}
		if d.Name() == ".git" && p != root {
			f.GitEntry = path.Join(f.Path, rel)
			return fs.SkipAll
		}
		if d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			f.Unreadable = path.Join(f.Path, rel) + ": " + err.Error()
			return fs.SkipAll
		}
		switch m := info.Mode(); {
		case m.IsDir():
		case m&fs.ModeSymlink != 0:
			f.Bytes += info.Size()
			target, err := os.Readlink(p)
			if err != nil {
				f.Unreadable = path.Join(f.Path, rel) + ": " + err.Error()
				return fs.SkipAll
			}
			if machine.LinkEscapes(rel, target) {
				f.Escaping = append(f.Escaping, machine.BuildLink{Path: rel, Target: target})
			}
		case m.IsRegular():
			f.Bytes += info.Size()
			if d.Name() == "HEAD" && IsGitDir(filepath.Dir(p)) {
				f.GitEntry = path.Join(f.Path, path.Dir(rel))
				return fs.SkipAll
			}
		default:
			f.Special = path.Join(f.Path, rel)
			return fs.SkipAll
		}
		return nil
	})
}

// IsGitDir reports whether dir looks like a git directory without a .git
// entry (a bare repository, a --separate-git-dir): HEAD a regular file,
// objects/ and refs/ directories.
func IsGitDir(dir string) bool {
	for _, sub := range []string{"objects", "refs"} {
		fi, err := os.Lstat(filepath.Join(dir, sub))
		if err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}

// entryKind maps a file mode's type to an entry kind.
func entryKind(m fs.FileMode) machine.EntryKind {
	switch {
	case m.IsDir():
		return machine.EntryDir
	case m&fs.ModeSymlink != 0:
		return machine.EntrySymlink
	case m.IsRegular():
		return machine.EntryFile
	}
	return machine.EntryOther
}

// readHead reads at most n bytes from the start of the regular file at p,
// never through a symlink and never blocking on a FIFO.
func readHead(p string, n int) ([]byte, error) {
	file, err := safefile.Open(p, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New(p + " is " + safefile.Kind(fi))
	}
	buf := make([]byte, n)
	got, err := io.ReadFull(file, buf)
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		err = nil
	}
	return buf[:got], err
}
