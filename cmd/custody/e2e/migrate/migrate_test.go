package migrate

// The legacy migration end to end (issue 11): the legacy layout fixture
// migrates with nothing lost and nothing of the other repository touched,
// and the exported journal verifies and accounts for every candidate.
// Helpers carry the prefix mg.

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	json "github.com/custody-sh/custody/machine/bytejson"
	"github.com/custody-sh/custody/steps/archive"
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

// mgWantState is where each role stands once the migration is complete.
var mgWantState = map[string]machine.MigrateState{
	"sibling":   machine.MigrateRemoved,
	"old-root":  machine.MigrateRemoved,
	"missing":   machine.MigrateRetained,
	"locked":    machine.MigrateRetained,
	"dirty":     machine.MigrateRemoved,
	"unpushed":  machine.MigrateRetained,
	"submodule": machine.MigrateRetained,
}

// mgChoose is the disposition the operator chooses instead of the
// proposal, by candidate id: the tree with unpushed work is brought into
// the managed root rather than landed.
var mgChoose = map[string]machine.Disposition{"repo-unpushed": machine.DispositionAdoptRelocate}

// mgMoved is where a role's tree is at the end, when not where it was.
func mgMoved(l *fixtures.Legacy) map[string]string {
	return map[string]string{"unpushed": filepath.Join(l.Dir, ".worktrees", "repo-unpushed")}
}

