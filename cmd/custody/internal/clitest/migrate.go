package clitest

// custody migrate of the legacy layout (fixtures.NewLegacy) by the binary:
// the plan, the dispositions an operator records, status, and the checks
// of the complete migration's end state and its journal.

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	json "github.com/custody-sh/custody/machine/bytejson"
	"github.com/custody-sh/custody/steps/archive"
	"github.com/custody-sh/custody/steps/migrate"
	"github.com/google/go-cmp/cmp"
)

// legacyWantState is where each role of the legacy layout stands once the
// migration is complete.
var legacyWantState = map[string]machine.MigrateState{
	"sibling":   machine.MigrateRemoved,
	"old-root":  machine.MigrateRemoved,
	"missing":   machine.MigrateRetained,
	"locked":    machine.MigrateRetained,
	"dirty":     machine.MigrateRemoved,
	"unpushed":  machine.MigrateRetained,
	"submodule": machine.MigrateRetained,
}

// legacyChoose is the disposition the operator chooses instead of the
// proposal, by candidate id: the tree with unpushed work is brought into
// the managed root rather than landed.
var legacyChoose = map[string]machine.Disposition{"repo-unpushed": machine.DispositionAdoptRelocate}

// legacyMoved is where a role's tree is at the end, when not where it was.
func legacyMoved(l *fixtures.Legacy) map[string]string {
	return map[string]string{"unpushed": filepath.Join(l.Dir, ".worktrees", "repo-unpushed")}
}

// MigratePlan runs migrate plan -o file and returns the parsed plan.
func MigratePlan(t testing.TB, r *fixtures.Repo, file string) machine.MigratePlan {
	t.Helper()
	MustCustody(t, r, 0, "migrate", "plan", "-o", file)
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

// LegacyRoles maps a candidate id to its role in l.
func LegacyRoles(l *fixtures.Legacy) map[string]string {
	m := map[string]string{}
	for role, p := range l.Trees {
		m[filepath.Base(p)] = role
	}
	return m
}

// MigrateDisposeAll approves every proposal of p and rejects the
// candidates with none, as an operator reviewing the plan would; the
// legacy layout's tree with unpushed work is approved to be brought into
// the managed root rather than landed.
func MigrateDisposeAll(t testing.TB, r *fixtures.Repo, p machine.MigratePlan) {
	t.Helper()
	for _, c := range p.Candidates {
		if c.Proposal.Disposition == "" {
			MustCustody(t, r, 0, "migrate", "dispose", c.Audit.ID, "--reject", "kept where it is: "+c.Proposal.Reason, "--digest", c.Digest)
			continue
		}
		if d, ok := legacyChoose[c.Audit.ID]; ok {
			MustCustody(t, r, 0, "migrate", "dispose", c.Audit.ID, "--approve", "--disposition", string(d), "--digest", c.Digest)
			continue
		}
		MustCustody(t, r, 0, "migrate", "dispose", c.Audit.ID, "--approve", "--digest", c.Digest)
	}
}

// MigrateStatus runs migrate status --json, which must exit want.
func MigrateStatus(t testing.TB, r *fixtures.Repo, want int) migrate.MigrateStatusResult {
	t.Helper()
	return DecodeResult[migrate.MigrateStatusResult](t, MustCustody(t, r, want, "--json", "migrate", "status"), "migrate status")
}

// LegacyUntouched snapshots everything a migration of l must never
// change.
func LegacyUntouched(l *fixtures.Legacy) map[string]fixtures.Snapshot {
	m := map[string]fixtures.Snapshot{}
	for _, p := range []string{l.Other, l.OtherTree, l.Clone, l.Ordinary, l.Trees["locked"], l.Trees["unpushed"], l.Trees["submodule"]} {
		m[p] = l.Snap(p)
	}
	return m
}

// legacyCheckUntouched checks that every snapshot of LegacyUntouched still
// holds, at the tree's new place for a tree the migration moved.
func legacyCheckUntouched(t testing.TB, l *fixtures.Legacy, before map[string]fixtures.Snapshot) {
	t.Helper()
	moved := map[string]string{}
	for role, to := range legacyMoved(l) {
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

// LegacyCheckEnd asserts the complete migration's end state of l, whose
// candidates were disposed by MigrateDisposeAll: each candidate where it
// should stand, nothing lost, nothing else touched (untouched is from
// LegacyUntouched), and an exported journal that verifies and accounts
// for every candidate.
func LegacyCheckEnd(t *testing.T, l *fixtures.Legacy, untouched map[string]fixtures.Snapshot) {
	t.Helper()
	st := MigrateStatus(t, l.Repo, 0)
	if !st.Complete {
		t.Fatalf("migration not complete: %+v", st)
	}
	roles := LegacyRoles(l)
	gotState := map[string]machine.MigrateState{}
	for _, c := range st.Candidates {
		gotState[roles[c.ID]] = c.State
	}
	if diff := cmp.Diff(legacyWantState, gotState); diff != "" {
		t.Fatalf("end states (-want +got):\n%s", diff)
	}
	moved := legacyMoved(l)
	for role, path := range l.Trees {
		_, err := os.Lstat(path)
		if gone := err != nil; gone != (legacyWantState[role] == machine.MigrateRemoved || role == "missing" || moved[role] != "") {
			t.Errorf("%s (%s): lstat %v, want state %s", role, path, err, legacyWantState[role])
		}
	}
	for role, to := range moved {
		if got, err := l.TryGitIn(to, "rev-parse", "HEAD"); err != nil || got != l.Heads[role] {
			t.Errorf("%s moved to %s: HEAD %q %v, want %s", role, to, got, err, l.Heads[role])
		}
	}
	legacyCheckUntouched(t, l, untouched)
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
		lst := DecodeResult[struct {
			Archives []archive.ArchiveCheck `json:"archives"`
		}](t, MustCustody(t, l.Repo, 0, "--json", "archive", "list"), "archive list")
		id := ""
		for _, a := range lst.Archives {
			if a.Record == filepath.Base(l.Trees["dirty"]) {
				id = a.ID
			}
		}
		if id == "" {
			t.Fatalf("no archive of the dirty tree: %+v", lst)
		}
		MustCustody(t, l.Repo, 0, "archive", "restore", id, restored)
	}
	for name, want := range map[string]string{"README": "fixture, edited and never committed\n", "notes.txt": "untracked notes\n"} {
		if b, err := os.ReadFile(filepath.Join(restored, name)); err != nil || string(b) != want {
			t.Errorf("restored %s = %q, %v; want %q", name, b, err, want)
		}
	}
	MigrateCheckJournal(t, l.Repo, st)
}

// MigrateCheckJournal exports the journal, verifies it offline, and
// requires an observation, a disposition, an act and an outcome of every
// candidate of st in it.
func MigrateCheckJournal(t *testing.T, r *fixtures.Repo, st migrate.MigrateStatusResult) {
	t.Helper()
	out := filepath.Join(r.Root, "journal.jsonl")
	MustCustody(t, r, 0, "journal", "export", "-o", out)
	MustCustody(t, r, 0, "journal", "verify", out)
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
