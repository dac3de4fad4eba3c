package migrate

// The legacy migration end to end: the legacy layout fixture
// migrates with nothing lost and nothing of the other repository touched,
// and the exported journal verifies and accounts for every candidate.
// Helpers carry the prefix mg.

import (
	"os"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps/migrate"
	"github.com/google/go-cmp/cmp"
)

// mgWantProposal is the disposition migrate plan proposes for each role
// of the legacy layout ("" proposes nothing custody could carry out).
var mgWantProposal = map[string]machine.Disposition{
	"sibling":   machine.DispositionRetire,
	"old-root":  machine.DispositionRetire,
	"missing":   machine.DispositionLand,
	"locked":    "",
	"dirty":     machine.DispositionArchive,
	"unpushed":  machine.DispositionLand,
	"submodule": "",
}

func TestMigrateLegacyLayout(t *testing.T) {
	t.Parallel()
	l := fixtures.NewLegacy(t)
	untouched := clitest.LegacyUntouched(l)
	clitest.MustCustody(t, l.Repo, 0, "init")

	d := clitest.DecodeResult[migrate.MigrateDiscovery](t, clitest.MustCustody(t, l.Repo, 3, "--json", "migrate", "discover"), "migrate discover")
	got := map[string]machine.MigrateClass{}
	for _, p := range d.Places {
		got[p.Path] = p.Class
	}
	want := map[string]machine.MigrateClass{
		l.Clone: machine.ClassClone, l.Remote: machine.ClassRemote, l.Ordinary: machine.ClassOrdinary, l.OldRoot: machine.ClassOrdinary,
		l.Other: machine.ClassOtherRepository, l.OtherTree: machine.ClassOtherRepository,
	}
	for role, p := range l.Trees {
		want[p] = machine.ClassLinked
		if role == "missing" {
			want[p] = machine.ClassMissing
		}
	}
	for p, c := range want {
		if got[p] != c {
			t.Errorf("%s classified %q, want %q", p, got[p], c)
		}
	}
	if d.Candidates != len(l.Trees) {
		t.Errorf("%d candidates, want %d", d.Candidates, len(l.Trees))
	}

	p := clitest.MigratePlan(t, l.Repo, "migrate.json")
	roles := clitest.LegacyRoles(l)
	gotProp := map[string]machine.Disposition{}
	for _, c := range p.Candidates {
		gotProp[roles[c.Audit.ID]] = c.Proposal.Disposition
	}
	if diff := cmp.Diff(mgWantProposal, gotProp); diff != "" {
		t.Fatalf("proposals (-want +got):\n%s", diff)
	}
	if st := clitest.MigrateStatus(t, l.Repo, 3); st.Complete || st.Counts[machine.MigratePending] != len(l.Trees) {
		t.Fatalf("before any disposition every candidate is pending: %+v", st)
	}
	// Nothing is applied without a person's disposition.
	none := clitest.DecodeResult[migrate.MigrateApplyResult](t, clitest.MustCustody(t, l.Repo, 3, "--json", "migrate", "apply", "migrate.json", "--allow-external-retirement"), "migrate apply")
	for _, it := range none.Items {
		if it.Refusal == nil || it.Refusal.Code != machine.CodeMigrateNotApproved {
			t.Errorf("%s applied without a disposition: %+v", it.ID, it)
		}
	}
	for role, path := range l.Trees {
		if _, err := os.Lstat(path); role != "missing" && err != nil {
			t.Fatalf("%s (%s) went without a disposition: %v", role, path, err)
		}
	}
	clitest.MigrateDisposeAll(t, l.Repo, p)

	// Without the confirmation, trees outside the managed root stay.
	res := clitest.DecodeResult[migrate.MigrateApplyResult](t, clitest.MustCustody(t, l.Repo, 3, "--json", "migrate", "apply", "migrate.json"), "migrate apply")
	for _, it := range res.Items {
		if d := mgWantProposal[roles[it.ID]]; d == machine.DispositionRetire && (it.Refusal == nil || it.Refusal.Code != machine.CodeExternalTree) {
			t.Errorf("%s without --allow-external-retirement: %+v, want external-tree", it.ID, it)
		}
	}
	for _, role := range []string{"sibling", "old-root", "dirty"} {
		if _, err := os.Lstat(l.Trees[role]); err != nil {
			t.Fatalf("%s went without --allow-external-retirement: %v", role, err)
		}
	}

	clitest.MustCustody(t, l.Repo, 0, "migrate", "apply", "migrate.json", "--allow-external-retirement")
	clitest.LegacyCheckEnd(t, l, untouched)

	// Re-running revalidates and repeats nothing.
	again := clitest.DecodeResult[migrate.MigrateApplyResult](t, clitest.MustCustody(t, l.Repo, 0, "--json", "migrate", "apply", "migrate.json", "--allow-external-retirement"), "migrate apply")
	for _, it := range again.Items {
		if it.Outcome != machine.OutcomeAlreadyDone {
			t.Errorf("second apply: %s %s, want already-done", it.ID, it.Outcome)
		}
	}
	clitest.LegacyCheckEnd(t, l, untouched)
}
