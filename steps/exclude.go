package steps

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// AppendExclude adds line to <common>/info/exclude, under a comment saying
// why, unless the file already holds it (or it without a trailing slash).
// It reports whether it added the line.
func AppendExclude(common, line, why string) (bool, error) {
	path := filepath.Join(common, "info", "exclude")
	b, err := os.ReadFile(path)
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
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return false, fmt.Errorf("update %s: %w", path, err)
	}
	prefix := ""
	if len(b) > 0 && !strings.HasSuffix(string(b), "\n") {
		prefix = "\n"
	}
	if _, err := fmt.Fprintf(f, "%s# %s\n%s\n", prefix, why, line); err != nil {
		f.Close()
		return false, err
	}
	return true, f.Close()
}
