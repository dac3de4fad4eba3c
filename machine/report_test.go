package machine

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var reportT0 = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)

// rpe builds one entry of a test journal.
func rpe(seq uint64, record, kind, from, to, trigger, intent, outcome string) ReportEntry {
	e := ReportEntry{Seq: seq, At: reportT0.Add(time.Duration(seq) * time.Minute), Record: record, Kind: kind,
		From: from, To: to, Trigger: trigger, Outcome: outcome, Hash: fmt.Sprintf("h%d", seq)}
	if intent != "" {
		e.Intent = json.RawMessage(intent)
	}
	return e
}

func rpEvent(seq uint64, record, event, detail string) ReportEntry {
	return ReportEntry{Seq: seq, At: reportT0.Add(time.Duration(seq) * time.Minute), Record: record, Kind: "worktree",
		Event: event, Detail: json.RawMessage(detail), Hash: fmt.Sprintf("h%d", seq)}
}

const (
	rpC1 = "1111111111111111111111111111111111111111"
	rpC2 = "2222222222222222222222222222222222222222"
)

// rpRun feeds entries to an audit and returns every section in the order
// it was handed back, and the summary.
func rpRun(entries []ReportEntry) ([]ReportSection, ReportSummary) {
	a := NewAudit("test", nil)
	rows := map[string][]ReportRow{}
	for _, e := range entries {
		rec, row, _ := a.Add(e)
		rows[rec] = append(rows[rec], row)
	}
	sum, groups := a.Close()
	var out []ReportSection
	for _, g := range groups {
		for _, s := range g.Sections {
			s.Rows = rows[s.Record]
			out = append(out, s)
		}
	}
	return out, sum
}

func rpLifecycle(id string) []ReportEntry {
	return []ReportEntry{
		rpe(1, id, "worktree", "none", "provisioning", "create", `{"kind":"create","path":"/r/.worktrees/`+id+`"}`, "create intent"),
		rpe(2, id, "worktree", "provisioning", "active", "created", "", "created"),
		rpe(3, id, "worktree", "active", "finished", "finish", "", "finish"),
	}
}

// TestAuditRemoval: a removal shows the intent that preceded it, its proof
// (every member, an archive's included), plan and fingerprint, the branch
// outcome with its old commit and the recovery refs; a removal whose
// branch deletion was never journaled keeps the branch.
func TestAuditRemoval(t *testing.T) {
	for _, tc := range []struct {
		name    string
		proof   string
		between []ReportEntry
		want    ReportRemoval
	}{
		{
			name:  "ancestry, branch deleted, recovery ref",
			proof: `{"kind":"ancestry","remote":"origin","ref":"refs/heads/main","tip":"` + rpC2 + `","head":"` + rpC2 + `"}`,
			between: []ReportEntry{
				rpEvent(5, "x", "recovered", `{"refs":[{"ref":"refs/custody/recovered/x/`+rpC1+`","commit":"`+rpC1+`"}]}`),
				rpEvent(6, "", "branch-deleting", `{"record":"x","branch":"custody/x","commit":"`+rpC2+`","plan":"sha256:p"}`),
			},
			want: ReportRemoval{IntentSeq: 4, Path: "/r/.worktrees/x", Commit: rpC2, PlanID: "sha256:p", Fingerprint: "sha256:f",
				Proof:       &Proof{Kind: ProofAncestry, Remote: "origin", Ref: "refs/heads/main", Tip: rpC2, Head: rpC2},
				ProofFields: [][2]string{{"kind", "ancestry"}, {"remote", "origin"}, {"ref", "refs/heads/main"}, {"tip", rpC2}, {"head", rpC2}},
				Observation: "sha256:obs", RemovedSeq: 7, Branch: "custody/x", BranchOutcome: "deleted", BranchCommit: rpC2,
				Recovered: []RecoveredRef{{Ref: "refs/custody/recovered/x/" + rpC1, Commit: rpC1}}},
		},
		{
			name:  "archive, branch kept",
			proof: `{"kind":"archive","archive_id":"a-1","digest":"sha256:d","head":"` + rpC2 + `","commits":["` + rpC1 + `","` + rpC2 + `"]}`,
			want: ReportRemoval{IntentSeq: 4, Path: "/r/.worktrees/x", Commit: rpC2, PlanID: "sha256:p", Fingerprint: "sha256:f",
				Proof:       &Proof{Kind: ProofArchive, Head: rpC2, Commits: []string{rpC1, rpC2}},
				ProofFields: [][2]string{{"kind", "archive"}, {"archive_id", "a-1"}, {"digest", "sha256:d"}, {"head", rpC2}, {"commits", rpC1 + ", " + rpC2}},
				Observation: "sha256:obs", RemovedSeq: 7, Branch: "custody/x", BranchOutcome: "kept", BranchCommit: rpC2},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			es := rpLifecycle("x")
			in := rpe(4, "x", "worktree", "finished", "removing", "remove",
				`{"kind":"removal","path":"/r/.worktrees/x","branch":"custody/x","commit":"`+rpC2+`","proof":`+tc.proof+`,"fingerprint":"sha256:f","plan_id":"sha256:p"}`, "removal intent")
			in.Observation = "sha256:obs"
			es = append(es, in)
			es = append(es, tc.between...)
			es = append(es, rpe(7, "x", "worktree", "removing", "tombstoned", "removed", "", "removed"))
			secs, sum := rpRun(es)
			var got []ReportRemoval
			for _, s := range secs {
				if s.Record == "x" {
					got = append(got, s.Removals...)
				}
			}
			if d := cmp.Diff([]ReportRemoval{tc.want}, got); d != "" {
				t.Errorf("removal (-want +got):\n%s", d)
			}
			if sum.TreesRemoved != 1 || sum.TreesCreated != 1 || sum.TreesKept != 0 {
				t.Errorf("summary %+v", sum)
			}
		})
	}
}

