package migrate

// Each refusal of the migration, provoked on a small layout: a clean tree
// with unpushed commits and a locked tree beside the main checkout.

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps/migrate"
)

// mgSmall makes a repository with an unpushed sibling tree and a locked
// one, and a migrate plan over them.
func mgSmall(t *testing.T) (r *fixtures.Repo, unpushed, locked machine.MigrateCandidate, up string) {
	t.Helper()
	r = fixtures.New(t, fixtures.Options{})
	clitest.MustCustody(t, r, 0, "init")
	up = filepath.Join(r.Root, "repo-work")
	r.Git("worktree", "add", "-q", "-b", "work", up, "main")
	r.Commit(up, "work.txt", "unpushed work\n")
	more := filepath.Join(r.Root, "repo-more")
	r.Git("worktree", "add", "-q", "-b", "more", more, "main")
	r.Commit(more, "more.txt", "more unpushed work\n")
	lk := filepath.Join(r.Root, "repo-held")
	r.Git("worktree", "add", "-q", "-b", "held", lk, "main")
	r.Git("worktree", "lock", lk)
	p := clitest.MigratePlan(t, r, "migrate.json")
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
	e := clitest.DecodeError(t, clitest.MustCustody(t, r, 1, "--json", "migrate", "dispose", "repo-held", "--approve", "--disposition", "retire", "--digest", locked.Digest))
	if e.Code != string(machine.CodeDispositionNotAllowed) {
		t.Errorf("retire of a locked tree: %+v, want disposition-not-allowed", e)
	}
	e = clitest.DecodeError(t, clitest.MustCustody(t, r, 1, "--json", "migrate", "dispose", "repo-work", "--approve", "--digest", locked.Digest))
	if e.Code != string(machine.CodeMigrateDigestMismatch) {
		t.Errorf("another audit's digest: %+v, want migrate-digest-mismatch", e)
	}
	clitest.MustCustody(t, r, 1, "migrate", "dispose", "repo-held", "--approve", "--digest", locked.Digest) // nothing proposed: reject it or choose
	st := clitest.MigrateStatus(t, r, 3)
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
	clitest.MustCustody(t, r, 0, "migrate", "dispose", "repo-work", "--approve", "--digest", unpushed.Digest)
	r.WriteFile(up, "later.txt", "written after the review\n")
	res := clitest.DecodeResult[migrate.MigrateApplyResult](t, clitest.MustCustody(t, r, 3, "--json", "migrate", "apply", "migrate.json", "--only", "repo-work"), "migrate apply")
	if len(res.Items) != 1 || res.Items[0].Refusal == nil || res.Items[0].Refusal.Code != machine.CodeMigrateChanged {
		t.Fatalf("apply after a change: %+v, want migrate-changed", res.Items)
	}
	if b, err := os.ReadFile(filepath.Join(up, "later.txt")); err != nil || string(b) != "written after the review\n" {
		t.Fatalf("the changed tree was touched: %q %v", b, err)
	}
	if out, _ := r.TryGitIn(r.Remote, "rev-parse", "--verify", "-q", "refs/heads/custody/review/repo-work"); out != "" {
		t.Fatalf("a changed candidate was landed: %s", out)
	}
	st := clitest.MigrateStatus(t, r, 3)
	for _, c := range st.Candidates {
		if c.ID == "repo-work" && (c.State != machine.MigratePending || c.Digest == unpushed.Digest) {
			t.Errorf("changed input reclassified silently: %+v", c)
		}
	}
}

