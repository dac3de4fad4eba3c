package machine

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestClassify(t *testing.T) {
	t.Parallel()
	present := LegacyFacts{Path: "/p", PathState: PathPresent, IsDir: true}
	with := func(mod func(*LegacyFacts)) LegacyFacts { f := present; mod(&f); return f }
	for _, tc := range []struct {
		name string
		f    LegacyFacts
		want MigrateClass
	}{
		{"linked", with(func(f *LegacyFacts) {
			f.Registered, f.Git, f.SameCommon, f.CommonKnown, f.AdminKey = true, GitFile, true, true, "k"
		}), ClassLinked},
		{"missing", with(func(f *LegacyFacts) { f.Registered, f.PathState = true, PathAbsent }), ClassMissing},
		{"in custody wins", with(func(f *LegacyFacts) {
			f.Registered, f.Git, f.SameCommon, f.AdminKey, f.Record = true, GitFile, true, "k", "k"
		}), ClassInCustody},
		{"symlink never followed", with(func(f *LegacyFacts) { f.IsSymlink = true; f.Registered = true }), ClassSymlink},
		{"unobservable", with(func(f *LegacyFacts) { f.PathState = PathUnknown }), ClassContradictory},
		{"registered, .git and admin entry disagree", with(func(f *LegacyFacts) { f.Registered, f.Git, f.SameCommon = true, GitFile, true }), ClassContradictory},
		{"registered, .git of another repository", with(func(f *LegacyFacts) { f.Registered, f.Git, f.AdminKey = true, GitFile, "k" }), ClassContradictory},
		{"unreadable .git", with(func(f *LegacyFacts) { f.Git, f.GitError = GitUnreadable, "EACCES" }), ClassContradictory},
		{"ordinary", present, ClassOrdinary},
		{"gitdir names nothing", with(func(f *LegacyFacts) { f.Git = GitFile }), ClassContradictory},
		{"missing registration", with(func(f *LegacyFacts) { f.Git, f.CommonKnown, f.SameCommon = GitFile, true, true }), ClassUnregistered},
		{"another repository's worktree", with(func(f *LegacyFacts) { f.Git, f.CommonKnown = GitFile, true }), ClassOtherRepository},
		{"a .git dir that is ours", with(func(f *LegacyFacts) { f.Git, f.CommonKnown, f.SameCommon = GitDir, true, true }), ClassContradictory},
		{"clone", with(func(f *LegacyFacts) { f.Git, f.CommonKnown, f.SharesHistory = GitDir, true, true }), ClassClone},
		{"unrelated repository", with(func(f *LegacyFacts) { f.Git, f.CommonKnown = GitDir, true }), ClassOtherRepository},
		{"clone one commit ahead", with(func(f *LegacyFacts) { f.Git, f.CommonKnown, f.SharesHistory, f.Ahead = GitDir, true, true, 1 }), ClassClone},
		{"clone far ahead", with(func(f *LegacyFacts) {
			f.Git, f.CommonKnown, f.SharesHistory, f.Ahead = GitDir, true, true, CloneWalkBound+1
		}), ClassClone},
		{"unrelated beyond the walk", with(func(f *LegacyFacts) { f.Git, f.CommonKnown, f.Ahead = GitDir, true, CloneWalkBound+1 }), ClassOtherRepository},
		{"bare remote", with(func(f *LegacyFacts) {
			f.Git, f.CommonKnown, f.Bare, f.SharesHistory, f.Remotes = GitDir, true, true, true, []string{"origin"}
		}), ClassRemote},
		{"bare remote with no history in common", with(func(f *LegacyFacts) { f.Git, f.CommonKnown, f.Bare, f.Remotes = GitDir, true, true, []string{"up"} }), ClassRemote},
		{"bare clone no remote reads", with(func(f *LegacyFacts) { f.Git, f.CommonKnown, f.Bare, f.SharesHistory = GitDir, true, true, true }), ClassClone},
		{"moved: the registration", with(func(f *LegacyFacts) {
			f.Registered, f.PathState, f.AdminKey, f.MovedTo = true, PathAbsent, "k", "/q"
		}), ClassMoved},
		{"moved: the tree", with(func(f *LegacyFacts) {
			f.Git, f.CommonKnown, f.SameCommon, f.AdminKey, f.MovedFrom = GitFile, true, true, "k", "/old"
		}), ClassMoved},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Classify(tc.f)
			if got.Class != tc.want || got.Reason == "" {
				t.Errorf("Classify = %q (%q), want %q", got.Class, got.Reason, tc.want)
			}
			if got.Class.Admitted() != (tc.want == ClassLinked || tc.want == ClassMissing) {
				t.Errorf("%q admitted = %v", got.Class, got.Class.Admitted())
			}
			if (got.Retry != "") != (tc.want == ClassMoved) {
				t.Errorf("%q retry %q", got.Class, got.Retry)
			}
		})
	}
}

