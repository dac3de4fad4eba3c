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
func AppendExclude(common, line, why string) (bool, error) {
	path := filepath.Join(common, "info", "exclude")
	// A person may keep the file elsewhere behind a symlink: write the file
	// it names, durably, and leave the link as it is.
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	b, err := safefile.ReadFollowing(path, 16<<20)
	if err != nil && !os.IsNotExist(err) {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l == line || l == strings.TrimSuffix(line, "/") {
			return false, nil
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, err
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
		return false, &machine.Refusal{Code: machine.CodeUnsafeTarget, Path: path,
			Retry:   "make " + machine.QuoteArg(path) + " a regular file (or a symlink to one), then run the command again",
			Message: fmt.Sprintf("custody adds %s to git's exclude file, but %v", line, err)}
	} else if err != nil {
		return false, fmt.Errorf("update %s: %w", path, err)
	}
	return true, nil
}
