package observe

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/safefile"
)

// buildFileLimit bounds what custody reads of a pyvenv.cfg.
const buildFileLimit = 64 << 10

// BuildOutput finds the regenerable build output of the tree at dir among
// the paths status reported untracked or ignored: each such path and every
// directory above it (below the root) is a candidate, outermost first; a
// candidate machine.StructureKind recognises is walked (symlinks never
// followed) and kept as discarded only when machine.ClassifyBuildOutput
// still recognises it. Paths below a discarded directory are not
// candidates again. The result is sorted by path.
func BuildOutput(dir string, st machine.Status, tracked machine.TrackedSet, disposable machine.Patterns) []machine.DiscardedDir {
	seen := map[string]bool{}
	var cands []string
	for _, p := range slices.Concat(st.Untracked, st.Ignored) {
		for p = strings.TrimSuffix(p, "/"); p != "." && p != "" && !seen[p]; p = path.Dir(p) {
			seen[p] = true
			cands = append(cands, p)
		}
	}
	slices.SortFunc(cands, func(a, b string) int {
		if d := strings.Count(a, "/") - strings.Count(b, "/"); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	var out []machine.DiscardedDir
	covered := func(p string) bool {
		for _, d := range out {
			if strings.HasPrefix(p, d.Path+"/") {
				return true
			}
		}
		return false
	}
	for _, c := range cands {
		if covered(c) || tracked.AtOrBelow(c) {
			continue
		}
		if kind, f := ClassifyBuild(dir, c, tracked, disposable); kind != machine.BuildNone {
			out = append(out, machine.DiscardedDir{Path: c, Kind: kind, Bytes: f.Bytes})
		}
	}
	slices.SortFunc(out, func(a, b machine.DiscardedDir) int { return strings.Compare(a.Path, b.Path) })
	return out
}

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
	file, err := os.OpenFile(p, os.O_RDONLY|oNoFollow|syscall.O_NONBLOCK, 0)
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