// mgPlan runs migrate plan -o file and returns the parsed plan.
func mgPlan(t testing.TB, r *fixtures.Repo, file string) machine.MigratePlan {
	t.Helper()
	clitest.MustCustody(t, r, 0, "migrate", "plan", "-o", file)
	b, err := os.ReadFile(filepath.Join(r.Dir, file))
	if err != nil {
		t.Fatal(err)
	}
	p, err := machine.ParseMigratePlan(b)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// mgRoleOf maps a candidate id to its role in l.
func mgRoleOf(l *fixtures.Legacy) map[string]string {
	m := map[string]string{}
	for role, p := range l.Trees {
		m[filepath.Base(p)] = role
	}
	return m
}

// mgDisposeAll approves every proposal of p and rejects the candidates
// with none, as an operator reviewing the plan would.
func mgDisposeAll(t testing.TB, r *fixtures.Repo, p machine.MigratePlan) {
	t.Helper()
	for _, c := range p.Candidates {
		if c.Proposal.Disposition == "" {
			clitest.MustCustody(t, r, 0, "migrate", "dispose", c.Audit.ID, "--reject", "kept where it is: "+c.Proposal.Reason, "--digest", c.Digest)
			continue
		}
		if d, ok := mgChoose[c.Audit.ID]; ok {
			clitest.MustCustody(t, r, 0, "migrate", "dispose", c.Audit.ID, "--approve", "--disposition", string(d), "--digest", c.Digest)
			continue
		}
		clitest.MustCustody(t, r, 0, "migrate", "dispose", c.Audit.ID, "--approve", "--digest", c.Digest)
	}
}

// mgStatus runs migrate status --json.
func mgStatus(t testing.TB, r *fixtures.Repo, want int) migrate.MigrateStatusResult {
	t.Helper()
	return clitest.DecodeResult[migrate.MigrateStatusResult](t, clitest.MustCustody(t, r, want, "--json", "migrate", "status"), "migrate status")
}

// mgUntouched snapshots everything a migration must never change.
func mgUntouched(l *fixtures.Legacy) map[string]fixtures.Snapshot {
	m := map[string]fixtures.Snapshot{}
	for _, p := range []string{l.Other, l.OtherTree, l.Clone, l.Ordinary, l.Trees["locked"], l.Trees["unpushed"], l.Trees["submodule"]} {
		m[p] = l.Snap(p)
	}
	return m
}

func mgCheckUntouched(t testing.TB, l *fixtures.Legacy, before map[string]fixtures.Snapshot) {
	t.Helper()
	moved := map[string]string{}
	for role, to := range mgMoved(l) {
		moved[l.Trees[role]] = to
	}
	for p, s := range before {
		if to, ok := moved[p]; ok {
			p = to // moved whole: the same bytes at the destination
		}
		if d := s.Diff(l.Snap(p)); d != "" {
			t.Errorf("%s changed: %s", p, d)
		}
	}
}

func TestMigrateLegacyLayout(t *testing.T) {
	t.Parallel()
	l := fixtures.NewLegacy(t)
	untouched := mgUntouched(l)
	clitest.MustCustody(t, l.Repo, 0, "init")

	d := clitest.DecodeResult[migrate.MigrateDiscovery](t, clitest.MustCustody(t, l.Repo, 3, "--json", "migrate", "discover"), "migrate discover")
	got := map[string]machine.MigrateClass{}
	for _, p := range d.Places {
		got[p.Path] = p.Class
	}
	want := map[string]machine.MigrateClass{
		l.Clone: machine.ClassClone, l.Remote: machine.ClassClone, l.Ordinary: machine.ClassOrdinary, l.OldRoot: machine.ClassOrdinary,
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

	p := mgPlan(t, l.Repo, "migrate.json")
	roles := mgRoleOf(l)
	gotProp := map[string]machine.Disposition{}
	for _, c := range p.Candidates {
		gotProp[roles[c.Audit.ID]] = c.Proposal.Disposition
	}
	if diff := cmp.Diff(mgWantProposal, gotProp); diff != "" {
		t.Fatalf("proposals (-want +got):\n%s", diff)
	}
	if st := mgStatus(t, l.Repo, 3); st.Complete || st.Counts[machine.MigratePending] != len(l.Trees) {
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
	mgDisposeAll(t, l.Repo, p)

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
	mgCheckEnd(t, l, untouched)

	// Re-running revalidates and repeats nothing.
	again := clitest.DecodeResult[migrate.MigrateApplyResult](t, clitest.MustCustody(t, l.Repo, 0, "--json", "migrate", "apply", "migrate.json", "--allow-external-retirement"), "migrate apply")
	for _, it := range again.Items {
		if it.Outcome != machine.OutcomeAlreadyDone {
			t.Errorf("second apply: %s %s, want already-done", it.ID, it.Outcome)
		}
	}
	mgCheckEnd(t, l, untouched)
}

// mgCheckEnd asserts the complete migration's end state: each candidate
// where mgWantState says, nothing lost, nothing else touched, and an
// exported journal that verifies and accounts for every candidate.
func mgCheckEnd(t *testing.T, l *fixtures.Legacy, untouched map[string]fixtures.Snapshot) {
	t.Helper()
	st := mgStatus(t, l.Repo, 0)
	if !st.Complete {
		t.Fatalf("migration not complete: %+v", st)
	}
	roles := mgRoleOf(l)
	gotState := map[string]machine.MigrateState{}
	for _, c := range st.Candidates {
		gotState[roles[c.ID]] = c.State
	}
	if diff := cmp.Diff(mgWantState, gotState); diff != "" {
		t.Fatalf("end states (-want +got):\n%s", diff)
	}
	moved := mgMoved(l)
	for role, path := range l.Trees {
		_, err := os.Lstat(path)
		if gone := err != nil; gone != (mgWantState[role] == machine.MigrateRemoved || role == "missing" || moved[role] != "") {
			t.Errorf("%s (%s): lstat %v, want state %s", role, path, err, mgWantState[role])
		}
	}
	for role, to := range moved {
		if got, err := l.TryGitIn(to, "rev-parse", "HEAD"); err != nil || got != l.Heads[role] {
			t.Errorf("%s moved to %s: HEAD %q %v, want %s", role, to, got, err, l.Heads[role])
		}
	}
	mgCheckUntouched(t, l, untouched)
	// Nothing lost: published heads are on origin; landed heads on review
	// branches; the dirty tree's bytes in its archive.
	for _, role := range []string{"sibling", "old-root", "missing", "submodule"} {
		if _, err := l.TryGitIn(l.Remote, "cat-file", "-e", l.Heads[role]+"^{commit}"); err != nil {
			t.Errorf("%s's HEAD %s is not on origin: %v", role, l.Heads[role], err)
		}
	}
	for _, role := range []string{"missing"} {
		ref := "refs/heads/custody/review/" + filepath.Base(l.Trees[role])
		if got, _ := l.TryGitIn(l.Remote, "rev-parse", ref); got != l.Heads[role] {
			t.Errorf("review branch %s = %q, want %s", ref, got, l.Heads[role])
		}
	}
	restored := filepath.Join(l.Root, "restored-dirty")
	if _, err := os.Stat(restored); err != nil {
		lst := clitest.DecodeResult[struct {
			Archives []archive.ArchiveCheck `json:"archives"`
		}](t, clitest.MustCustody(t, l.Repo, 0, "--json", "archive", "list"), "archive list")
		id := ""
		for _, a := range lst.Archives {
			if a.Record == filepath.Base(l.Trees["dirty"]) {
				id = a.ID
			}
		}
		if id == "" {
			t.Fatalf("no archive of the dirty tree: %+v", lst)
		}
		clitest.MustCustody(t, l.Repo, 0, "archive", "restore", id, restored)
	}
	for name, want := range map[string]string{"README": "fixture, edited and never committed\n", "notes.txt": "untracked notes\n"} {
		if b, err := os.ReadFile(filepath.Join(restored, name)); err != nil || string(b) != want {
			t.Errorf("restored %s = %q, %v; want %q", name, b, err, want)
		}
	}
	mgCheckJournal(t, l.Repo, st)
}

// mgCheckJournal exports the journal, verifies it offline, and requires an
// observation, a disposition and an outcome of every candidate in it.
func mgCheckJournal(t *testing.T, r *fixtures.Repo, st migrate.MigrateStatusResult) {
	t.Helper()
	out := filepath.Join(r.Root, "journal.jsonl")
	clitest.MustCustody(t, r, 0, "journal", "export", "-o", out)
	clitest.MustCustody(t, r, 0, "journal", "verify", out)
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[string]map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var e struct {
			Event  string          `json:"event"`
			Detail json.RawMessage `json:"detail"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || !strings.HasPrefix(e.Event, "migrate-") || e.Event == machine.EventMigrateDiscovery {
			continue
		}
		var ev machine.MigrateEvent
		if err := json.Unmarshal(e.Detail, &ev); err != nil {
			t.Fatal(err)
		}
		if seen[ev.Candidate] == nil {
			seen[ev.Candidate] = map[string]bool{}
		}
		seen[ev.Candidate][ev.Event] = true
	}
	for _, c := range st.Candidates {
		for _, ev := range []string{machine.EventMigrateObservation, machine.EventMigrateDisposition, machine.EventMigrateAct, machine.EventMigrateOutcome} {
			if !seen[c.ID][ev] {
				t.Errorf("the exported journal has no %s of %s", ev, c.ID)
			}
		}
	}
}
