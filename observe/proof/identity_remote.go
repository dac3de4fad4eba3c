package proof

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
)

// LocalRemotePath returns the filesystem path git reads for a remote URL
// that names a local repository, and false for any other URL (a network
// URL, an scp-like ssh address, or a transport helper such as ext::). It
// follows git's own rules (transport.c, connect.c): a `file://` URL is
// local whatever its host (git ignores it: file://localhost/p and
// file://h/p both read /p), and the whole rest is percent-decoded before
// the host is cut at the first slash (file://localhost%2Fp reads /p); a
// URL with
// another scheme is not local; `<transport>::<address>` is a helper; a
// colon before any slash is scp-like ssh; anything else is a path, taken
// relative to base (the directory git runs in) when it is relative.
func LocalRemotePath(url, base string) (string, bool) {
	if url == "" {
		return "", false
	}
	if rest, ok := strings.CutPrefix(url, "file://"); ok {
		// git decodes the whole rest first, then drops the host up to the
		// first slash: file://localhost%2Fp reads /p too.
		rest = percentDecode(rest)
		i := strings.IndexByte(rest, '/')
		if i < 0 {
			return "", false // git: no path specified
		}
		return filepath.Clean(rest[i:]), true
	}
	if isHelperURL(url) || strings.Contains(url, "://") {
		return "", false
	}
	colon := strings.IndexByte(url, ':')
	slash := strings.IndexByte(url, '/')
	if colon >= 0 && (slash < 0 || colon < slash) {
		return "", false // [user@]host:path
	}
	if !filepath.IsAbs(url) {
		url = filepath.Join(base, url)
	}
	return filepath.Clean(url), true
}

// isHelperURL reports whether url is `<transport>::<address>`, which git
// hands to the remote helper git-remote-<transport>.
func isHelperURL(url string) bool {
	i := strings.Index(url, "::")
	if i <= 0 {
		return false
	}
	for _, r := range url[:i] {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '+' || r == '.' || r == '-') {
			return false
		}
	}
	return true
}

// percentDecode decodes %XX escapes as git's url_decode does: an escape
// that is not two hex digits is kept as it is.
func percentDecode(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// fileID is a file's identity: the device and inode lstat or stat report.
// Two paths name the same directory exactly when their ids are equal,
// whatever symlinks, bind mounts or spellings lead to them.
type fileID struct{ dev, ino uint64 }

// statID returns path's identity, following symlinks. absent is true when
// nothing is there (ENOENT, ENOTDIR); any other failure is an error.
func statID(path string) (id fileID, isDir, absent bool, err error) {
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return fileID{}, false, true, nil
		}
		return fileID{}, false, false, err
	}
	dev, ino, ok := hostio.DevIno(fi)
	if !ok {
		return fileID{}, false, false, fmt.Errorf("stat %s: no device and inode", path)
	}
	return fileID{dev, ino}, fi.IsDir(), false, nil
}

// remoteGitDirs lists the git directories git may open for the local path
// p, in the order of git's enter_repo (p/.git, p, p.git/.git, p.git), each
// as the git dir and its common dir. A `.git` file is followed to the git
// dir it names. A candidate that cannot be read is an error: what it is
// would be unknown.
func remoteGitDirs(p string) ([][2]string, error) {
	var out [][2]string
	for _, c := range []string{p + "/.git", p, p + ".git/.git", p + ".git"} {
		_, isDir, absent, err := statID(c)
		if err != nil {
			return nil, fmt.Errorf("identify %s: %w", c, err)
		}
		if absent {
			continue
		}
		gitDir := c
		if !isDir {
			target, err := readGitfile(c)
			if err != nil {
				if filepath.Base(c) == ".git" {
					return nil, err
				}
				continue // a plain file (a bundle, say): not a git dir
			}
			gitDir = target
		}
		common := gitDir
		if b, err := readSmall(filepath.Join(gitDir, "commondir"), 64<<10); err == nil {
			cd := strings.TrimRight(string(b), "\n")
			if !filepath.IsAbs(cd) {
				cd = filepath.Join(gitDir, cd)
			}
			common = cd
		} else if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return nil, fmt.Errorf("identify %s: %w", gitDir, err)
		}
		out = append(out, [2]string{gitDir, common})
	}
	return out, nil
}