func TestPropose(t *testing.T) {
	t.Parallel()
	head := strings.Repeat("a", 40)
	proof := &Proof{Kind: ProofAncestry, Head: head}
	clean := MigrateAudit{ID: "t", Class: ClassLinked, Path: "/t", Head: head, PathState: PathPresent}
	with := func(mod func(*MigrateAudit)) MigrateAudit { a := clean; mod(&a); return a }
	for _, tc := range []struct {
		name    string
		a       MigrateAudit
		want    Disposition
		allowed []Disposition
	}{
		{"published and clean: retire", with(func(a *MigrateAudit) { a.Proof, a.Removable = proof, true }), DispositionRetire,
			[]Disposition{DispositionArchive, DispositionAdoptRelocate, DispositionRetire, DispositionReject}},
		{"unpushed commits: land", with(func(a *MigrateAudit) {
			a.Unpushed = 2
			a.Refusals = []Refusal{{Code: CodeUnpushedCommits}}
		}), DispositionLand, []Disposition{DispositionLand, DispositionArchive, DispositionAdoptRelocate, DispositionReject}},
		{"dirty: archive", with(func(a *MigrateAudit) { a.Proof, a.Status.Changed = proof, []string{"README"} }), DispositionArchive,
			[]Disposition{DispositionArchive, DispositionReject}},
		{"hidden state: archive", with(func(a *MigrateAudit) { a.Proof, a.Hidden = proof, []Hidden{{Code: CodePerWorktreeRef}} }), DispositionArchive,
			[]Disposition{DispositionArchive, DispositionReject}},
		{"locked: nothing", with(func(a *MigrateAudit) { a.Locked, a.Unpushed = true, 1 }), "", []Disposition{DispositionLand, DispositionReject}},
		{"in use: nothing", with(func(a *MigrateAudit) { a.Proof, a.InUse = proof, []Process{{PID: 1, Command: "sh"}} }), "", []Disposition{DispositionReject}},
		{"submodules: nothing", with(func(a *MigrateAudit) { a.Proof, a.Refusals = proof, []Refusal{{Code: CodeSubmodules}} }), "", []Disposition{DispositionReject}},
		{"gone and published: release, no push", with(func(a *MigrateAudit) { a.Class, a.PathState, a.Proof = ClassMissing, PathAbsent, proof }), DispositionRelease,
			[]Disposition{DispositionRelease, DispositionReject}},
		{"gone and unpushed: land", with(func(a *MigrateAudit) { a.Class, a.PathState, a.Unpushed = ClassMissing, PathAbsent, 1 }), DispositionLand, []Disposition{DispositionLand, DispositionReject}},
		{"gone, unproven: land", with(func(a *MigrateAudit) { a.Class, a.PathState = ClassMissing, PathAbsent }), DispositionLand, []Disposition{DispositionLand, DispositionReject}},
		{"gone, no head: nothing", with(func(a *MigrateAudit) { a.Class, a.PathState, a.Head = ClassMissing, PathAbsent, "" }), "", []Disposition{DispositionReject}},
		{"kept for another reason", with(func(a *MigrateAudit) {
			a.Proof = proof
			a.Refusals = []Refusal{{Code: CodeRemoteUnavailable, Message: "origin did not answer"}}
		}), "", []Disposition{DispositionArchive, DispositionAdoptRelocate, DispositionReject}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Propose(tc.a)
			if p.Disposition != tc.want || p.Reason == "" {
				t.Errorf("Propose = %q (%q), want %q", p.Disposition, p.Reason, tc.want)
			}
			if diff := cmp.Diff(tc.allowed, p.Allowed); diff != "" {
				t.Errorf("allowed (-want +got):\n%s", diff)
			}
			if p.Disposition != "" && !p.Permits(p.Disposition) {
				t.Errorf("the proposal %q is not among the allowed %v", p.Disposition, p.Allowed)
			}
		})
	}
}

