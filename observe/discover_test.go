package observe_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/custody-sh/custody/observe"
)

// TestDiscoverNewlinePath: a repository whose path holds a newline is a
// valid git repository, and Discover identifies it (its main checkout is
// that path), not refusing rev-parse's answer as ambiguous.
func TestDiscoverNewlinePath(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	dir := filepath.Join(s.root, "two\nlines")
	s.git(s.root, "init", "-q", "-b", "main", dir)
	s.commitFile(dir, "README", "x\n")
	repo, err := observe.Discover(context.Background(), s.g, dir)
	if err != nil {
		t.Fatalf("Discover(%q): %v", dir, err)
	}
	if repo.MainCheckout != dir {
		t.Errorf("main checkout %q, want %q", repo.MainCheckout, dir)
	}
}
