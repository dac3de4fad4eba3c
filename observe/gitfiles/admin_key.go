package gitfiles

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/safefile"
)

// MarkerName is the ready marker's file name inside a worktree's git admin
// entry. It holds the id of the record that readied the worktree.
const MarkerName = "custody-ready"

// SmallFileLimit bounds the one-line files custody reads beside a tree (a
// .git file, an admin entry's gitdir, the ready marker).
const SmallFileLimit = 64 << 10

// AdminKeyOf returns the admin key git holds for the linked worktree at path,
// checked both ways: path/.git names <common>/worktrees/<key>, and that
// entry's gitdir file names path/.git back. Anything else returns "".
func AdminKeyOf(repo hostio.Repo, path string) string {
	dir, err := ReadGitFile(filepath.Join(path, ".git"))
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	if filepath.Dir(dir) != filepath.Join(repo.CommonDir, "worktrees") {
		return ""
	}
	key := filepath.Base(dir)
	back, err := safefile.Read(filepath.Join(dir, "gitdir"), SmallFileLimit)
	if err != nil {
		return ""
	}
	backPath := filepath.Clean(strings.TrimSpace(string(back)))
	if backPath != filepath.Join(path, ".git") {
		if real, err := filepath.EvalSymlinks(backPath); err != nil || real != filepath.Join(path, ".git") {
			return ""
		}
	}
	return key
}

// ReadMarker returns the record id in the ready marker of admin entry key.
func ReadMarker(repo hostio.Repo, key string) (string, error) {
	b, err := safefile.Read(filepath.Join(repo.AdminDir(key), MarkerName), SmallFileLimit)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	return strings.TrimSpace(string(b)), err
}
