package proof

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

// TestPlanKeepsATreeWhoseHEADIsATagObject: a tree whose HEAD file names an
// annotated tag object of its only, unpushed commit (written by hand; no
// ref names the commit) is kept, by plan and by apply: git walks the
// commit the tag names under the commit's own id, and what it says of
// that commit proved nothing of the head. Before, plan proposed the tree
// for removal by the first tip's ancestry and apply deleted it, leaving
// the commit unreachable.
func TestPlanKeepsATreeWhoseHEADIsATagObject(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.NewTree(t, r, "tagged")
	work := r.Commit(path, "work.txt", "on no remote\n")
	r.GitIn(path, "tag", "-a", "-m", "hand-made", "t-"+id, work)
	tag := r.GitIn(path, "rev-parse", "t-"+id)
	r.GitIn(path, "tag", "-d", "t-"+id)
	r.GitIn(path, "update-ref", "refs/heads/custody/"+id, r.GitIn(r.Dir, "rev-parse", "main"))
	if err := os.WriteFile(filepath.Join(r.Dir, ".git", "worktrees", id, "HEAD"), []byte(tag+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	clitest.Finish(t, r, id)
	p, file := clitest.PlanAny(t, r)
	if it := clitest.PlanItem(t, p, id); it.Action == "remove" {
		t.Fatalf("plan proposes removing a tree whose HEAD is a tag object of an unpushed commit: %+v", it)
	}
	clitest.Custody(t, r, "apply", file, "--json")
	if _, err := os.Lstat(filepath.Join(path, "work.txt")); err != nil {
		t.Fatalf("the tree's work is gone: %v", err)
	}
	if got := r.GitIn(r.Dir, "cat-file", "-t", work); got != "commit" {
		t.Fatalf("the work commit: %q", got)
	}
}
