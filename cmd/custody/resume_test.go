package main

// Resume after a crash settles the record without losing anything a
// person made, even when the crash left the tree half changed.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custody-sh/custody/fixtures"
)

// TestResumeAfterPartialGitRemove: apply's `git worktree remove` dies part
// way (it deletes one tracked file, then the whole run is SIGKILLed, as a
// power loss or an OOM kill of the group would). The tree is still at its
// path, registered, with the recorded device+inode and HEAD, but it is no
// longer the tree plan reviewed. Resume does not retreat the record to
// finished over that half-deleted tree (DESIGN §4: a run killed at any
// instant resumes to the same outcome, and an observation that fits no
// rule is a typed refusal).
func TestResumeAfterPartialGitRemove(t *testing.T) {
	t.Parallel()
	r := sfRepo(t)
	id, path := newTree(t, r, "partial")
	for i := 1; i <= 3; i++ {
		r.WriteFile(path, fmt.Sprintf("f%d.txt", i), fmt.Sprintf("%d\n", i))
	}
	r.CommitAll(path, "three files")
	r.Push(path, "pub/partial")
	sfFinish(t, r, id)
	_, file := sfPlanNow(t, r, 0)
	before := r.Snap(path)
	dying := wrapGitRemove(t, r, "dying", `rm -f -- "$last/f1.txt"; kill -9 $PPID; exit 1`)
	res := runBin(t, custodyBin, r, r.Dir, []string{sfPathEnv(dying)}, "apply", file, "--json")
	if res.Code != -1 {
		t.Fatalf("apply was not killed: %s", res)
	}
	rres := custody(t, r, "resume", "--json")
	st := sfRecordState(t, r, id)
	_, lerr := os.Lstat(path)
	if st == "finished" && lerr == nil && before.Diff(r.Snap(path)) != "" {
		t.Errorf("resume retreated %s to finished although custody's own interrupted removal had already deleted part of it (%s); resume said:\n%s",
			id, strings.ReplaceAll(before.Diff(r.Snap(path)), "\n", ", "), rres.Stdout)
	}
}

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
	writeTrusted(t, r, fmt.Sprintf("[resources.db]\ncreate = '''test ! -e %s'''\ndestroy = 'true'\nrequired = true\n", flag))
	mustCustody(t, r, 0, "init")
	res := runBin(t, failpointBin, r, r.Dir, []string{"CUSTODY_FAILPOINT=new/after-add"}, "new", "crashed")
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
	res = custody(t, r, "resume", "--json")
	b, err := os.ReadFile(filepath.Join(path, "notes.txt"))
	if err != nil || string(b) != "a person's uncommitted work\n" {
		t.Errorf("resume destroyed uncommitted work in %s (%v); resume said:\n%s", path, err, res)
	}
}