func TestMigrateAuditDigest(t *testing.T) {
	t.Parallel()
	a := MigrateAudit{ID: "t", Path: "/t", Head: strings.Repeat("b", 40), PathState: PathPresent}
	b := a
	if a.Digest() != b.Digest() || !strings.HasPrefix(a.Digest(), "sha256:") {
		t.Fatalf("equal audits, digests %s %s", a.Digest(), b.Digest())
	}
	for name, mod := range map[string]func(*MigrateAudit){
		"status":   func(x *MigrateAudit) { x.Status.Untracked = []string{"new"} },
		"head":     func(x *MigrateAudit) { x.Head = strings.Repeat("c", 40) },
		"identity": func(x *MigrateAudit) { x.Ino = 7 },
		"stash":    func(x *MigrateAudit) { x.Stashes = []string{"s"} },
		"lock":     func(x *MigrateAudit) { x.Locked = true },
	} {
		c := a
		mod(&c)
		if c.Digest() == a.Digest() {
			t.Errorf("a change of %s leaves the digest equal", name)
		}
	}
}

func TestFoldMigration(t *testing.T) {
	t.Parallel()
	obs := func(id, dg string) MigrateEvent {
		return MigrateEvent{Event: EventMigrateObservation, Candidate: id, Path: "/" + id, Digest: dg, Proposal: &MigrateProposal{}}
	}
	dis := func(id, dg string, d Disposition) MigrateEvent {
		return MigrateEvent{Event: EventMigrateDisposition, Candidate: id, Digest: dg, Disposition: d, Approved: d != DispositionReject}
	}
	act := func(id, dg string) MigrateEvent {
		return MigrateEvent{Event: EventMigrateAct, Candidate: id, Digest: dg}
	}
	out := func(id, dg string, o Outcome, c Code) MigrateEvent {
		return MigrateEvent{Event: EventMigrateOutcome, Candidate: id, Digest: dg, Outcome: o, Code: c}
	}
	for _, tc := range []struct {
		name     string
		events   []MigrateEvent
		want     MigrateState
		complete bool
	}{
		{"observed only: needs a disposition", []MigrateEvent{obs("a", "1")}, MigratePending, false},
		{"approved, not applied", []MigrateEvent{obs("a", "1"), dis("a", "1", DispositionRetire)}, MigratePending, false},
		{"killed after the act", []MigrateEvent{obs("a", "1"), dis("a", "1", DispositionRetire), act("a", "1")}, MigratePending, false},
		{"removed", []MigrateEvent{obs("a", "1"), dis("a", "1", DispositionRetire), act("a", "1"), out("a", "1", OutcomeRemoved, "")}, MigrateRemoved, true},
		{"landed", []MigrateEvent{obs("a", "1"), dis("a", "1", DispositionLand), act("a", "1"), out("a", "1", OutcomeLanded, "")}, MigrateRetained, true},
		{"rejected", []MigrateEvent{obs("a", "1"), dis("a", "1", DispositionReject), act("a", "1"), out("a", "1", OutcomeRejected, "")}, MigrateRetained, true},
		{"refused", []MigrateEvent{obs("a", "1"), dis("a", "1", DispositionRetire), act("a", "1"), out("a", "1", OutcomeRefused, CodeExternalTree)}, MigrateRefused, false},
		{"refused, acting again, killed", []MigrateEvent{obs("a", "1"), dis("a", "1", DispositionRetire), act("a", "1"), out("a", "1", OutcomeRefused, CodeExternalTree), act("a", "1")}, MigratePending, false},
		{"changed after approval: a new observation needs a new disposition",
			[]MigrateEvent{obs("a", "1"), dis("a", "1", DispositionRetire), obs("a", "2")}, MigratePending, false},
		{"approved again for the new audit", []MigrateEvent{obs("a", "1"), dis("a", "1", DispositionRetire), obs("a", "2"), dis("a", "2", DispositionArchive)}, MigratePending, false},
		{"re-observed unchanged keeps its outcome", []MigrateEvent{obs("a", "1"), dis("a", "1", DispositionLand), act("a", "1"), out("a", "1", OutcomeLanded, ""), obs("a", "1")}, MigrateRetained, true},
		{"changed after its outcome", []MigrateEvent{obs("a", "1"), dis("a", "1", DispositionLand), act("a", "1"), out("a", "1", OutcomeLanded, ""), obs("a", "2")}, MigratePending, false},
		{"released", []MigrateEvent{obs("a", "1"), dis("a", "1", DispositionRelease), act("a", "1"), out("a", "1", OutcomeReleased, "")}, MigrateRetained, true},
		{"killed, changed: stale ends the act, the new audit is re-proposed",
			[]MigrateEvent{obs("a", "1"), dis("a", "1", DispositionArchive), act("a", "1"), out("a", "1", OutcomeStale, CodeMigrateChanged), obs("a", "2")}, MigratePending, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := FoldMigration(tc.events)
			if len(st) != 1 || st[0].State != tc.want || st[0].Why == "" {
				t.Fatalf("FoldMigration = %+v, want one candidate %s", st, tc.want)
			}
			if got := MigrationComplete(st); got != tc.complete {
				t.Errorf("complete = %v, want %v", got, tc.complete)
			}
		})
	}
	if !MigrationComplete(nil) {
		t.Error("no candidate at all is a complete migration")
	}
}

