package main

// Each refusal of the migration, provoked on a small layout: a clean tree
// with unpushed commits and a locked tree beside the main checkout.

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
)

// mgSmall makes a repository with an unpushed sibling tree and a locked
// one, and a migrate plan over them.
func mgSmall(t *testing.T) (r *fixtures.Repo, unpushed, locked machine.MigrateCandidate, up string) {
	t.Helper()
	r = fixtures.New(t, fixtures.Options{})
	mustCustody(t, r, 0, "init")
	up = filepath.Join(r.Root, "repo-work")
	r.Git("worktree", "add", "-q", "-b", "work", up, "main")
	r.Commit(up, "work.txt", "unpushed work\n")
	lk := filepath.Join(r.Root, "repo-held")
	r.Git("worktree", "add", "-q", "-b", "held", lk, "main")
	r.Git("worktree", "lock", lk)
	p := mgPlan(t, r, "migrate.json")
	unpushed, _ = p.Candidate("repo-work")
	locked, _ = p.Candidate("repo-held")
	if unpushed.Digest == "" || locked.Digest == "" {
		t.Fatalf("plan lacks the candidates: %+v", p.Candidates)
	}
	return r, unpushed, locked, up
}

func TestMigrateDisposeRefusals(t *testing.T) {
	t.Parallel()
	r, unpushed, locked, _ := mgSmall(t)
	e := decodeError(t, mustCustody(t, r, 1, "--json", "migrate", "dispose", "repo-held", "--approve", "--disposition", "retire", "--digest", locked.Digest))
	if e.Code != string(machine.CodeDispositionNotAllowed) {
		t.Errorf("retire of a locked tree: %+v, want disposition-not-allowed", e)
	}
	e = decodeError(t, mustCustody(t, r, 1, "--json", "migrate", "dispose", "repo-work", "--approve", "--digest", locked.Digest))
	if e.Code != string(machine.CodeMigrateDigestMismatch) {
		t.Errorf("another audit's digest: %+v, want migrate-digest-mismatch", e)
	}
	mustCustody(t, r, 1, "migrate", "dispose", "repo-held", "--approve", "--digest", locked.Digest) // nothing proposed: reject it or choose
	st := mgStatus(t, r, 3)
	for _, c := range st.Candidates {
		if c.State != machine.MigratePending || c.Disposition != "" {
			t.Errorf("a refused disposition was recorded: %+v", c)
		}
	}
	_ = unpushed
}

func TestMigrateChangedNeedsNewDisposition(t *testing.T) {
	t.Parallel()
	r, unpushed, _, up := mgSmall(t)
	mustCustody(t, r, 0, "migrate", "dispose", "repo-work", "--approve", "--digest", unpushed.Digest)
	r.WriteFile(up, "later.txt", "written after the review\n")
	res := decodeResult[steps.MigrateApplyResult](t, mustCustody(t, r, 3, "--json", "migrate", "apply", "migrate.json", "--only", "repo-work"), "migrate apply")
	if len(res.Items) != 1 || res.Items[0].Refusal == nil || res.Items[0].Refusal.Code != machine.CodeMigrateChanged {
		t.Fatalf("apply after a change: %+v, want migrate-changed", res.Items)
	}
	if b, err := os.ReadFile(filepath.Join(up, "later.txt")); err != nil || string(b) != "written after the review\n" {
		t.Fatalf("the changed tree was touched: %q %v", b, err)
	}
	if out, _ := r.TryGitIn(r.Remote, "rev-parse", "--verify", "-q", "refs/heads/custody/review/repo-work"); out != "" {
		t.Fatalf("a changed candidate was landed: %s", out)
	}
	st := mgStatus(t, r, 3)
	for _, c := range st.Candidates {
		if c.ID == "repo-work" && (c.State != machine.MigratePending || c.Digest == unpushed.Digest) {
			t.Errorf("changed input reclassified silently: %+v", c)
		}
	}
}

func TestMigrateRelocationAndLandRefusals(t *testing.T) {
	t.Parallel()
	r, unpushed, _, up := mgSmall(t)
	before := r.Snap(up)
	mustCustody(t, r, 0, "migrate", "dispose", "repo-work", "--approve", "--disposition", "adopt-and-relocate", "--digest", unpushed.Digest)
	res := decodeResult[steps.MigrateApplyResult](t, mustCustody(t, r, 3, "--json", "migrate", "apply", "migrate.json", "--only", "repo-work"), "migrate apply")
	if len(res.Items) != 1 || res.Items[0].Refusal == nil || res.Items[0].Refusal.Code != machine.CodeRelocationUnavailable {
		t.Fatalf("adopt-and-relocate: %+v, want relocation-unavailable", res.Items)
	}
	if d := before.Diff(r.Snap(up)); d != "" {
		t.Fatalf("a refused relocation changed the tree: %s", d)
	}
	// The review branch exists on the remote at another commit: a
	// non-forced push fails and the tree stays.
	taken := r.Git("commit-tree", "-m", "someone else's review", "main^{tree}")
	r.Git("push", "-q", "origin", taken+":refs/heads/custody/review/repo-work")
	mustCustody(t, r, 0, "migrate", "dispose", "repo-work", "--approve", "--disposition", "land", "--digest", unpushed.Digest)
	res = decodeResult[steps.MigrateApplyResult](t, mustCustody(t, r, 3, "--json", "migrate", "apply", "migrate.json", "--only", "repo-work"), "migrate apply")
	if len(res.Items) != 1 || res.Items[0].Refusal == nil || res.Items[0].Refusal.Code != machine.CodeLandFailed {
		t.Fatalf("land over a taken review branch: %+v, want land-failed", res.Items)
	}
	if got, _ := r.TryGitIn(r.Remote, "rev-parse", "refs/heads/custody/review/repo-work"); got != taken {
		t.Fatalf("the review branch was overwritten: %s", got)
	}
	if d := before.Diff(r.Snap(up)); d != "" {
		t.Fatalf("a failed land changed the tree: %s", d)
	}
	st := mgStatus(t, r, 3)
	for _, c := range st.Candidates {
		if c.ID == "repo-work" && (c.State != machine.MigrateRefused || c.Code != machine.CodeLandFailed) {
			t.Errorf("status after a failed land: %+v", c)
		}
	}
}