func TestMigrateAdoptRelocateAndLandFailure(t *testing.T) {
	t.Parallel()
	r, unpushed, _, up := mgSmall(t)
	before := r.Snap(up)
	clitest.MustCustody(t, r, 0, "migrate", "dispose", "repo-work", "--approve", "--disposition", "adopt-and-relocate", "--digest", unpushed.Digest)
	res := clitest.DecodeResult[migrate.MigrateApplyResult](t, clitest.MustCustody(t, r, 3, "--json", "migrate", "apply", "migrate.json"), "migrate apply")
	dst := filepath.Join(r.Dir, ".worktrees", "repo-work")
	var moved *migrate.MigrateOutcome
	for i, it := range res.Items {
		if it.ID == "repo-work" {
			moved = &res.Items[i]
		}
	}
	if moved == nil || moved.Outcome != machine.OutcomeRelocated || moved.Moved != dst {
		t.Fatalf("adopt-and-relocate: %+v, want relocated to %s", moved, dst)
	}
	if _, err := os.Lstat(up); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the source is still there: %v", err)
	}
	if d := before.Diff(r.Snap(dst)); d != "" {
		t.Fatalf("the moved tree differs from the legacy one: %s", d)
	}
	recs := clitest.ListRecords(t, r, false)
	if len(recs) != 1 || recs[0].ID != "repo-work" || recs[0].Path != dst || recs[0].State != machine.StateActive {
		t.Fatalf("records after adopt-and-relocate: %+v", recs)
	}
	// Running it again repeats nothing.
	again := clitest.DecodeResult[migrate.MigrateApplyResult](t, clitest.MustCustody(t, r, 0, "--json", "migrate", "apply", "migrate.json", "--only", "repo-work"), "migrate apply")
	if len(again.Items) != 1 || again.Items[0].Outcome != machine.OutcomeAlreadyDone {
		t.Fatalf("second apply: %+v", again.Items)
	}

	// The review branch exists on the remote at another commit: a
	// non-forced push fails and the tree stays.
	p := clitest.MigratePlan(t, r, "migrate2.json")
	c, _ := p.Candidate("repo-more")
	morePath := c.Audit.Path
	moreBefore := r.Snap(morePath)
	taken := r.Git("commit-tree", "-m", "someone else's review", "main^{tree}")
	r.Git("push", "-q", "origin", taken+":refs/heads/custody/review/repo-more")
	clitest.MustCustody(t, r, 0, "migrate", "dispose", "repo-more", "--approve", "--disposition", "land", "--digest", c.Digest)
	res = clitest.DecodeResult[migrate.MigrateApplyResult](t, clitest.MustCustody(t, r, 3, "--json", "migrate", "apply", "migrate2.json", "--only", "repo-more"), "migrate apply")
	if len(res.Items) != 1 || res.Items[0].Refusal == nil || res.Items[0].Refusal.Code != machine.CodeLandFailed {
		t.Fatalf("land over a taken review branch: %+v, want land-failed", res.Items)
	}
	if got, _ := r.TryGitIn(r.Remote, "rev-parse", "refs/heads/custody/review/repo-more"); got != taken {
		t.Fatalf("the review branch was overwritten: %s", got)
	}
	if d := moreBefore.Diff(r.Snap(morePath)); d != "" {
		t.Fatalf("a failed land changed the tree: %s", d)
	}
	st := clitest.MigrateStatus(t, r, 3)
	for _, c := range st.Candidates {
		if c.ID == "repo-more" && (c.State != machine.MigrateRefused || c.Code != machine.CodeLandFailed) {
			t.Errorf("status after a failed land: %+v", c)
		}
		if c.ID == "repo-work" && (c.State != machine.MigrateRetained || c.Outcome != machine.OutcomeRelocated) {
			t.Errorf("status after adopt-and-relocate: %+v", c)
		}
	}
}

