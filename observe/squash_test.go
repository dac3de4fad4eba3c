package observe_test

import "testing"

// TestProveCancellingCommits: HEAD adds a file and then reverts it; neither
// commit is on any remote. HEAD's tree equals the merge base's, so merging
// HEAD into origin/main trivially gives main's tree, yet the file's content
// exists only in those two unpublished commits (DESIGN §1: every commit and
// every byte must be recoverable elsewhere). An empty base..HEAD change set
// publishes nothing: Prove finds no proof.
func TestProveCancellingCommits(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	dir := s.newOrigin()
	s.git(dir, "switch", "-q", "-c", "work")
	s.commitFile(dir, "feature.txt", "only here\n")
	s.git(dir, "revert", "--no-edit", "HEAD")
	head := s.rev(dir, "HEAD")
	repo := s.discover(dir)
	if p := s.prove(repo, head, s.advertise(repo)); p != nil {
		t.Errorf("proof %+v for two commits no remote has (an addition and its revert)", p)
	}
}
