//go:build unix

package apply

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/cmd/custody/internal/output"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
)

// Another admin entry (another key) naming a tree's path: git lists the path
// once per entry, and git worktree prune keeps only one of them. These tests
// hold plan, apply and resume to keeping the tree (or, once it is gone, the
// record's intent) with a refusal that names the entry and its HEAD, whose
// retry keeps that HEAD reachable. Helpers are prefixed da.

// daStray writes an admin entry key whose gitdir holds gitdir and whose
// HEAD is a commit nothing else reaches (or head, when given); extra are
// more name, content pairs. It returns the entry's directory and commit.
func daStray(t *testing.T, r *fixtures.Repo, key, gitdir string, extra ...string) (dir, lone string) {
	t.Helper()
	lone = r.Git("commit-tree", "-m", "only in "+key, "HEAD^{tree}")
	dir = filepath.Join(r.Dir, ".git", "worktrees", key)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files := append([]string{"gitdir", gitdir, "commondir", "../..\n", "HEAD", lone + "\n"}, extra...)
	for i := 0; i < len(files); i += 2 {
		rtWriteAdmin(t, dir, files[i], files[i+1])
	}
	return dir, lone
}

// daHead reads an admin entry's HEAD file.
func daHead(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "HEAD"))
	if err != nil {
		t.Fatalf("the entry %s lost its HEAD: %v", dir, err)
	}
	return strings.TrimSpace(string(b))
}

// daPaste runs a retry as printed, in the main checkout.
func daPaste(t *testing.T, r *fixtures.Repo, retry string) clitest.Result {
	t.Helper()
	sh := clitest.RunBin(t, "sh", r, r.Dir, []string{clitest.PathEnv(filepath.Dir(clitest.Bin()))}, "-c", retry)
	if sh.Code != 0 && sh.Code != output.ExitPending {
		t.Fatalf("the retry %q failed when pasted:\n%s", retry, sh)
	}
	return sh
}

// daResumeItem runs custody resume --json and returns id's item.
func daResumeItem(t *testing.T, r *fixtures.Repo, id string) (steps.ResumeItem, clitest.Result) {
	t.Helper()
	res := clitest.Custody(t, r, "resume", "--json")
	var env struct {
		Result steps.ResumeResult `json:"result"`
	}
	if err := json.Unmarshal([]byte(res.Stdout), &env); err != nil {
		t.Fatalf("resume --json: %v\n%s", err, res)
	}
	for _, it := range env.Result.Items {
		if it.ID == id {
			return it, res
		}
	}
	return steps.ResumeItem{}, res
}

// TestPlanKeepsTreeOtherEntryNames: every spelling of a tree's path in
// another entry's gitdir (exact, a trailing slash, without /.git, a
// relative path, through a symlinked parent, through a link to the tree),
// and such an entry locked or on a branch, keeps the finished, published
// tree at plan with duplicate-admin-entry naming the entry; nothing is
// changed, and no such entry is offered for adoption as a foreign tree.
func TestPlanKeepsTreeOtherEntryNames(t *testing.T) {
	t.Parallel()
	spell := map[string]func(r *fixtures.Repo, path string) string{
		"exact":          func(_ *fixtures.Repo, path string) string { return filepath.Join(path, ".git") + "\n" },
		"trailing-slash": func(_ *fixtures.Repo, path string) string { return filepath.Join(path, ".git") + "/\n" },
		"no-dotgit":      func(_ *fixtures.Repo, path string) string { return path + "\n" },
		"relative": func(r *fixtures.Repo, path string) string {
			rel, err := filepath.Rel(filepath.Join(r.Dir, ".git", "worktrees", "stray"), filepath.Join(path, ".git"))
			if err != nil {
				panic(err)
			}
			return rel + "\n"
		},
		"symlinked-parent": func(r *fixtures.Repo, path string) string {
			link := filepath.Join(r.Root, "link-to-root")
			if err := os.Symlink(filepath.Dir(path), link); err != nil {
				panic(err)
			}
			return filepath.Join(link, filepath.Base(path), ".git") + "\n"
		},
		"link-to-tree": func(r *fixtures.Repo, path string) string {
			link := filepath.Join(r.Root, "link-to-tree")
			if err := os.Symlink(path, link); err != nil {
				panic(err)
			}
			return filepath.Join(link, ".git") + "\n"
		},
	}
	for name, gitdir := range spell {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			daPlanKeeps(t, func(r *fixtures.Repo, path string) (string, string) {
				return daStray(t, r, "stray", gitdir(r, path))
			})
		})
	}
	t.Run("locked", func(t *testing.T) {
		t.Parallel()
		daPlanKeeps(t, func(r *fixtures.Repo, path string) (string, string) {
			return daStray(t, r, "stray", filepath.Join(path, ".git")+"\n", "locked", "on a usb disk\n")
		})
	})
	t.Run("on-a-branch", func(t *testing.T) {
		t.Parallel()
		daPlanKeeps(t, func(r *fixtures.Repo, path string) (string, string) {
			r.Git("branch", "topic")
			dir, _ := daStray(t, r, "stray", filepath.Join(path, ".git")+"\n", "HEAD", "ref: refs/heads/topic\n")
			return dir, "ref: refs/heads/topic"
		})
	})
}

