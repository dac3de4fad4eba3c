package gitfiles_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/internal/gitsandbox"
)

// TestDiscoverNewlinePath: a repository whose path holds a newline is a
// valid git repository, and Discover identifies it (its main checkout is
// that path), not refusing rev-parse's answer as ambiguous.
func TestDiscoverNewlinePath(t *testing.T) {
	t.Parallel()
	s := gitsandbox.NewSandbox(t)
	dir := filepath.Join(s.Root, "two\nlines")
	s.Git(s.Root, "init", "-q", "-b", "main", dir)
	s.CommitFile(dir, "README", "x\n")
	repo, err := gitfiles.Discover(context.Background(), s.G, dir)
	if err != nil {
		t.Fatalf("Discover(%q): %v", dir, err)
	}
	if repo.MainCheckout != dir {
		t.Errorf("main checkout %q, want %q", repo.MainCheckout, dir)
	}
}
