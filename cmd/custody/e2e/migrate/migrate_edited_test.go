package migrate

// A migrate apply killed after it acted, with the tree edited before the
// next run: the candidate is never left pending forever. The next apply
// re-audits it, ends the interrupted act stale and journals the new audit,
// which a fresh plan proposes again (the adopted tree is still its
// candidate, not "in custody" and invisible); the next steps status
// prints, pasted, settle it with the edit kept in the archive.

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps/migrate"
)

// meStatusNext is the next step migrate status prints for the one
// candidate, which must stand in state want.
func meStatusNext(t *testing.T, r *fixtures.Repo, want machine.MigrateState) string {
	t.Helper()
	st := clitest.MigrateStatus(t, r, 3)
	if len(st.Candidates) != 1 || st.Candidates[0].State != want || st.Candidates[0].Next == "" {
		t.Fatalf("status: %+v, want one candidate %s with a next step", st, want)
	}
	return st.Candidates[0].Next
}

// mePaste runs a printed command through /bin/sh in the main checkout,
// custody first on PATH, and returns what it printed.
func mePaste(t *testing.T, r *fixtures.Repo, command string, want int) string {
	t.Helper()
	res := clitest.RunBin(t, "/bin/sh", r, r.Dir, []string{clitest.PathEnv(filepath.Dir(clitest.Bin()))}, "-c", command)
	t.Logf("pasted %q:\n%s", command, res)
	if res.Code != want {
		t.Fatalf("pasted %q: exit %d, want %d", command, res.Code, want)
	}
	return res.Stdout
}

func TestMigrateKilledThenEdited(t *testing.T) {
	t.Parallel()
	for _, point := range []string{"archive/after-rename", "migrate/after-adopt"} {
		t.Run(strings.ReplaceAll(point, "/", "_"), func(t *testing.T) {
			t.Parallel()
			r := fixtures.New(t, fixtures.Options{})
			tree := filepath.Join(r.Root, "repo-dirty")
			r.Git("worktree", "add", "-q", "-b", "dirty", tree, "main")
			r.WriteFile(tree, "README", "edited, never committed\n")
			clitest.MustCustody(t, r, 0, "init")
			p := clitest.MigratePlan(t, r, "migrate.json")
			if len(p.Candidates) != 1 || p.Candidates[0].Proposal.Disposition != machine.DispositionArchive {
				t.Fatalf("plan: %+v", p.Candidates)
			}
			mePaste(t, r, meStatusNext(t, r, machine.MigratePending), 0)
			clitest.MustBeKilled(t, r, point, "migrate", "apply", "--allow-external-retirement", "migrate.json")

			// Edited after the kill: the approved audit is no longer the tree.
			r.WriteFile(tree, "later.txt", "written after the kill\n")
			res := clitest.DecodeResult[migrate.MigrateApplyResult](t, clitest.MustCustody(t, r, 3, "--json", "migrate", "apply", "--allow-external-retirement", "migrate.json"), "migrate apply")
			if len(res.Items) != 1 || res.Items[0].Outcome != machine.OutcomeStale || res.Items[0].Refusal == nil || res.Items[0].Refusal.Code != machine.CodeMigrateChanged {
				t.Fatalf("apply after the edit: %+v, want stale [migrate-changed]", res.Items)
			}
			if _, err := os.Lstat(filepath.Join(tree, "later.txt")); err != nil {
				t.Fatalf("the edit is gone: %v", err)
			}
			// Not pending an outcome forever: the new audit needs a
			// disposition, and a fresh plan (the printed retry) finds the
			// candidate again with that very audit.
			st := clitest.MigrateStatus(t, r, 3)
			if c := st.Candidates[0]; c.Interrupted || c.Disposition != "" || !strings.HasPrefix(c.Next, "custody migrate dispose ") {
				t.Fatalf("status after the stale end: %+v", c)
			}
			mePaste(t, r, res.Items[0].Refusal.Retry, 0)
			fresh := clitest.MigratePlan(t, r, "migrate.json")
			if len(fresh.Candidates) != 1 || fresh.Candidates[0].Digest != st.Candidates[0].Digest {
				t.Fatalf("a fresh plan: %+v, want the candidate with audit %s", fresh.Candidates, st.Candidates[0].Digest)
			}
			mePaste(t, r, meStatusNext(t, r, machine.MigratePending), 0)
			out := mePaste(t, r, meStatusNext(t, r, machine.MigratePending), 3)
			// Outside the managed root: the refusal's retry confirms it.
			retry := regexp.MustCompile(`(?m)^\tto retry: (.*)$`).FindStringSubmatch(out)
			if retry == nil || !strings.Contains(retry[1], "--allow-external-retirement") {
				t.Fatalf("no retry confirming the external removal in:\n%s", out)
			}
			mePaste(t, r, retry[1], 0)
			end := clitest.MigrateStatus(t, r, 0)
			if !end.Complete || end.Candidates[0].State != machine.MigrateRemoved {
				t.Fatalf("end: %+v", end)
			}
			// Nothing lost: the archive the removal rests on holds the edit.
			restored := filepath.Join(r.Root, "restored")
			arch := strings.TrimPrefix(strings.TrimSuffix(end.Candidates[0].Why, ")"), "removed after its proof (archive on ")
			clitest.MustCustody(t, r, 0, "archive", "restore", arch, restored)
			for name, want := range map[string]string{"README": "edited, never committed\n", "later.txt": "written after the kill\n"} {
				if b, err := os.ReadFile(filepath.Join(restored, name)); err != nil || string(b) != want {
					t.Errorf("restored %s = %q, %v; want %q", name, b, err, want)
				}
			}
		})
	}
}
