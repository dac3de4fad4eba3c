package gitfiles

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"

	"github.com/custody-sh/custody/observe/safefile"
)

// discoverFromFiles answers Discover's questions for dir by reading git's
// own files, the way git's discovery walks (setup.c,
// setup_git_directory_gently_1), in the one case it can answer exactly: a
// working tree whose nearest .git is a main checkout's directory or a linked
// tree's gitfile, both plain. It returns the common dir and the top level
// (both physical paths), and ok false whenever git might answer otherwise,
// so that Discover asks git:
//
//   - the environment names a ceiling or lets discovery cross file systems
//     (GIT_CEILING_DIRECTORIES, GIT_DISCOVERY_ACROSS_FILESYSTEM), or custody
//     runs as root under sudo (git then checks ownership against SUDO_UID);
//   - a directory on the way up holds a HEAD (git may take it for a git
//     directory of its own), lies on another file system, or is not owned by
//     this user (git's safe.directory check);
//   - the .git found is a symlink or anything but a directory or a regular
//     file, or what it names is not plainly a git directory (a HEAD that is
//     a ref or an object id, objects/ and refs/ in the common dir);
//   - the gitfile names a git directory without a commondir file (a
//     submodule's, a separate git dir), or one with its own config.worktree;
//   - the common dir's config is missing, holds a line that is not a plain
//     section header or key, or says anything of core.worktree, core.bare
//     other than false, includes, extensions, or a format version other than
//     0 or 1.
//
// It starts no process. TestDiscoverFromFilesAgreesWithGit holds it to
// git's answer on every layout it takes and on many it must leave to git.
func discoverFromFiles(dir string) (common, top string, ok bool) {
	for _, v := range []string{"GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM", "SUDO_UID"} {
		if _, set := os.LookupEnv(v); set {
			return "", "", false
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", "", false
	}
	start, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", "", false
	}
	startInfo, err := os.Stat(start)
	if err != nil || !startInfo.IsDir() {
		return "", "", false
	}
	dev, uid, ok := owner(startInfo)
	if !ok || uid != os.Geteuid() {
		return "", "", false
	}
	for level := start; ; {
		fi, err := os.Lstat(level)
		if err != nil || !fi.IsDir() {
			return "", "", false
		}
		if d, u, ok := owner(fi); !ok || d != dev || u != os.Geteuid() {
			return "", "", false
		}
		dotgit := filepath.Join(level, ".git")
		gi, err := os.Lstat(dotgit)
		switch {
		case err == nil:
			return plainGitDir(level, dotgit, gi)
		case !errors.Is(err, fs.ErrNotExist):
			return "", "", false
		}
		if _, err := os.Lstat(filepath.Join(level, "HEAD")); !errors.Is(err, fs.ErrNotExist) {
			return "", "", false
		}
		parent := filepath.Dir(level)
		if parent == level {
			return "", "", false
		}
		level = parent
	}
}

// plainGitDir answers for the working tree top whose .git at dotgit has
// the file info gi: a main checkout's directory, or a linked tree's gitfile
// naming an admin entry with a commondir file.
func plainGitDir(top, dotgit string, gi fs.FileInfo) (common, tree string, ok bool) {
	if _, uid, ok := owner(gi); !ok || uid != os.Geteuid() {
		return "", "", false
	}
	var gitDir string
	switch {
	case gi.IsDir():
		gitDir, common = dotgit, dotgit
		if _, err := os.Lstat(filepath.Join(gitDir, "commondir")); !errors.Is(err, fs.ErrNotExist) {
			return "", "", false
		}
	case gi.Mode().IsRegular():
		admin, err := ReadGitFile(dotgit)
		if err != nil {
			return "", "", false
		}
		if common, err = ReadCommonDir(admin); err != nil {
			return "", "", false
		}
		if _, err := os.Lstat(filepath.Join(admin, "config.worktree")); !errors.Is(err, fs.ErrNotExist) {
			return "", "", false
		}
		ai, err := os.Stat(admin)
		if err != nil || !ai.IsDir() {
			return "", "", false
		}
		if _, uid, ok := owner(ai); !ok || uid != os.Geteuid() {
			return "", "", false
		}
		gitDir = admin
	default:
		return "", "", false
	}
	if !plainHead(filepath.Join(gitDir, "HEAD")) || !isDir(filepath.Join(common, "objects")) || !isDir(filepath.Join(common, "refs")) {
		return "", "", false
	}
	if !plainConfig(filepath.Join(common, "config")) {
		return "", "", false
	}
	return common, top, true
}

// plainHead says whether path is a regular file holding one HEAD line git
// reads as a git directory's: a symbolic ref into refs/, or an object id.
func plainHead(path string) bool {
	b, err := safefile.Read(path, SmallFileLimit)
	headLine := regexp.MustCompile(`\A(?:ref: refs/[^\x00-\x20\x7f]+|[0-9a-f]{40}|[0-9a-f]{64})\n\z`)
	return err == nil && headLine.Match(b)
}

// isDir says whether path is a directory (a symlink to one counts, as git
// only asks whether it can enter it).
func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// plainConfig says whether the config file at path is one git reads as a
// plain working tree's (discoverFromFiles).
func plainConfig(path string) bool {
	b, err := safefile.Read(path, SmallFileLimit)
	if err != nil || !utf8Text(b) {
		return false
	}
	// configLine is one line of a plain git config: blank, a comment, a
	// section header with or without a quoted subsection of plain
	// characters, or a key with or without a value. riskyConfig matches
	// what makes git's answer differ from a plain working tree's (a work
	// tree or bare setting, includes, extensions, a format version git
	// may refuse), unless in the forms plainBare and plainVersion that
	// change nothing. They are compiled here, not when the package starts:
	// every custody command starts the package, few discover.
	configLine := regexp.MustCompile(`^\s*(?:[#;].*|\[[A-Za-z0-9.-]+(?: "[^"\\\x00-\x1f]*")?\]\s*|[A-Za-z][A-Za-z0-9-]*\s*(?:=.*)?)?$`)
	riskyConfig := regexp.MustCompile(`(?i)worktree|include|extensions|\bbare\b|repositoryformatversion`)
	plainBare := regexp.MustCompile(`(?i)^\s*bare\s*=\s*false\s*$`)
	plainVersion := regexp.MustCompile(`(?i)^\s*repositoryformatversion\s*=\s*[01]\s*$`)
	for _, line := range bytes.Split(b, []byte("\n")) {
		line = bytes.TrimSuffix(line, []byte("\r"))
		if !configLine.Match(line) {
			return false
		}
		if riskyConfig.Match(line) && !plainBare.Match(line) && !plainVersion.Match(line) {
			return false
		}
	}
	return true
}

// utf8Text says whether b is text git's config parser and these patterns
// read alike: no NUL, no byte above 0x7f.
func utf8Text(b []byte) bool {
	for _, c := range b {
		if c == 0 || c > 0x7f {
			return false
		}
	}
	return true
}
