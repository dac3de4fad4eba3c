package observe_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/custody-sh/custody/observe"
)

// TestAuditBugProveCancellingCommits: HEAD adds a file and then reverts
// it; neither commit is on any remote. HEAD's tree equals the merge base's,
// so merging HEAD into origin/main trivially gives main's tree, and Prove
// returns a squash-merged proof although the file's content exists only in
// those two unpublished commits (DESIGN §1: every commit and every byte must
// be recoverable elsewhere). Expected: no proof. Cause: squashMerged /
// changesPublished in proof.go accept an empty base..HEAD change set.
func TestAuditBugProveCancellingCommits(t *testing.T) {
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

// TestAuditBugDefaultBranchFirst: issue 3 wants the proof tips tried
// "default branches first". origin's default branch (its HEAD) is
// develop; Advertise ranks only the names main, master and trunk first
// (remote.go tipRank), so develop sorts among the other branches by name,
// after every branch named before it, and with more than maxProofTips such
// tips the patch and squash checks never try it. Expected: the remote's
// HEAD branch is ranked first.
func TestAuditBugDefaultBranchFirst(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	dir := s.newOrigin()
	s.git(dir, "push", "-q", "origin", "main:refs/heads/develop")
	s.git(s.remote, "symbolic-ref", "HEAD", "refs/heads/develop")
	s.git(dir, "push", "-q", "origin", "--delete", "main")
	base := s.rev(dir, "HEAD")
	for i := 0; i < 3; i++ {
		c := s.git(dir, "commit-tree", "-p", base, "-m", fmt.Sprintf("agent %d", i), base+"^{tree}")
		s.git(dir, "push", "-q", "origin", c+fmt.Sprintf(":refs/heads/agent-%d", i))
	}
	repo := s.discover(dir)
	v := s.advertise(repo)
	if refs := tipRefs(v); len(refs) == 0 || refs[0] != "origin refs/heads/develop" {
		t.Errorf("tips in rank order %v; want origin's default branch refs/heads/develop first", refs)
	}
}

// TestAuditBugDiscoverNewlinePath: a repository whose path holds a newline
// is a valid git repository, but Discover splits rev-parse's answer on "\n"
// and refuses it as ambiguous ("printed 4 lines, want 3").
func TestAuditBugDiscoverNewlinePath(t *testing.T) {
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