// readSmall reads the regular file at path (symlinks followed), of at most
// limit bytes. It never blocks on a FIFO or device: those, and larger
// files, are errors. A missing file is an error wrapping fs.ErrNotExist.
func readSmall(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ENOTDIR) {
			return nil, fmt.Errorf("read %s: %w", path, fs.ErrNotExist)
		}
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() || fi.Size() > limit {
		return nil, fmt.Errorf("read %s: not a regular file of at most %d bytes", path, limit)
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(io.LimitReader(f, limit+1)); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(buf.Len()) > limit {
		return nil, fmt.Errorf("read %s: more than %d bytes", path, limit)
	}
	return buf.Bytes(), nil
}

// readGitfile reads the "gitdir: PATH" a .git file holds, relative to the
// file's directory when PATH is relative. Files over 64 KiB, or without
// the prefix, are not gitfiles.
func readGitfile(path string) (string, error) {
	b, err := readSmall(path, 64<<10)
	if err != nil {
		return "", err
	}
	target, ok := strings.CutPrefix(strings.TrimRight(string(b), "\r\n"), "gitdir: ")
	if !ok || target == "" {
		return "", fmt.Errorf("%s is not a gitfile", path)
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(filepath.Dir(path), target)
	}
	return target, nil
}

// remoteIdentity is what custody knows of one local remote: whether it is
// this repository, and the object directories of the git dirs it may be.
type remoteIdentity struct {
	// Self explains why the remote is this repository, or is "".
	Self string
	// Borrows names the remote's git dir whose alternates reach this
	// repository's object store, or is "".
	Borrows string
	// Shallow is set when the git dir git opens for the remote is a
	// shallow repository.
	Shallow *shallowRepo
}

// identifyRemote decides, by device and inode, whether the local remote at
// path is this repository (its common dir, a linked worktree's git dir,
// the main checkout, or a git dir whose refs or objects directory is this
// repository's), whether its object store borrows this repository's
// objects through objects/info/alternates, and whether it is shallow.
func identifyRemote(repo hostio.Repo, path string) (remoteIdentity, error) {
	self, _, _, err := statID(repo.CommonDir)
	if err != nil {
		return remoteIdentity{}, fmt.Errorf("identify this repository %s: %w", repo.CommonDir, err)
	}
	selfObjects, _, _, err := statID(filepath.Join(repo.CommonDir, "objects"))
	if err != nil {
		return remoteIdentity{}, fmt.Errorf("identify this repository's objects: %w", err)
	}
	selfRefs, _, _, err := statID(filepath.Join(repo.CommonDir, "refs"))
	if err != nil {
		return remoteIdentity{}, fmt.Errorf("identify this repository's refs: %w", err)
	}
	dirs, err := remoteGitDirs(path)
	if err != nil {
		return remoteIdentity{}, err
	}
	var id remoteIdentity
	for _, d := range dirs {
		// A git dir of its own whose refs or objects directory is this
		// repository's (symlinked in) advertises this repository too.
		for _, c := range []struct {
			path, what string
			want       fileID
		}{
			{d[0], "git directory", self}, {d[1], "git directory", self},
			{filepath.Join(d[1], "refs"), "refs directory", selfRefs},
			{filepath.Join(d[1], "objects"), "object directory", selfObjects},
		} {
			got, _, absent, err := statID(c.path)
			if err != nil {
				return remoteIdentity{}, fmt.Errorf("identify %s: %w", c.path, err)
			}
			if !absent && got == c.want {
				return remoteIdentity{Self: c.path + " is this repository's " + c.what + " (in " + repo.CommonDir + ")"}, nil
			}
		}
		if id.Borrows != "" {
			continue
		}
		borrows, err := borrowsObjects(filepath.Join(d[1], "objects"), selfObjects, 0)
		if err != nil {
			return remoteIdentity{}, err
		}
		if borrows {
			id.Borrows = d[0]
		}
	}
	if id.Shallow, err = readShallow(dirs); err != nil {
		return remoteIdentity{}, err
	}
	return id, nil
}

// maxAlternateDepth is git's own bound on chained alternates.
const maxAlternateDepth = 5

