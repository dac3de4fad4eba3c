package machine

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestDecideApplyRecord(t *testing.T) {
	const id = "x-1a2b3c"
	it := PlanItem{ID: id, Action: ActionRemove}
	rec := func(state State, f func(*Record)) *Record {
		r := &Record{ID: id, Path: "/r/.worktrees/" + id, State: state}
		if f != nil {
			f(r)
		}
		return r
	}
	held := func(r *Record) {
		r.Intent = &Intent{Kind: IntentRemoval, Holder: Holder{PID: 42, Host: "h", Command: "custody apply p.json"}, At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("e", 3600)).Add(time.Hour)}
	}
	tombstoned := func(outcome Outcome) func(*Record) {
		return func(r *Record) { r.Evidence.Outcome = string(outcome) }
	}
	show := "custody show " + id
	for _, tc := range []struct {
		name    string
		rec     *Record
		live    HolderLiveness
		mayWait bool
		want    ApplyStep
	}{
		{"the store holds no record", nil, HolderGone, true, ApplyStep{Move: ApplyRefuse, Refusal: &Refusal{Code: CodeUnknownRecord, Retry: "custody plan",
			Message: "the plan names x-1a2b3c, which this repository's store does not hold"}}},
		{"a live holder here, time left", rec(StateRemoving, held), HolderHere, true, ApplyStep{Move: ApplyWait}},
		{"a holder elsewhere, time left", rec(StateRemoving, held), HolderElsewhere, true, ApplyStep{Move: ApplyWait}},
		{"a live holder here, no time left: in progress, no take-over", rec(StateRemoving, held), HolderHere, false, ApplyStep{Move: ApplyRefuse, Refusal: &Refusal{Code: CodeInProgress,
			Path: "/r/.worktrees/" + id, Retry: "custody resume",
			Message: "x-1a2b3c's removal is in progress (pid 42, command custody apply p.json, since 2026-01-02T03:04:05Z): another custody is carrying it out; once it is done, nothing is left to resume"}}},
		{"a holder elsewhere, no time left: take it over once it is gone", rec(StateRemoving, held), HolderElsewhere, false, ApplyStep{Move: ApplyRefuse, Refusal: &Refusal{Code: CodeInProgress,
			Path: "/r/.worktrees/" + id, Retry: "custody resume",
			Message: "x-1a2b3c has a removal intent held by live process 42 on h; once that process is surely gone: custody resume --take-over x-1a2b3c"}}},
		{"a dead holder", rec(StateRemoving, held), HolderGone, true, ApplyStep{Move: ApplyResume}},
		{"a dead holder, no time left either", rec(StateRemoving, held), HolderGone, false, ApplyStep{Move: ApplyResume}},
		{"removed before", rec(StateTombstoned, tombstoned(OutcomeRemoved)), HolderGone, true, ApplyStep{Move: ApplyAlreadyDone}},
		{"settled before", rec(StateTombstoned, tombstoned(OutcomeSettled)), HolderGone, true, ApplyStep{Move: ApplyAlreadyDone}},
		{"tombstoned without removal", rec(StateTombstoned, tombstoned(OutcomeAbandoned)), HolderGone, true, ApplyStep{Move: ApplyRefuse, Refusal: &Refusal{
			Code: CodeWrongState, Path: "/r/.worktrees/" + id, Retry: show, Message: "x-1a2b3c was tombstoned without removal (abandoned)"}}},
		{"finished", rec(StateFinished, nil), HolderGone, true, ApplyStep{Move: ApplyObserve}},
		{"active (a lease may have expired)", rec(StateActive, nil), HolderGone, true, ApplyStep{Move: ApplyObserve}},
		{"provisioning", rec(StateProvisioning, nil), HolderGone, true, ApplyStep{Move: ApplyRefuse, Recheck: true, Refusal: &Refusal{
			Code: CodeWrongState, Path: "/r/.worktrees/" + id, Retry: show, Message: "x-1a2b3c is provisioning, not finished"}}},
		{"relocating without an intent", rec(StateRelocating, nil), HolderGone, true, ApplyStep{Move: ApplyRefuse, Recheck: true, Refusal: &Refusal{
			Code: CodeWrongState, Path: "/r/.worktrees/" + id, Retry: show, Message: "x-1a2b3c is relocating, not finished"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := DecideApplyRecord(it, tc.rec, tc.live, tc.mayWait)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("DecideApplyRecord (-want +got):\n%s", d)
			}
		})
	}
}

