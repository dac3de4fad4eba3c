package steps

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/safefile"
)

// AppendExclude adds line to <common>/info/exclude, under a comment saying
// why, unless the file already holds it (or it without a trailing slash).
// It reports whether it added the line.
//
// It never writes through a symlink: info/ must be a directory of the git
// directory's own (safefile.DirBelow) and the file is replaced only when it
// is a regular file. An exclude file a person keeps elsewhere behind a link
// that already holds the line is left as it is; one that lacks it is an
// unsafe-target refusal whose retry appends the line to the file the link
// names, the person's own choice to write there.
func AppendExclude(common, line, why string) (bool, error) {
	path := filepath.Join(common, "info", "exclude")
	if err := safefile.DirBelow(common, filepath.Dir(path), true, 0o755); errors.Is(err, safefile.ErrNotDirectory) {
		return false, machine.ExcludeDirRefusal(path, line, err)
	} else if err != nil {
		return false, err
	}
	b, err := safefile.Read(path, 16<<20)
	if errors.Is(err, safefile.ErrNotRegular) {
		if lb, lerr := safefile.ReadFollowing(path, 16<<20); lerr == nil && holdsLine(lb, line) {
			return false, nil
		}
		target, terr := filepath.EvalSymlinks(path)
		if terr != nil {
			return false, machine.ExcludeLinkRefusal(path, line, err)
		}
		return false, machine.ExcludeLinkedRefusal(path, line, target, err)
	}
	if err != nil && !os.IsNotExist(err) {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	if holdsLine(b, line) {
		return false, nil
	}
	mode := os.FileMode(0o644)
	if fi, err := os.Lstat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	prefix := ""
	if len(b) > 0 && !strings.HasSuffix(string(b), "\n") {
		prefix = "\n"
	}
	out := string(b) + fmt.Sprintf("%s# %s\n%s\n", prefix, why, line)
	if err := WriteFile(path, []byte(out), mode); errors.Is(err, ErrNotRegularFile) {
		return false, machine.ExcludeNotRegularRefusal(path, line, err)
	} else if err != nil {
		return false, fmt.Errorf("update %s: %w", path, err)
	}
	return true, nil
}

// holdsLine reports whether exclude file b holds line (or it without a
// trailing slash) as a line of its own.
func holdsLine(b []byte, line string) bool {
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l == line || l == strings.TrimSuffix(line, "/") {
			return true
		}
	}
	return false
}
