package remotes

import (
	"fmt"
	"github.com/custody-sh/custody/observe/internal/gitsandbox"
	"testing"
)

// TestAdvertiseDefaultBranchFirst: proof tips are tried default branches
// first, and a remote's default branch is its HEAD, whatever its name.
// origin's HEAD here is develop, with other branches sorting before it by
// name: Advertise ranks refs/heads/develop first, so the patch and squash
// checks, which try only the first few tips, always try it.
func TestAdvertiseDefaultBranchFirst(t *testing.T) {
	t.Parallel()
	s := gitsandbox.NewSandbox(t)
	dir := s.NewOrigin()
	s.Git(dir, "push", "-q", "origin", "main:refs/heads/develop")
	s.Git(s.Remote, "symbolic-ref", "HEAD", "refs/heads/develop")
	s.Git(dir, "push", "-q", "origin", "--delete", "main")
	base := s.Rev(dir, "HEAD")
	for i := 0; i < 3; i++ {
		c := s.Git(dir, "commit-tree", "-p", base, "-m", fmt.Sprintf("agent %d", i), base+"^{tree}")
		s.Git(dir, "push", "-q", "origin", c+fmt.Sprintf(":refs/heads/agent-%d", i))
	}
	repo := s.Discover(dir)
	v := s.Advertise(repo)
	if refs := gitsandbox.TipRefs(v); len(refs) == 0 || refs[0] != "origin refs/heads/develop" {
		t.Errorf("tips in rank order %v; want origin's default branch refs/heads/develop first", refs)
	}
}