// borrowsObjects reports whether the object directory objects reaches the
// object directory target through objects/info/alternates, followed as git
// follows them (relative to the object directory, chained). An alternates
// file that cannot be read exactly (not a regular file, unparsable, an
// entry that cannot be stat'ed) or a chain deeper than git follows is an
// error: whose objects the remote holds would be unknown.
func borrowsObjects(objects string, target fileID, depth int) (bool, error) {
	file := filepath.Join(objects, "info", "alternates")
	b, err := readSmall(file, 16<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("alternates: %w", err)
	}
	if depth >= maxAlternateDepth {
		return false, fmt.Errorf("alternates %s: chained deeper than git follows (%d)", file, maxAlternateDepth)
	}
	dirs, ok := ParseAlternates(b)
	if !ok {
		return false, fmt.Errorf("alternates %s: cannot be read exactly", file)
	}
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			d = filepath.Join(objects, d)
		}
		got, _, absent, err := statID(d)
		if err != nil {
			return false, fmt.Errorf("alternates %s: %w", file, err)
		}
		if absent {
			continue
		}
		if got == target {
			return true, nil
		}
		if deeper, err := borrowsObjects(d, target, depth+1); err != nil || deeper {
			return deeper, err
		}
	}
	return false, nil
}

// ParseAlternates reads an objects/info/alternates file as git does: one
// object directory a line, blank lines and lines starting with # skipped,
// a line starting with a double quote C-unquoted. ok is false when a quoted
// line does not unquote or a line is over 1 MiB: the file then says
// something custody cannot read exactly.
func ParseAlternates(b []byte) (dirs []string, ok bool) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		if line[0] == '"' {
			u, err := strconv.Unquote(line)
			if err != nil {
				return nil, false
			}
			line = u
		}
		dirs = append(dirs, line)
	}
	if sc.Err() != nil {
		return nil, false
	}
	return dirs, true
}

// ownObjectsComplete reports whether every object reachable from commits
// exists in gitDir's own object store, its alternates ignored: one `git
// Rev-list --objects --missing=print` over a throwaway git dir whose
// object directory links to gitDir's loose and pack directories and has no
// info/alternates. Any failure of the walk is false: what the store holds
// is then unknown.
func ownObjectsComplete(ctx context.Context, g *hostio.Git, gitDir string, commits []string) (bool, error) {
	if len(commits) == 0 {
		return true, nil
	}
	objects := filepath.Join(gitDir, "objects")
	if b, err := readSmall(filepath.Join(gitDir, "commondir"), 64<<10); err == nil {
		cd := strings.TrimRight(string(b), "\n")
		if !filepath.IsAbs(cd) {
			cd = filepath.Join(gitDir, cd)
		}
		objects = filepath.Join(cd, "objects")
	}
	entries, err := os.ReadDir(objects)
	if err != nil {
		return false, fmt.Errorf("read the object store %s: %w", objects, err)
	}
	tmp, err := os.MkdirTemp("", "custody-own-objects-")
	if err != nil {
		return false, fmt.Errorf("own objects of %s: %w", gitDir, err)
	}
	defer os.RemoveAll(tmp)
	for _, d := range []string{"objects", "refs"} {
		if err := os.Mkdir(filepath.Join(tmp, d), 0o700); err != nil {
			return false, fmt.Errorf("own objects of %s: %w", gitDir, err)
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, "HEAD"), []byte("ref: refs/heads/custody\n"), 0o600); err != nil {
		return false, fmt.Errorf("own objects of %s: %w", gitDir, err)
	}
	for _, e := range entries {
		if e.Name() == "info" {
			continue
		}
		if err := os.Symlink(filepath.Join(objects, e.Name()), filepath.Join(tmp, "objects", e.Name())); err != nil {
			return false, fmt.Errorf("own objects of %s: %w", gitDir, err)
		}
	}
	in := strings.Join(commits, "\n") + "\n"
	out, err := g.ObserveInput(ctx, tmp, []byte(in), "--git-dir="+tmp, "rev-list", "--objects", "--missing=print", "--stdin")
	if err != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		return false, nil
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "?") {
			return false, nil
		}
	}
	return true, nil
}

// remoteRefusal is the failure recorded for a remote that cannot prove,
// naming it and its URL with any credentials removed and control
// characters escaped (a URL may hold a newline; the message is one line).
func remoteRefusal(remote, url, why string) machine.RemoteFailure {
	return machine.RemoteFailure{Remote: remote, Error: fmt.Sprintf("remote %s (%s) %s", machine.EscapeControl(remote), shownURL(url), machine.EscapeControl(why))}
}