// TestAuditAbandonKeptDiscard: an abandonment carries its acknowledged
// commit and no proof; a finished tree at the end is kept; a discard is
// counted as such.
func TestAuditAbandonKeptDiscard(t *testing.T) {
	es := rpLifecycle("ab")
	es = append(es, rpe(4, "ab", "worktree", "finished", "tombstoned", "abandon", "", "abandoned: "+rpC1))
	for i, e := range rpLifecycle("kept") {
		e.Seq = uint64(10 + i)
		es = append(es, e)
	}
	es = append(es, rpe(20, "dis", "worktree", "none", "provisioning", "create", `{"kind":"create"}`, "create intent"),
		rpe(21, "dis", "worktree", "provisioning", "tombstoned", "discard", "", "discarded: nothing was made"))
	secs, sum := rpRun(es)
	byID := map[string]ReportSection{}
	for _, s := range secs {
		byID[s.Record] = s
	}
	if s := byID["ab"]; s.Abandoned != rpC1 || s.AbandonedSeq != 4 || len(s.Removals) != 0 || s.State != "tombstoned" {
		t.Errorf("abandoned section %+v", s)
	}
	if s := byID["kept"]; s.State != "finished" || len(s.Removals) != 0 {
		t.Errorf("kept section %+v", s)
	}
	if !byID["dis"].Discarded {
		t.Errorf("discarded section %+v", byID["dis"])
	}
	want := ReportSummary{Format: ReportSummaryFormat, Entries: 9, FirstSeq: 1, LastSeq: 21, FirstAt: es[0].At, LastAt: es[len(es)-1].At,
		Head: "h21", TreesMigrated: []ReportCount{}, TreesCreated: 2, TreesKept: 1, TreesAbandoned: 1, TreesDiscarded: 1, CustodyVersion: "test", Records: 3}
	if d := cmp.Diff(want, sum); d != "" {
		t.Errorf("summary (-want +got):\n%s", d)
	}
}