// TestMigrateAcknowledgeUnrecoverable: a candidate the migration put in
// custody whose tree then went, with its only commit, is ended through
// abandon's transition, on the exact commit, checked against git: a wrong
// commit is refused, the right one abandons, and status settles it.
func TestMigrateAcknowledgeUnrecoverable(t *testing.T) {
	t.Parallel()
	r, _, _, _ := mgSmall(t)
	p, err := machine.ParseMigratePlan([]byte(mgReadFile(t, filepath.Join(r.Dir, "migrate.json"))))
	if err != nil {
		t.Fatal(err)
	}
	c, ok := p.Candidate("repo-more")
	if !ok {
		t.Fatalf("no candidate repo-more: %+v", p.Candidates)
	}
	clitest.MustCustody(t, r, 0, "migrate", "dispose", "repo-more", "--approve", "--disposition", "adopt-and-relocate", "--digest", c.Digest)
	clitest.MustCustody(t, r, 0, "migrate", "apply", "migrate.json", "--only", "repo-more")
	moved := filepath.Join(r.Dir, ".worktrees", "repo-more")
	head := r.Head(moved)
	// The person throws the tree and its branch away by hand.
	r.Git("worktree", "remove", "--force", moved)
	r.Git("branch", "-D", "more")

	wrong := clitest.DecodeResult[migrate.MigrateApplyResult](t, clitest.MustCustody(t, r, 3, "--json", "migrate", "apply", "migrate.json", "--only", "repo-more", "--acknowledge-unrecoverable", r.Head(r.Dir)), "migrate apply")
	if len(wrong.Items) != 1 || wrong.Items[0].Refusal == nil || wrong.Items[0].Refusal.Code != machine.CodeGuardFailed {
		t.Fatalf("a commit that is not the record's: %+v, want guard-failed", wrong.Items)
	}
	res := clitest.DecodeResult[migrate.MigrateApplyResult](t, clitest.MustCustody(t, r, 0, "--json", "migrate", "apply", "migrate.json", "--only", "repo-more", "--acknowledge-unrecoverable", head), "migrate apply")
	if len(res.Items) != 1 || res.Items[0].Outcome != machine.OutcomeAbandoned {
		t.Fatalf("acknowledged: %+v, want abandoned", res.Items)
	}
	for _, s := range clitest.MigrateStatus(t, r, 3).Candidates {
		if s.ID == "repo-more" && (s.State != machine.MigrateRetained || s.Outcome != machine.OutcomeAbandoned) {
			t.Errorf("status after abandonment: %+v", s)
		}
	}
}

func mgReadFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestMigrateReusedAdminKey: git reuses a gone tree's admin key for a new
// tree at the same place; the old record keeps its id, the migration
// adopts the new tree under a new one and retires it, and a re-run finds
// that record, not the old tombstone.
func TestMigrateReusedAdminKey(t *testing.T) {
	t.Parallel()
	r := fixtures.New(t, fixtures.Options{})
	clitest.MustCustody(t, r, 0, "init")
	p := filepath.Join(r.Root, "repo-again")
	r.Git("worktree", "add", "-q", "--detach", p, "main")
	clitest.MustCustody(t, r, 0, "adopt", p)
	clitest.MustCustody(t, r, 0, "finish", "repo-again")
	clitest.MustCustody(t, r, 0, "plan", "-o", "plan.json")
	clitest.MustCustody(t, r, 0, "apply", "plan.json", "--allow-external-retirement")
	r.Git("worktree", "add", "-q", "--detach", p, "main")

	plan := clitest.MigratePlan(t, r, "migrate.json")
	c, ok := plan.Candidate("repo-again")
	if !ok || c.Proposal.Disposition != machine.DispositionRetire {
		t.Fatalf("candidate %+v, want repo-again proposed for retire", plan.Candidates)
	}
	clitest.MustCustody(t, r, 0, "migrate", "dispose", "repo-again", "--approve", "--digest", c.Digest)
	res := clitest.DecodeResult[migrate.MigrateApplyResult](t, clitest.MustCustody(t, r, 0, "--json", "migrate", "apply", "migrate.json", "--allow-external-retirement"), "migrate apply")
	if len(res.Items) != 1 || res.Items[0].Outcome != machine.OutcomeRemoved {
		t.Fatalf("apply: %+v, want removed", res.Items)
	}
	if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the tree is still there: %v", err)
	}
	again := clitest.DecodeResult[migrate.MigrateApplyResult](t, clitest.MustCustody(t, r, 0, "--json", "migrate", "apply", "migrate.json", "--allow-external-retirement"), "migrate apply")
	if len(again.Items) != 1 || again.Items[0].Outcome != machine.OutcomeAlreadyDone || again.Items[0].Refusal != nil {
		t.Fatalf("second apply: %+v, want already-done", again.Items)
	}
	all := clitest.ListRecords(t, r, true)
	if len(all) != 2 {
		t.Fatalf("records %+v, want the old tombstone and the migration's", all)
	}
}
