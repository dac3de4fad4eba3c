package observe_test

import (
	"fmt"
	"testing"
)

// TestAdvertiseDefaultBranchFirst: proof tips are tried default branches
// first, and a remote's default branch is its HEAD, whatever its name.
// origin's HEAD here is develop, with other branches sorting before it by
// name: Advertise ranks refs/heads/develop first, so the patch and squash
// checks, which try only the first few tips, always try it.
func TestAdvertiseDefaultBranchFirst(t *testing.T) {
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
