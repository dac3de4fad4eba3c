package clitest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/custody-sh/custody/fixtures"
)

// Exclude adds a line to the repository's info/exclude.
func Exclude(t *testing.T, r *fixtures.Repo, line string) {
	t.Helper()
	excl := filepath.Join(r.Dir, ".git", "info", "exclude")
	b, _ := os.ReadFile(excl)
	if err := os.WriteFile(excl, append(b, []byte("\n"+line+"\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
}
