package state

// Resume after a crash settles the record without losing anything a
// person made, even when the crash left the tree half changed.

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
)

// TestResumeRollbackKeepsUserWork: `custody new` is killed right after
// `git worktree add` (failpoint new/after-add). The tree exists,
// registered, on its branch; `custody list` shows its path, and a person
// starts working in it (uncommitted notes). When a required resource's
// create then fails (a flag file makes it exit 1) during the next
// command's automatic resume, the rollback never force-removes the tree
// (only non-forced git worktree remove): the notes survive.
func TestResumeRollbackKeepsUserWork(t *testing.T) {
	t.Parallel()
	r := fixtures.New(t, fixtures.Options{})
	flag := filepath.Join(r.Root, "resource-broken")
	clitest.WriteTrusted(t, r, fmt.Sprintf("[resources.db]\ncreate = '''test ! -e %s'''\ndestroy = 'true'\nrequired = true\n", flag))
	clitest.MustCustody(t, r, 0, "init")
	res := clitest.RunBin(t, clitest.FailpointBin(), r, r.Dir, []string{"CUSTODY_FAILPOINT=new/after-add"}, "new", "crashed")
	if res.Code != -1 {
		t.Fatalf("new was not killed at new/after-add: %s", res)
	}
	ents, err := os.ReadDir(filepath.Join(r.Dir, ".worktrees"))
	if err != nil || len(ents) != 1 {
		t.Fatalf("managed root after the crash: %v %v", ents, err)
	}
	path := filepath.Join(r.Dir, ".worktrees", ents[0].Name())
	r.WriteFile(path, "notes.txt", "a person's uncommitted work\n")
	r.WriteFile(flag, "", "")
	res = clitest.Custody(t, r, "resume", "--json")
	b, err := os.ReadFile(filepath.Join(path, "notes.txt"))
	if err != nil || string(b) != "a person's uncommitted work\n" {
		t.Errorf("resume destroyed uncommitted work in %s (%v); resume said:\n%s", path, err, res)
	}
}