// daPlanKeeps makes a finished, published tree, lets stray write another
// entry naming it, and requires plan to keep the tree with
// duplicate-admin-entry naming that entry, and to leave it as it was.
func daPlanKeeps(t *testing.T, stray func(r *fixtures.Repo, path string) (dir, head string)) {
	t.Helper()
	r := clitest.InitRepo(t)
	id, path := clitest.NewTree(t, r, "kept")
	clitest.Finish(t, r, id)
	dir, head := stray(r, path)
	p, _ := clitest.PlanNow(t, r, 0)
	it := clitest.PlanItem(t, p, id)
	if it.Action != machine.ActionKeep || it.Refusal == nil || it.Refusal.Code != machine.CodeDuplicateAdminEntry {
		t.Fatalf("plan: %s %+v, want keep [%s]", it.Action, it.Refusals, machine.CodeDuplicateAdminEntry)
	}
	if !strings.Contains(it.Refusal.Message, dir) || !strings.Contains(it.Refusal.Message, strings.TrimPrefix(head, "ref: refs/heads/")) {
		t.Errorf("the refusal does not name the entry %s and its HEAD %s: %s", dir, head, it.Refusal.Message)
	}
	for _, other := range p.Items {
		if other.ID != id && other.Refusal != nil && other.Refusal.Code == machine.CodeForeign {
			t.Errorf("the other entry is offered as a foreign tree: %+v", other)
		}
	}
	if got := daHead(t, dir); got != head {
		t.Errorf("plan changed the entry's HEAD to %s, was %s", got, head)
	}
}

// TestResumeStuckRemovalOtherEntry: a removal interrupted after the tree
// was deleted, whose path another key's entry still registers (holding the
// only reference to a commit), is resumed to one refusal naming that entry
// and its HEAD, every time (never the removal-failed loop of dropping the
// record's own entry again); the entry is never touched. Its retry, pasted
// as printed, keeps the commit under a ref, removes the entry and resumes:
// the record completes.
func TestResumeStuckRemovalOtherEntry(t *testing.T) {
	t.Parallel()
	for _, dropped := range []bool{false, true} {
		name := "own-entry-left"
		if dropped {
			name = "own-entry-dropped" // as the removal left it before other entries were read
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			daResumeStuck(t, dropped)
		})
	}
}

