package apply

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
)

// recoveredRef returns what refs/custody/recovered/<id>/<commit> points at
// ("" when there is no such ref).
func recoveredRef(t *testing.T, r *fixtures.Repo, id, commit string) string {
	t.Helper()
	out, err := r.TryGitIn(r.Dir, "rev-parse", "--verify", "-q", "refs/custody/recovered/"+id+"/"+commit)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}

// TestRecoveryReflogOnlyCommit: a commit reachable only from the tree's
// reflogs (commit, then reset --hard HEAD~1) stays reachable after the
// removal, under a recovery ref, and the journal says so.
func TestRecoveryReflogOnlyCommit(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.NewTree(t, r, "reflogonly")
	r.Commit(path, "kept.txt", "published\n")
	r.Push(path, "pub/reflogonly")
	lost := r.Commit(path, "lost.txt", "only in the reflog\n")
	r.GitIn(path, "reset", "-q", "--hard", "HEAD~1")
	clitest.Finish(t, r, id)
	clitest.RemoveNow(t, r, id, "ancestry")
	clitest.AssertRemoved(t, r, id, path, true)
	if got := recoveredRef(t, r, id, lost); got != lost {
		t.Fatalf("recovery ref of %s = %q, want %s (refs:\n%s)", lost, got, lost, r.Refs())
	}
	if got := r.GitIn(r.Dir, "show", lost+":lost.txt"); strings.TrimSpace(got) != "only in the reflog" {
		t.Errorf("lost.txt at %s = %q", lost, got)
	}
	res := clitest.MustCustody(t, r, 0, "recovered", "--json")
	if !strings.Contains(res.Stdout, lost) || !strings.Contains(res.Stdout, id) {
		t.Errorf("custody recovered does not list %s of %s:\n%s", lost, id, res)
	}
}

// TestRecoveryNothingExtra: a tree whose every commit is published gets no
// recovery ref.
func TestRecoveryNothingExtra(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.Removable(t, r, "plain")
	clitest.RemoveNow(t, r, id, "ancestry")
	clitest.AssertRemoved(t, r, id, path, true)
	if refs := r.GitIn(r.Dir, "for-each-ref", "refs/custody/"); strings.TrimSpace(refs) != "" {
		t.Errorf("recovery refs for a published tree:\n%s", refs)
	}
}

// TestRecoverySquashMergedTip: the branch custody deletes after a
// squash-merged proof keeps its tip (and so every intermediate commit's
// content) under a recovery ref.
func TestRecoverySquashMergedTip(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.NewTree(t, r, "squashkeep")
	first := r.Commit(path, "a.txt", "one\n")
	r.Commit(path, "a.txt", "one\ntwo\n")
	tip := r.Commit(path, "b.txt", "bee\n")
	clitest.Finish(t, r, id)
	r.SquashMergeToMain("squasher", "custody/"+id, nil)
	clitest.RemoveNow(t, r, id, "squash-merged")
	clitest.AssertRemoved(t, r, id, path, true)
	if got := recoveredRef(t, r, id, tip); got != tip {
		t.Fatalf("recovery ref of the squash-merged tip %s = %q (refs:\n%s)", tip, got, r.Refs())
	}
	if _, err := r.TryGitIn(r.Dir, "merge-base", "--is-ancestor", first, "refs/custody/recovered/"+id+"/"+tip); err != nil {
		t.Errorf("intermediate commit %s is not kept: %v", first, err)
	}
}

// TestRecoveryWorktreeConfig: settings in the tree's config.worktree are
// copied under <common>/custody/recovered/<id>/ byte for byte before the
// tree goes; an empty one is not.
func TestRecoveryWorktreeConfig(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	r.Git("config", "extensions.worktreeConfig", "true")
	id, path := clitest.Removable(t, r, "wtconfig")
	r.GitIn(path, "config", "--worktree", "user.signingkey", "ABC123")
	want, err := os.ReadFile(filepath.Join(r.Dir, ".git", "worktrees", id, "config.worktree"))
	if err != nil {
		t.Fatal(err)
	}
	id2, path2 := clitest.Removable(t, r, "wtempty")
	clitest.RemoveNow(t, r, id, "ancestry") // the plan removes both
	clitest.AssertRemoved(t, r, id, path, true)
	clitest.AssertRemoved(t, r, id2, path2, true)
	got, err := os.ReadFile(filepath.Join(r.Dir, ".git", "custody", "recovered", id, "config.worktree"))
	if err != nil || string(got) != string(want) {
		t.Fatalf("kept config.worktree = %q (%v), want %q", got, err, want)
	}
	if _, err := os.Lstat(filepath.Join(r.Dir, ".git", "custody", "recovered", id2)); err == nil {
		t.Errorf("a recovery directory was made for %s, which had no per-worktree settings", id2)
	}
	res := clitest.MustCustody(t, r, 0, "recovered", "--json")
	if !strings.Contains(res.Stdout, "config.worktree") {
		t.Errorf("custody recovered does not list the kept config:\n%s", res)
	}
}

// TestRecoveredPrune: recoveries go only by an explicit prune with an
// age; a younger one stays, and the prune is journaled.
func TestRecoveredPrune(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.NewTree(t, r, "prunable")
	r.Commit(path, "kept.txt", "published\n")
	r.Push(path, "pub/prunable")
	lost := r.Commit(path, "lost.txt", "only in the reflog\n")
	r.GitIn(path, "reset", "-q", "--hard", "HEAD~1")
	clitest.Finish(t, r, id)
	clitest.RemoveNow(t, r, id, "ancestry")
	clitest.MustCustody(t, r, 0, "recovered", "prune", "--older-than", "1h")
	if got := recoveredRef(t, r, id, lost); got != lost {
		t.Fatalf("a prune --older-than 1h deleted a recovery made just now (refs:\n%s)", r.Refs())
	}
	res := clitest.MustCustody(t, r, 0, "recovered", "prune", "--older-than", "1ns", "--json")
	if !strings.Contains(res.Stdout, lost) {
		t.Errorf("prune does not report %s:\n%s", lost, res)
	}
	if got := recoveredRef(t, r, id, lost); got != "" {
		t.Errorf("recovery ref still there after prune: %s", got)
	}
	if out := clitest.MustCustody(t, r, 0, "journal", "export").Stdout; !strings.Contains(out, `"recovered-pruned"`) {
		t.Errorf("the prune is not journaled")
	}
}

// TestRecoveryUnreadableConfigKeepsTree: a config.worktree that is not a
// regular file cannot be kept, so the tree is kept with recovery-failed.
func TestRecoveryUnreadableConfigKeepsTree(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.Removable(t, r, "cfglink")
	cfg := filepath.Join(r.Dir, ".git", "worktrees", id, "config.worktree")
	if err := os.Symlink("/etc/hostname", cfg); err != nil {
		t.Fatal(err)
	}
	_, file := clitest.PlanNow(t, r, 0)
	o := clitest.ApplyOutcome(t, clitest.Apply(t, r, file, 3), id)
	if o.Refusal == nil || o.Refusal.Code != "recovery-failed" || o.Refusal.Path != cfg {
		t.Fatalf("apply %s: %+v, want recovery-failed naming %s", id, o, cfg)
	}
	if _, err := os.Lstat(filepath.Join(path, "cfglink.txt")); err != nil {
		t.Errorf("the tree was not kept: %v", err)
	}
}