// TestJSONSchemaShapes: the schema generator's rules, on a small type.
func TestJSONSchemaShapes(t *testing.T) {
	type inner struct {
		A string `json:"a"`
	}
	type embedded struct {
		E int `json:"e"`
	}
	type shape struct {
		embedded
		S   string          `json:"s"`
		O   string          `json:"o,omitempty"`
		P   *inner          `json:"p"`
		L   []string        `json:"l"`
		T   time.Time       `json:"t"`
		R   json.RawMessage `json:"r"`
		U   uint64          `json:"u,omitempty"`
		Hid string          `json:"-"`
	}
	got := JSONSchema(shape{}, "id", "title")
	b, _ := json.Marshal(got)
	note, _ := json.Marshal(StringBytesNote)
	want := `{"$comment":` + string(note) + `,"$id":"id","$schema":"https://json-schema.org/draft/2020-12/schema","additionalProperties":false,` +
		`"properties":{"e":{"type":"integer"},"l":{"items":{"type":"string"},"type":["array","null"]},"o":{"type":"string"},` +
		`"p":{"additionalProperties":false,"properties":{"a":{"type":"string"}},"required":["a"],"type":["object","null"]},` +
		`"r":{},"s":{"type":"string"},"t":{"format":"date-time","type":"string"},"u":{"minimum":0,"type":"integer"}},` +
		`"required":["e","s","p","l","t","r"],"title":"title","type":"object"}`
	if d := cmp.Diff(want, string(b)); d != "" {
		t.Errorf("schema (-want +got):\n%s", d)
	}
}

// TestAuditArchiveCounts: the summary counts archives from the archive
// kind's entries (sealed, pruned; a discarded capture is neither) and the
// removals a sealed archive proved, from the proof the removal carried.
func TestAuditArchiveCounts(t *testing.T) {
	archive := func(id string, seq uint64, pruned bool) []ReportEntry {
		es := []ReportEntry{
			rpe(seq, id, "archive", "none", "provisioning", "capture", `{"kind":"archive-capture"}`, "capture intent"),
			rpe(seq+1, id, "archive", "provisioning", "active", "seal", "", "sealed"),
			rpe(seq+2, id, "archive", "active", "finished", "sole-copy", "", "sole copy"),
		}
		if pruned {
			es = append(es, rpe(seq+3, id, "archive", "finished", "removing", "prune", `{"kind":"archive-prune"}`, "prune intent"),
				rpe(seq+4, id, "archive", "removing", "tombstoned", "pruned", "", "pruned"))
		}
		return es
	}
	removal := func(id string, seq uint64, proof string) []ReportEntry {
		es := rpLifecycle(id)
		for i := range es {
			es[i].Seq = seq + uint64(i)
		}
		return append(es,
			rpe(seq+3, id, "worktree", "finished", "removing", "remove", `{"kind":"removal","proof":`+proof+`}`, "removal intent"),
			rpe(seq+4, id, "worktree", "removing", "tombstoned", "removed", "", "removed"))
	}
	for _, tc := range []struct {
		name    string
		entries []ReportEntry
		made    int
		used    int
		pruned  int
	}{
		{name: "none", entries: removal("w", 1, `{"kind":"ancestry","head":"`+rpC1+`"}`)},
		{name: "sealed, kept", entries: archive("a-1", 1, false), made: 1},
		{name: "sealed and pruned", entries: archive("a-1", 1, true), made: 1, pruned: 1},
		{name: "discarded capture", entries: []ReportEntry{
			rpe(1, "a-1", "archive", "none", "provisioning", "capture", `{"kind":"archive-capture"}`, "capture intent"),
			rpe(2, "a-1", "archive", "provisioning", "tombstoned", "discard", "", "discarded"),
		}},
		{name: "used as proof, then pruned", entries: append(append(archive("a-1", 1, false),
			removal("w", 10, `{"kind":"archive","ref":"a-1","head":"`+rpC1+`"}`)...),
			rpe(20, "a-1", "archive", "finished", "removing", "prune", `{"kind":"archive-prune"}`, "prune intent"),
			rpe(21, "a-1", "archive", "removing", "tombstoned", "pruned", "", "pruned")), made: 1, used: 1, pruned: 1},
		{name: "a removal on another proof uses no archive", entries: append(archive("a-1", 1, false),
			removal("w", 10, `{"kind":"squash-merged","head":"`+rpC1+`"}`)...), made: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, sum := rpRun(tc.entries)
			got := [3]int{sum.Archives, sum.ArchivesUsed, sum.ArchivesPruned}
			if d := cmp.Diff([3]int{tc.made, tc.used, tc.pruned}, got); d != "" {
				t.Errorf("archives made, used, pruned (-want +got):\n%s", d)
			}
		})
	}
}
