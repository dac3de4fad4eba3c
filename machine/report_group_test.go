package machine

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// rpMigrate is one migration event of candidate id, journaled under the
// worktree kind as migrate apply writes it.
func rpMigrate(seq uint64, id, actor string, ev MigrateEvent) ReportEntry {
	ev.Candidate = id
	b, _ := json.Marshal(ev)
	e := rpEvent(seq, id, ev.Event, string(b))
	e.Actor = actor
	return e
}

// rpCandidate is a legacy tree audited, decided by approver and carried
// out with outcome (no outcome: not applied yet).
func rpCandidate(seq uint64, id string, d Disposition, approver string, outcome Outcome) []ReportEntry {
	dg := "sha256:" + id
	es := []ReportEntry{
		rpMigrate(seq, id, "planner", MigrateEvent{Event: EventMigrateObservation, Path: "/legacy/" + id, Digest: dg, PlanID: "sha256:plan",
			Proposal: &MigrateProposal{Disposition: d, Reason: "why " + id}}),
		rpMigrate(seq+1, id, approver, MigrateEvent{Event: EventMigrateDisposition, Digest: dg, Disposition: d, Approved: d != DispositionReject}),
	}
	if outcome != "" {
		es = append(es, rpMigrate(seq+2, id, "applier", MigrateEvent{Event: EventMigrateAct, Digest: dg, Disposition: d}),
			rpMigrate(seq+3, id, "applier", MigrateEvent{Event: EventMigrateOutcome, Digest: dg, Disposition: d, Outcome: outcome}))
	}
	return es
}

func rpSeqs(es []ReportEntry, from uint64) []ReportEntry {
	for i := range es {
		es[i].Seq = from + uint64(i)
		es[i].Hash = fmt.Sprintf("h%d", es[i].Seq)
	}
	return es
}

// rpAdopted is a tree adopted, finished and removed with build output.
func rpAdopted(id string, discarded string) []ReportEntry {
	return []ReportEntry{
		rpe(0, id, "worktree", "none", "active", "adopt", "", "adopted"),
		rpe(0, id, "worktree", "active", "finished", "finish", "", "finish"),
		rpe(0, id, "worktree", "finished", "removing", "remove", `{"kind":"removal","path":"/legacy/`+id+`","commit":"`+rpC1+`","discarded":`+discarded+`}`, "removal intent"),
		rpe(0, id, "worktree", "removing", "tombstoned", "removed", "", "removed"),
	}
}