func TestFoldMigrationSettlesTruthfully(t *testing.T) {
	t.Parallel()
	head := strings.Repeat("a", 40)
	evs := []MigrateEvent{
		{Event: EventMigrateObservation, Candidate: "a", Path: "/a", Digest: "1", Proposal: &MigrateProposal{Disposition: DispositionArchive}, PlanFile: "/m.json"},
		{Event: EventMigrateDisposition, Candidate: "a", Digest: "1", Disposition: DispositionArchive, Approved: true},
		{Event: EventMigrateAct, Candidate: "a", Digest: "1"},
		{Event: EventMigrateOutcome, Candidate: "a", Digest: "1", Outcome: OutcomeStale, Code: CodeMigrateChanged, Reason: "changed"},
		{Event: EventMigrateObservation, Candidate: "a", Path: "/a", Digest: "2", Proposal: &MigrateProposal{Disposition: DispositionArchive}},
		{Event: EventMigrateObservation, Candidate: "b", Path: "/b", Digest: "3", Proposal: &MigrateProposal{Disposition: DispositionRelease}},
		{Event: EventMigrateDisposition, Candidate: "b", Digest: "3", Disposition: DispositionRelease, Approved: true},
		{Event: EventMigrateAct, Candidate: "b", Digest: "3"},
		{Event: EventMigrateOutcome, Candidate: "b", Digest: "3", Outcome: OutcomeReleased, Branch: "feature", Head: head, Proof: "ancestry on origin refs/heads/main"},
	}
	st := FoldMigration(evs)
	if len(st) != 2 {
		t.Fatalf("FoldMigration = %+v", st)
	}
	a, b := st[0], st[1]
	if a.State != MigratePending || a.Interrupted || a.Digest != "2" || a.Next != MigrateDisposeRetry("a", "2", DispositionArchive) {
		t.Errorf("a killed candidate whose tree changed: %+v, want pending on the new audit with its dispose command", a)
	}
	if b.State != MigrateRetained || b.Branch != "feature" || b.Head != head || !strings.Contains(b.Why, "refs/heads/main") {
		t.Errorf("released: %+v", b)
	}
	what, fix := MigrationIncomplete(st)
	if !strings.Contains(what, "1 of 2") || fix != a.Next {
		t.Errorf("MigrationIncomplete = %q, %q", what, fix)
	}
	if w, f := MigrationIncomplete(st[1:]); w != "" || f != "" {
		t.Errorf("complete: MigrationIncomplete = %q, %q", w, f)
	}
	if got, want := LegacyBranchDelete("feature", head), "git update-ref -d refs/heads/feature "+head; got != want {
		t.Errorf("LegacyBranchDelete = %q, want %q", got, want)
	}
}

func TestParseMigratePlan(t *testing.T) {
	t.Parallel()
	a := MigrateAudit{ID: "t", Path: "/t", PathState: PathPresent}
	p := SealMigratePlan(MigratePlan{Repository: PlanRepository{ID: "r", CommonDir: "/c"},
		Candidates: []MigrateCandidate{{Audit: a, Digest: a.Digest(), Proposal: Propose(a)}}})
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseMigratePlan(b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(p, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	for name, bad := range map[string][]byte{
		"garbage":  []byte("not json"),
		"edited":   []byte(strings.Replace(string(b), `"/t"`, `"/u"`, 1)),
		"trailing": append(b, []byte("{}")...),
		"unknown":  []byte(strings.Replace(string(b), `"format"`, `"extra":1,"format"`, 1)),
		"format":   []byte(strings.Replace(string(b), MigratePlanFormat, "custody.plan/1", 1)),
	} {
		if _, err := ParseMigratePlan(bad); !errors.Is(err, ErrPlanInvalid) {
			t.Errorf("%s: err = %v, want ErrPlanInvalid", name, err)
		}
	}
	// A digest that does not match its audit, even with a re-sealed id.
	q := p
	q.Candidates = []MigrateCandidate{{Audit: a, Digest: "sha256:00", Proposal: Propose(a)}}
	qb, _ := json.Marshal(SealMigratePlan(q))
	if _, err := ParseMigratePlan(qb); !errors.Is(err, ErrPlanInvalid) {
		t.Errorf("wrong digest: err = %v, want ErrPlanInvalid", err)
	}
}
