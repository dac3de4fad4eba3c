package gitfiles

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/custody-sh/custody/observe/safefile"
)

// ErrNotGitFile is returned when a .git file does not hold what git would
// read as a git directory: the "gitdir: " prefix is missing, the path is
// empty, or it holds a NUL byte.
var ErrNotGitFile = errors.New("not a gitfile")

// ErrBadCommonDir is returned when a git directory's commondir file does
// not hold what git would read as a path: it is empty, or holds a NUL byte.
var ErrBadCommonDir = errors.New("not a commondir file")

// ParseGitFile returns the git directory named by b, the content of a .git
// file in the directory dir, exactly as git reads one (setup.c,
// read_gitfile_gently): b must begin with "gitdir: " (nothing before it,
// not even a space); every CR and LF at its end is dropped and nothing
// else, so a trailing or leading space is part of the path, as git has it;
// a relative path is relative to dir. A NUL byte, which git would read as
// the path's end, is refused rather than guessed at. The result is
// cleaned, not resolved: no symlink is followed. It is pure.
func ParseGitFile(b []byte, dir string) (string, error) {
	rest, ok := bytes.CutPrefix(b, []byte("gitdir: "))
	if !ok {
		return "", fmt.Errorf("%w: it does not begin with \"gitdir: \"", ErrNotGitFile)
	}
	p, err := gitPath(rest, dir)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrNotGitFile, err)
	}
	return p, nil
}

// ParseCommonDir returns the common dir named by b, the content of the
// commondir file of the git directory gitDir, as git reads it (setup.c,
// get_common_dir_noenv): every CR and LF at its end dropped, nothing else;
// a relative path is relative to gitDir. An empty path or a NUL byte is
// ErrBadCommonDir. The result is cleaned, not resolved. It is pure.
func ParseCommonDir(b []byte, gitDir string) (string, error) {
	p, err := gitPath(b, gitDir)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrBadCommonDir, err)
	}
	return p, nil
}

// gitPath is the path b names as git reads a one-line path file: trailing
// CR and LF dropped, relative to dir, cleaned.
func gitPath(b []byte, dir string) (string, error) {
	b = bytes.TrimRight(b, "\r\n")
	switch {
	case len(b) == 0:
		return "", errors.New("it names no path")
	case bytes.IndexByte(b, 0) >= 0:
		return "", errors.New("its path holds a NUL byte")
	}
	p := string(b)
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	return filepath.Clean(p), nil
}

// ReadGitFile returns the git directory the .git file at path names
// (ParseGitFile, relative to the file's directory). The file must be a
// regular file of at most 64 KiB, never read through a symlink or blocking
// on a FIFO (safefile.Read): anything else is an error, one satisfying
// errors.Is(err, fs.ErrNotExist) when there is no file. An error names
// path.
func ReadGitFile(path string) (string, error) {
	b, err := safefile.Read(path, SmallFileLimit)
	if err != nil {
		return "", err
	}
	dir, err := ParseGitFile(b, filepath.Dir(path))
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return dir, nil
}

// ReadCommonDir returns the common dir the commondir file of the git
// directory gitDir names (ParseCommonDir), read as ReadGitFile reads a
// .git file. A git directory without one (a main checkout's, a bare
// repository) is an error satisfying errors.Is(err, fs.ErrNotExist): git
// then takes gitDir itself as the common dir, and so may the caller.
func ReadCommonDir(gitDir string) (string, error) {
	path := filepath.Join(gitDir, "commondir")
	b, err := safefile.Read(path, SmallFileLimit)
	if err != nil {
		return "", err
	}
	cd, err := ParseCommonDir(b, gitDir)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return cd, nil
}