func TestApplyExpires(t *testing.T) {
	present := WorktreeObservation{PathState: PathPresent, Registered: true, AdminPresent: true}
	gone := WorktreeObservation{PathState: PathAbsent}
	for _, tc := range []struct {
		name  string
		state State
		obs   WorktreeObservation
		want  bool
	}{
		{"active and present", StateActive, present, true},
		{"active and vanished: settled as it is", StateActive, gone, false},
		{"active, gone from disk but still registered", StateActive, WorktreeObservation{PathState: PathAbsent, Registered: true}, true},
		{"finished", StateFinished, present, false},
	} {
		if got := ApplyExpires(Record{State: tc.state}, tc.obs); got != tc.want {
			t.Errorf("%s: ApplyExpires = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestDecideApplyVerdict(t *testing.T) {
	const id = "x-1a2b3c"
	path := "/r/.worktrees/" + id
	rec := Record{ID: id, Path: path, State: StateFinished}
	head := "1111111111111111111111111111111111111111"
	moved := "2222222222222222222222222222222222222222"
	obs := WorktreeObservation{Path: path, PathState: PathPresent, Registered: true, AdminPresent: true, Head: head}
	fp := Fingerprint(obs)
	remove := PlanItem{ID: id, Action: ActionRemove, Head: head, Fingerprint: fp}
	removable := Verdict{Action: ActionRemove, Proof: &Proof{Kind: ProofAncestry}}
	kept := Verdict{Action: ActionKeep, Refusals: []Refusal{{Code: CodeUntrackedFiles, Path: path, Message: "untracked files", Retry: "git status"}}}
	settlement := Settlement{LastKnown: head, Head: head, Proven: true, Branch: SettleBranchDelete, Summary: "proven"}
	settleItem := func(s Settlement) PlanItem {
		return PlanItem{ID: id, Action: ActionSettle, Head: head, Fingerprint: fp, Settlement: &s}
	}
	settleVerdict := func(s Settlement) Verdict { return Verdict{Action: ActionSettle, Settlement: &s} }
	timedOut := obs
	timedOut.TimedOut = []TimedOut{{Command: "git status", Dir: path}}
	timedOutVerdict := Verdict{Action: ActionKeep, Refusals: []Refusal{{Code: CodeObservationTimedOut, Path: path, Message: "git status ran out of time"}}}
	headMoved := obs
	headMoved.Head = moved
	external := &Refusal{Code: CodeExternalTree, Path: path, Message: "outside the root"}
	otherSummary := settlement
	otherSummary.Summary = "said another way"
	unproven := settlement
	unproven.Proven, unproven.Branch = false, SettleBranchKeep
	refuse := func(r Refusal) ApplyStep { return ApplyStep{Move: ApplyRefuse, Refusal: &r, Recheck: true} }
	for _, tc := range []struct {
		name     string
		it       PlanItem
		obs      WorktreeObservation
		v        Verdict
		external *Refusal
		want     ApplyStep
	}{
		{"still removable", remove, obs, removable, nil, ApplyStep{Move: ApplyRemove}},
		{"still removable, but an adopted tree outside the root", remove, obs, removable, external, refuse(*external)},
		{"timed out: the timeout is the reason, not a change", PlanItem{ID: id, Action: ActionRemove, Fingerprint: "other"}, timedOut, timedOutVerdict, nil,
			refuse(timedOutVerdict.Refusals[0])},
		{"HEAD moved since plan", remove, headMoved, removable, nil, refuse(Refusal{Code: CodeStale, Path: path, Retry: "custody plan",
			Message: "x-1a2b3c changed since plan: HEAD moved from 111111111111 to 222222222222"})},
		{"kept now", remove, obs, kept, nil, refuse(kept.Refusals[0])},
		{"settled now, removal planned", remove, obs, settleVerdict(settlement), nil, refuse(Refusal{Code: CodeStale, Path: path, Retry: "custody plan",
			Message: "x-1a2b3c changed since plan: plan said remove, now it is settle"})},
		{"settlement as planned", settleItem(settlement), obs, settleVerdict(settlement), nil, ApplyStep{Move: ApplySettle}},
		{"settlement as planned, said another way", settleItem(settlement), obs, settleVerdict(otherSummary), nil, ApplyStep{Move: ApplySettle}},
		{"settlement as planned: external does not apply", settleItem(settlement), obs, settleVerdict(settlement), external, ApplyStep{Move: ApplySettle}},
		{"settlement changed", settleItem(settlement), obs, settleVerdict(unproven), nil, refuse(Refusal{Code: CodeStale, Path: path, Retry: "custody plan",
			Message: "x-1a2b3c changed since plan: its settlement was on 111111111111 (proven true, branch delete) and is now on 111111111111 (proven false, branch keep)"})},
		{"removable now, settlement planned", settleItem(settlement), obs, removable, nil, refuse(Refusal{Code: CodeStale, Path: path, Retry: "custody plan",
			Message: "x-1a2b3c changed since plan: plan said settle, now it is remove"})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := DecideApplyVerdict(tc.it, rec, tc.obs, tc.v, tc.external)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("DecideApplyVerdict (-want +got):\n%s", d)
			}
		})
	}
}

func TestStaleRefusalSaysWhatChanged(t *testing.T) {
	head := "1111111111111111111111111111111111111111"
	rec := Record{ID: "x", Path: "/r/x"}
	base := WorktreeObservation{PathState: PathPresent, Head: head}
	for _, tc := range []struct {
		name string
		f    func(*WorktreeObservation)
		want string
	}{
		{"moved by git", func(o *WorktreeObservation) { o.PathState, o.MovedTo = PathAbsent, "/elsewhere" }, "git moved it to /elsewhere"},
		{"gone", func(o *WorktreeObservation) { o.PathState = PathAbsent }, "/r/x is absent now, HEAD was 111111111111"},
		{"HEAD unreadable", func(o *WorktreeObservation) { o.Head = "" }, "HEAD was 111111111111 and can no longer be read"},
		{"locked", func(o *WorktreeObservation) { o.Locked = true }, "it was locked"},
		{"content", func(o *WorktreeObservation) {
			o.Content = []Unaccounted{{Path: "a"}, {Path: "b"}}
		}, "files on disk are not HEAD's: a and 1 more"},
		{"nothing named", func(*WorktreeObservation) {}, "its status, registration or identity changed"},
	} {
		o := base
		tc.f(&o)
		got := StaleRefusal(rec, o, head)
		if want := "x changed since plan: " + tc.want; got.Message != want || got.Code != CodeStale || got.Retry != "custody plan" {
			t.Errorf("%s: %+v, want message %q", tc.name, got, want)
		}
	}
}
