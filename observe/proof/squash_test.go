package proof_test

import (
	"github.com/custody-sh/custody/observe/internal/gitsandbox"
	"testing"
)

// TestProveCancellingCommits: HEAD adds a file and then reverts it; neither
// Commit is on any remote. HEAD's tree equals the merge base's, so merging
// HEAD into origin/main trivially gives main's tree, yet the file's content
// exists only in those two unpublished commits (DESIGN §1: every commit and
// every byte must be recoverable elsewhere). An empty base..HEAD change set
// publishes nothing: Prove finds no proof.
func TestProveCancellingCommits(t *testing.T) {
	t.Parallel()
	s := gitsandbox.NewSandbox(t)
	dir := s.NewOrigin()
	s.Git(dir, "switch", "-q", "-c", "work")
	s.CommitFile(dir, "feature.txt", "only here\n")
	s.Git(dir, "revert", "--no-edit", "HEAD")
	head := s.Rev(dir, "HEAD")
	repo := s.Discover(dir)
	if p := s.Prove(repo, head, s.Advertise(repo)); p != nil {
		t.Errorf("proof %+v for two commits no remote has (an addition and its revert)", p)
	}
}
