package apply

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
)

// TestRecoveryReflogNamesGoneObject: a reflog naming an object git no
// longer has makes the one rev-list over the reflog's commits fail; the
// removal then sorts the candidates with cat-file and asks again, so the
// commit only the reflog holds is still kept, and the tree still goes.
func TestRecoveryReflogNamesGoneObject(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.NewTree(t, r, "reflogone")
	r.Commit(path, "kept.txt", "published\n")
	r.Push(path, "pub/reflogone")
	lost := r.Commit(path, "lost.txt", "only in the reflog\n")
	r.GitIn(path, "reset", "-q", "--hard", "HEAD~1")
	gone := strings.Repeat("1", len(lost))
	logFile := filepath.Join(r.Dir, ".git", "worktrees", id, "logs", "HEAD")
	f, err := os.OpenFile(logFile, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	head := strings.TrimSpace(r.GitIn(path, "rev-parse", "HEAD"))
	if _, err := f.WriteString(head + " " + gone + " A U Thor <a@example.com> 1700000000 +0000\tcheckout: a commit since pruned\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(gone + " " + head + " A U Thor <a@example.com> 1700000001 +0000\tcheckout: back\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	clitest.Finish(t, r, id)
	clitest.RemoveNow(t, r, id, "ancestry")
	clitest.AssertRemoved(t, r, id, path, true)
	if got := recoveredRef(t, r, id, lost); got != lost {
		t.Fatalf("recovery ref of %s = %q, want %s (refs:\n%s)", lost, got, lost, r.Refs())
	}
	if got := recoveredRef(t, r, id, gone); got != "" {
		t.Errorf("a recovery ref for %s, which git does not have: %s", gone, got)
	}
}