// TestAuditGroupsByKindAndOperation: every record is one section, whole
// (however its entries interleave with others' and whether they follow
// its tombstone or are events), in one group per kind and operation, the
// groups in the kinds' order and each kind's operation order, sections by
// first entry; the summary counts each record kind from that kind's own
// rules and the migration by disposition.
func TestAuditGroupsByKindAndOperation(t *testing.T) {
	type group struct {
		title string
		ids   []string
	}
	for _, tc := range []struct {
		name    string
		entries []ReportEntry
		groups  []group
		check   func(t *testing.T, s ReportSummary)
	}{
		{
			name: "interleaved lifecycles and an event after the tombstone",
			entries: rpSeqs(append(append(rpLifecycle("a"), rpLifecycle("b")...),
				rpe(0, "a", "worktree", "finished", "removing", "remove", `{"kind":"removal","discarded":[{"path":"target","kind":"cargo","bytes":10}]}`, "removal intent"),
				rpe(0, "a", "worktree", "removing", "tombstoned", "removed", "", "removed"),
				rpEvent(0, "a", EventRecoveredPruned, `{}`),
				rpe(0, "r", "resource", "none", "provisioning", "create", `{"kind":"create","command":"make db"}`, "create intent"),
				rpe(0, "r", "resource", "provisioning", "active", "created", "", "created"),
				rpe(0, "r", "resource", "active", "removing", "destroy", `{"kind":"destroy","command":"drop db"}`, "destroy intent"),
				rpe(0, "r", "resource", "removing", "tombstoned", "destroyed", "", "destroyed"),
				rpEvent(0, "", "migrate-discovery", `{}`),
			), 1),
			groups: []group{{"Worktrees removed", []string{"a"}}, {"Worktrees kept", []string{"b"}},
				{"Resources destroyed", []string{"r"}}, {"Repository events", []string{""}}},
			check: func(t *testing.T, s ReportSummary) {
				if s.TreesCreated != 2 || s.TreesRemoved != 1 || s.TreesKept != 1 || s.ResourcesMade != 1 || s.ResourcesDestroyed != 1 ||
					s.Records != 3 || s.BuildOutputDirs != 1 || s.BuildOutputBytes != 10 {
					t.Errorf("summary %+v", s)
				}
			},
		},
		{
			name: "a migration with two lands, a retire, an archive, a rejection and one undecided",
			entries: rpSeqs(append(append(append(append(append(append(append(
				rpCandidate(0, "land1", DispositionLand, "ann@h", OutcomeLanded),
				rpCandidate(0, "land2", DispositionLand, "bob@h", OutcomeLanded)...),
				rpCandidate(0, "ret", DispositionRetire, "ann@h", OutcomeRemoved)...),
				rpAdopted("ret-w", `[{"path":"node_modules","kind":"node","bytes":7}]`)...),
				rpCandidate(0, "arc", DispositionArchive, "ann@h", OutcomeRemoved)...),
				rpCandidate(0, "rej", DispositionReject, "ann@h", OutcomeRejected)...),
				rpCandidate(0, "open", DispositionLand, "ann@h", "")...),
				rpMigrate(0, "ref", "applier", MigrateEvent{Event: EventMigrateOutcome, Digest: "sha256:ref", Disposition: DispositionLand, Outcome: OutcomeRefused, Code: "land-no-push", Reason: "no remote"})), 1),
			groups: []group{{"Worktrees removed", []string{"ret-w"}},
				{"Worktrees migrated: land", []string{"land1", "land2"}}, {"Worktrees migrated: archive", []string{"arc"}},
				{"Worktrees migrated: retire", []string{"ret"}}, {"Worktrees migrated: reject", []string{"rej"}},
				{"Worktrees migration not settled", []string{"open", "ref"}}},
			check: func(t *testing.T, s ReportSummary) {
				want := []ReportCount{{"archive", 1}, {"land", 2}, {"reject", 1}, {"retire", 1}}
				if d := cmp.Diff(want, s.TreesMigrated); d != "" {
					t.Errorf("migrated (-want +got):\n%s", d)
				}
				if s.MigrationsOpen != 2 || s.TreesAdopted != 1 || s.TreesRemoved != 1 || s.TreesCreated != 0 || s.Records != 8 || s.BuildOutputBytes != 7 {
					t.Errorf("summary %+v", s)
				}
			},
		},
		{
			name: "archives and an abandonment",
			entries: rpSeqs(append(append(rpLifecycle("ab"),
				rpe(0, "ab", "worktree", "finished", "tombstoned", "abandon", "", "abandoned: "+rpC1),
				rpe(0, "x-1", "archive", "none", "provisioning", "capture", `{"kind":"archive-capture"}`, "capture"),
				rpe(0, "x-1", "archive", "provisioning", "active", "seal", "", "sealed"),
				rpe(0, "x-2", "archive", "none", "provisioning", "capture", `{"kind":"archive-capture"}`, "capture"),
				rpe(0, "x-2", "archive", "provisioning", "active", "seal", "", "sealed"),
				rpe(0, "x-2", "archive", "active", "finished", "sole-copy", "", "sole copy"),
				rpe(0, "x-2", "archive", "finished", "removing", "prune", `{"kind":"archive-prune"}`, "prune intent"),
				rpe(0, "x-2", "archive", "removing", "tombstoned", "pruned", "", "pruned")),
				rpe(0, "odd", "gadget", "none", "active", "make", "", "made")), 1),
			groups: []group{{"Worktrees abandoned", []string{"ab"}}, {"Archives pruned", []string{"x-2"}}, {"Archives kept", []string{"x-1"}},
				{"Records of kind gadget kept", []string{"odd"}}},
			check: func(t *testing.T, s ReportSummary) {
				if s.TreesAbandoned != 1 || s.TreesArchived != 2 || s.Archives != 2 || s.ArchivesPruned != 1 || s.Records != 4 {
					t.Errorf("summary %+v", s)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := NewAudit("test", nil)
			rows := map[string]int{}
			for _, e := range tc.entries {
				rec, _, _ := a.Add(e)
				rows[rec]++
			}
			sum, groups := a.Close()
			var got []group
			seen := map[string]bool{}
			for _, g := range groups {
				gg := group{title: g.Title}
				for _, s := range g.Sections {
					if seen[s.Record] {
						t.Errorf("record %q has two sections", s.Record)
					}
					seen[s.Record] = true
					if s.Entries != rows[s.Record] || len(s.Rows) != 0 {
						t.Errorf("section %q counts %d entries (holding %d rows), want %d", s.Record, s.Entries, len(s.Rows), rows[s.Record])
					}
					gg.ids = append(gg.ids, s.Record)
				}
				got = append(got, gg)
			}
			if d := cmp.Diff(tc.groups, got, cmp.AllowUnexported(group{})); d != "" {
				t.Errorf("groups (-want +got):\n%s", d)
			}
			tc.check(t, sum)
		})
	}
}

// TestAuditMigration: a candidate's section says, for the digest its
// outcome is bound to, the disposition, who approved it, the digest and
// the outcome; a new audit with another digest drops the old decision;
// each migration row reads as what it says.
func TestAuditMigration(t *testing.T) {
	es := rpCandidate(1, "c", DispositionLand, "ann@h", OutcomeLanded)
	secs, _ := rpRun(es)
	want := &ReportMigration{Path: "/legacy/c", Digest: "sha256:c", PlanID: "sha256:plan", Proposed: DispositionLand, ProposedReason: "why c",
		Disposition: DispositionLand, Approved: true, ApprovedBy: "ann@h", ApprovedSeq: 2, ActSeq: 3, Outcome: OutcomeLanded, OutcomeSeq: 4, Settled: true}
	want.Decided = map[string]ReportDecision{"sha256:c": {Disposition: DispositionLand, Approved: true, Actor: "ann@h", Seq: 2}}
	if d := cmp.Diff(want, secs[0].Migration); d != "" {
		t.Errorf("migration (-want +got):\n%s", d)
	}
	var texts []string
	for _, r := range secs[0].Rows {
		texts = append(texts, r.Outcome+" | "+r.Observation+" | "+r.Actor)
	}
	wantRows := []string{"audited: proposes land (why c) | sha256:c | planner", "approved land | sha256:c | ann@h",
		"acting: land | sha256:c | applier", "land → landed | sha256:c | applier"}
	if d := cmp.Diff(wantRows, texts); d != "" {
		t.Errorf("rows (-want +got):\n%s", d)
	}

	// Re-audited with another digest: no decision binds, not settled.
	es = append(es, rpMigrate(5, "c", "planner", MigrateEvent{Event: EventMigrateObservation, Digest: "sha256:new", Proposal: &MigrateProposal{Disposition: DispositionRetire}}))
	secs, sum := rpRun(es)
	m := secs[0].Migration
	if m.Digest != "sha256:new" || m.Disposition != "" || m.ApprovedBy != "" || m.Outcome != "" || m.Settled || secs[0].Operation != OperationMigrating || sum.MigrationsOpen != 1 {
		t.Errorf("re-audited candidate: %+v (operation %q)", m, secs[0].Operation)
	}
}

// TestAuditSetAsideAgrees: an audit that hands back each tombstoned
// record's section (kept by the caller, given back with Reopen when a later
// entry names the record, ended by the caller) gives the same summary and
// the same sections as one that keeps them all.
func TestAuditSetAsideAgrees(t *testing.T) {
	journal := rpSeqs(append(append(append(append(rpLifecycle("a"),
		rpe(0, "a", "worktree", "finished", "removing", "remove", `{"kind":"removal","discarded":[{"path":"target","kind":"cargo","bytes":10}]}`, "removal intent"),
		rpe(0, "a", "worktree", "removing", "tombstoned", "removed", "", "removed"),
		rpEvent(0, "a", EventRecoveredPruned, `{}`)),
		rpCandidate(0, "ret", DispositionRetire, "ann@h", "")...),
		rpAdopted("ret", `[{"path":"node_modules","kind":"node","bytes":7}]`)...),
		rpMigrate(0, "ret", "applier", MigrateEvent{Event: EventMigrateOutcome, Digest: "sha256:ret", Disposition: DispositionRetire, Outcome: OutcomeRemoved}),
		rpEvent(0, "", "branch-deleting", `{"record":"a","branch":"custody/a","commit":"`+rpC1+`"}`)), 1)
	keep := NewAudit("test", nil)
	for _, e := range journal {
		keep.Add(e)
	}
	wantSum, wantGroups := keep.Close()

	aside := NewAudit("test", nil)
	aside.SetAside()
	shelf := map[string]ReportSection{}
	for _, e := range journal {
		if s, ok := shelf[ReportRecord(e)]; ok {
			delete(shelf, ReportRecord(e))
			aside.Reopen(s)
		}
		if _, _, done := aside.Add(e); done != nil {
			shelf[done.Record] = *done
		}
	}
	if len(shelf) == 0 {
		t.Fatal("nothing was handed back: the test tests nothing")
	}
	var ended []ReportSection
	for _, s := range shelf {
		aside.End(&s)
		ended = append(ended, s)
	}
	gotSum, open := aside.Close()
	if d := cmp.Diff(wantSum, gotSum); d != "" {
		t.Errorf("summary (-keep +aside):\n%s", d)
	}
	got := map[string]ReportSection{}
	for _, s := range ended {
		got[s.Record] = s
	}
	for _, g := range open {
		for _, s := range g.Sections {
			got[s.Record] = s
		}
	}
	for _, g := range wantGroups {
		for _, s := range g.Sections {
			if d := cmp.Diff(s, got[s.Record]); d != "" {
				t.Errorf("section %q (-keep +aside):\n%s", s.Record, d)
			}
			if a := aside.Group(got[s.Record]); a.Title != g.Title {
				t.Errorf("section %q is in %q, want %q", s.Record, a.Title, g.Title)
			}
		}
	}
}