// daResumeStuck is one TestResumeStuckRemovalOtherEntry: the record's own
// admin entry dropped by hand first when dropped is set.
func daResumeStuck(t *testing.T, dropped bool) {
	r, id, path, q, plan := rtTree(t, "stuck")
	clitest.MustBeKilled(t, r, "apply/after-remove", "apply", plan)
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the killed apply left %s: %v", path, err)
	}
	if dropped {
		if err := os.RemoveAll(filepath.Join(r.Dir, ".git", "worktrees", id)); err != nil {
			t.Fatal(err)
		}
	}
	dir, lone := daStray(t, r, "stuck-again", filepath.Join(path, ".git")+"\n")
	var first steps.ResumeItem
	for i := range 2 {
		it, res := daResumeItem(t, r, id)
		if it.Refusal == nil || it.Refusal.Code != machine.CodeDuplicateAdminEntry || !strings.Contains(it.Refusal.Message, dir) ||
			!strings.Contains(it.Refusal.Message, lone) || !strings.HasSuffix(it.Refusal.Retry, "&& custody resume") {
			t.Fatalf("resume %d: %+v, want [%s] naming %s and %s, retried by resume:\n%s", i+1, it, machine.CodeDuplicateAdminEntry, dir, lone, res)
		}
		if res.Code != output.ExitPending {
			t.Errorf("resume %d exited %d, want %d (a refusal)", i+1, res.Code, output.ExitPending)
		}
		if i == 1 && it.Refusal.Retry != first.Refusal.Retry {
			t.Errorf("resume gave another retry the second time: %q, then %q", first.Refusal.Retry, it.Refusal.Retry)
		}
		first = it
		if st := clitest.RecordState(t, r, id); st != "removing" {
			t.Fatalf("after resume %d the record is %s, want removing (its intent stays)", i+1, st)
		}
		if got := daHead(t, dir); got != lone {
			t.Fatalf("resume changed the entry's HEAD: %s", got)
		}
	}
	daPaste(t, r, first.Refusal.Retry)
	if st := clitest.RecordState(t, r, id); st != "tombstoned" {
		t.Fatalf("after the retry %s is %s, want tombstoned", id, st)
	}
	clitest.KeptOrRemoved(t, r, id, path, q)
	if out := r.Git("for-each-ref", "--contains", lone, "--format=%(refname)"); !strings.Contains(out, "refs/custody/stray/"+lone) {
		t.Errorf("the entry's commit %s is reachable from no ref: %q", lone, out)
	}
}

// TestApplyOtherEntryAfterRemoval: an entry naming the tree's path made
// after apply's final observation, while the tree was being removed,
// stops the removal's settlement with the same refusal: the record keeps
// its intent (not removal-failed "still registered"), the entry is left as
// it is, and the retry completes it.
func TestApplyOtherEntryAfterRemoval(t *testing.T) {
	t.Parallel()
	r, id, path, q, plan := rtTree(t, "late")
	release, wait := clitest.Paused(t, r, "apply/after-remove", "apply", plan, "--json")
	dir, lone := daStray(t, r, "late-entry", filepath.Join(path, ".git")+"\n")
	release()
	res := wait()
	o := clitest.ApplyOutcome(t, clitest.ApplyDecoded(t, res), id)
	if o.Refusal == nil || o.Refusal.Code != machine.CodeDuplicateAdminEntry || !strings.Contains(o.Refusal.Message, dir) {
		t.Fatalf("apply %s: %+v, want [%s] naming %s\n%s", id, o, machine.CodeDuplicateAdminEntry, dir, res)
	}
	if st := clitest.RecordState(t, r, id); st != "removing" {
		t.Errorf("the record is %s, want removing", st)
	}
	if got := daHead(t, dir); got != lone {
		t.Errorf("apply changed the entry's HEAD: %s", got)
	}
	daPaste(t, r, o.Refusal.Retry)
	if !clitest.KeptOrRemoved(t, r, id, path, q) {
		t.Errorf("after the retry %s is not removed", id)
	}
	if out := r.Git("for-each-ref", "--contains", lone, "--format=%(refname)"); !strings.Contains(out, "refs/custody/stray/"+lone) {
		t.Errorf("the entry's commit %s is reachable from no ref: %q", lone, out)
	}
}

// TestPlanTreeHandedToOtherEntry: git worktree repair, run while another
// entry names a tree's path, may rewrite the tree's .git to name that
// entry. That entry is then the tree's own as git sees it, so no retry
// drops it: the tree is kept for the key mismatch, the person's to settle,
// and the record's own entry is named by no retry either.
func TestPlanTreeHandedToOtherEntry(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.NewTree(t, r, "handed")
	clitest.Finish(t, r, id)
	dir, _ := daStray(t, r, "handed-over", filepath.Join(path, ".git")+"\n")
	// What git worktree repair writes when it takes the other entry's
	// side (it does so for whichever entry it reads last).
	r.WriteFile(path, ".git", "gitdir: "+dir+"\n")
	p, _ := clitest.PlanNow(t, r, 0)
	it := clitest.PlanItem(t, p, id)
	if it.Action != machine.ActionKeep || it.Refusal == nil || it.Refusal.Code != machine.CodeAdminKeyMismatch {
		t.Fatalf("plan: %s %+v, want keep [%s]", it.Action, it.Refusals, machine.CodeAdminKeyMismatch)
	}
	for _, ref := range it.Refusals {
		if strings.Contains(ref.Retry, "mv --") || strings.Contains(ref.Retry, "rm -r") {
			t.Errorf("a retry drops an admin entry of the tree: %+v", ref)
		}
	}
}
