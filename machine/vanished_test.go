package machine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/custody-sh/custody/machine"
)

// vanishedObs observes the fixture's tree deleted and pruned outside
// custody: nothing at its path, nothing registered, its branch at tip (""
// for none), proven (proof non-nil) or not, against one answering remote.
func vanishedObs(tip string, holds bool, proofOf string) machine.WorktreeObservation {
	o := machine.WorktreeObservation{Path: testPath, PathState: machine.PathAbsent, BranchTip: tip, BranchHoldsLastKnown: holds,
		Remote: machine.RemoteEvidence{Remotes: []string{"origin"}}}
	if proofOf != "" {
		o.Proof = removableProof()
		o.Proof.Head = proofOf
	}
	return o
}

// settleFiring settles the fixture rec over obs with the intent apply
// would commit: Assess's settlement on its head.
func settleFiring(rec machine.Record, obs machine.WorktreeObservation) machine.Firing {
	v := machine.Assess(rec, obs, machine.DefaultPolicy(), testNow)
	in := &machine.Intent{Kind: machine.IntentRemoval, Path: testPath, Branch: rec.Branch, Proof: v.Proof, Settlement: v.Settlement,
		Fingerprint: machine.Fingerprint(obs), PlanID: testPlanID, Holder: machine.Holder{PID: 100, Host: "host"}, At: testNow}
	if v.Settlement != nil {
		in.Commit = v.Settlement.Head
	}
	return machine.Firing{Record: rec, Obs: obs, Now: testNow, Policy: machine.DefaultPolicy(), Intent: in, Fingerprint: in.Fingerprint}
}

// settlingRecord is the fixture's finished record carrying the intent that
// settles it (its tree vanished, its final HEAD proven on its branch).
func settlingRecord() machine.Record {
	f := settleFiring(removableRecord(), vanishedObs(headCommit, true, headCommit))
	r := f.Record
	r.State, r.Rev, r.Intent = machine.StateRemoving, 4, f.Intent
	return r
}

func settledFiring() machine.Firing {
	return machine.Firing{Record: settlingRecord(), Obs: absentObs(), Now: testNow,
		Evidence: machine.Evidence{BranchOutcome: machine.BranchDeleted}}
}

// TestAssessVanishedTree: a tree gone for good (machine.Vanished) is
// settled whatever its record's state, unless a live lease holds it or
// whether its head is published is unknown; its branch goes only when
// custody made it and its tip is proven, and the settlement never claims
// more than was proven. A head neither proven nor held by the branch keeps
// the record (worktree-missing), as does a tree git still knows.
func TestAssessVanishedTree(t *testing.T) {
	t.Parallel()
	finished, active := removableRecord(), activeRecord() // last known: final HEAD b…, base commit a…
	adopted := removableRecord()
	adopted.Origin = machine.OriginAdopted
	type want struct {
		action     string // action, or "keep <code> <retry>"
		head       string
		proven     bool
		workProven bool
		branch     string
		words      []string // in the summary or the refusal's message
	}
	tests := []struct {
		name string
		rec  machine.Record
		obs  machine.WorktreeObservation
		want want
	}{
		{"finished/branch-at-final-head-proven", finished, vanishedObs(headCommit, true, headCommit),
			want{"settle", headCommit, true, true, machine.SettleBranchDelete, []string{"finish recorded its HEAD bbbbbbbbbbbb", "its work, up to bbbbbbbbbbbb, is proven published (ancestry on origin refs/heads/main)"}}},
		{"finished/no-branch-proven", finished, vanishedObs("", false, headCommit),
			want{"settle", headCommit, true, true, machine.SettleBranchAbsent, []string{"its work, up to bbbbbbbbbbbb, is proven"}}},
		{"finished/branch-unpushed", finished, vanishedObs(headCommit, true, ""),
			want{"settle", headCommit, false, false, machine.SettleBranchKeep, []string{"nothing proves bbbbbbbbbbbb, the tip of branch " + testBranch}}},
		{"finished/branch-ahead-unpushed", finished, vanishedObs(otherHead, true, headCommit),
			want{"settle", otherHead, false, false, machine.SettleBranchKeep, []string{"nothing proves dddddddddddd"}}},
		{"finished/branch-ahead-proven", finished, vanishedObs(otherHead, true, otherHead),
			want{"settle", otherHead, true, true, machine.SettleBranchDelete, []string{"carries its work on to dddddddddddd, which is proven published"}}},
		{"finished/branch-elsewhere-final-proven", finished, vanishedObs(otherHead, false, headCommit),
			want{"settle", headCommit, true, true, machine.SettleBranchKeep, []string{"its work, up to bbbbbbbbbbbb, is proven"}}},
		{"finished/branch-elsewhere-unproven", finished, vanishedObs(otherHead, false, ""),
			want{action: "keep worktree-missing custody abandon --acknowledge-unrecoverable " + headCommit + " " + testID,
				words: []string{"nothing proves its last known commit bbbbbbbbbbbb published and no branch of the tree holds it"}}},
		{"finished/no-branch-unproven", finished, vanishedObs("", false, ""),
			want{action: "keep worktree-missing git branch " + testBranch + " " + headCommit, words: []string{"git still has it: put the tree's branch " + testBranch + " back on it"}}},
		{"finished/proof-of-another-commit", finished, vanishedObs("", false, otherHead),
			want{action: "keep worktree-missing git branch " + testBranch + " " + headCommit}},
		{"finished/no-branch-commit-gone", finished, with2(vanishedObs("", false, ""), func(o *machine.WorktreeObservation) {
			o.LastKnownMissing, o.ProofErr = true, "merge-base: Not a valid commit name"
		}), want{action: "keep worktree-missing custody abandon --acknowledge-unrecoverable " + headCommit + " " + testID, words: []string{"git no longer has its last known commit bbbbbbbbbbbb, and no remote gave it"}}},
		{"finished/commit-gone-remote-unavailable", finished, with2(vanishedObs("", false, ""), func(o *machine.WorktreeObservation) {
			o.LastKnownMissing, o.ProofErr = true, "merge-base: Not a valid commit name"
			o.Remote.Unavailable = []machine.RemoteFailure{{Remote: "origin", Error: "timeout"}}
		}), want{action: "keep proof-failed custody plan"}},
		{"finished/adopted-branch-proven", adopted, vanishedObs(headCommit, true, headCommit),
			want{"settle", headCommit, true, true, machine.SettleBranchKeep, []string{"its work, up to bbbbbbbbbbbb"}}},
		{"active/branch-holds-base-proven", active, vanishedObs(tipCommit, true, tipCommit),
			want{"settle", tipCommit, true, true, machine.SettleBranchDelete, []string{"custody never saw its final HEAD", "carries its work on to cccccccccccc"}}},
		{"active/branch-holds-base-unpushed", active, vanishedObs(tipCommit, true, ""),
			want{"settle", tipCommit, false, false, machine.SettleBranchKeep, []string{"only its base commit aaaaaaaaaaaa", "nothing proves cccccccccccc"}}},
		{"active/branch-at-base-proven", active, vanishedObs(baseCommit, true, baseCommit),
			want{"settle", baseCommit, true, true, machine.SettleBranchDelete, nil}},
		{"active/no-branch-base-proven", active, vanishedObs("", false, baseCommit),
			want{"settle", baseCommit, true, false, machine.SettleBranchAbsent, []string{"only that base commit is proven published", "not the tree's own work"}}},
		{"active/branch-elsewhere-base-proven", active, vanishedObs(otherHead, false, baseCommit),
			want{"settle", baseCommit, true, false, machine.SettleBranchKeep, []string{"only that base commit is proven"}}},
		{"active/expired-lease", active, with2(vanishedObs(tipCommit, true, tipCommit), func(o *machine.WorktreeObservation) { o.Lease = lease(testNow.Add(-time.Minute)) }),
			want{"settle", tipCommit, true, true, machine.SettleBranchDelete, nil}},
		{"active/live-lease", active, with2(vanishedObs(tipCommit, true, tipCommit), func(o *machine.WorktreeObservation) { o.Lease = lease(testNow.Add(time.Minute)) }),
			want{action: "keep lease-live custody plan", words: []string{"agent-7"}}},
		{"finished/live-lease", finished, with2(vanishedObs(headCommit, true, headCommit), func(o *machine.WorktreeObservation) { o.Lease = lease(testNow.Add(time.Minute)) }),
			want{action: "keep lease-live custody plan"}},
		{"remote-unavailable", active, with2(vanishedObs(tipCommit, true, ""), func(o *machine.WorktreeObservation) {
			o.Remote.Unavailable = []machine.RemoteFailure{{Remote: "origin", Error: "timeout"}}
		}), want{action: "keep remote-unavailable git ls-remote --refs origin", words: []string{"cccccccccccc"}}},
		{"proof-failed", finished, with2(vanishedObs(headCommit, true, ""), func(o *machine.WorktreeObservation) { o.ProofErr = "rev-list died" }),
			want{action: "keep proof-failed custody plan", words: []string{"rev-list died"}}},
		{"still-registered", active, with2(vanishedObs(tipCommit, true, tipCommit), func(o *machine.WorktreeObservation) { o.Registered = true }),
			want{action: "keep worktree-missing " + machine.Command("git", "worktree", "remove", testPath)}},
		{"locked-unmounted", active, with2(vanishedObs(tipCommit, true, tipCommit), func(o *machine.WorktreeObservation) {
			o.Registered, o.AdminPresent, o.Locked = true, true, true
		}), want{action: "keep not-finished custody finish " + testID}},
		{"finished/still-registered", finished, with2(vanishedObs(headCommit, true, headCommit), func(o *machine.WorktreeObservation) { o.Registered = true }),
			want{action: "keep worktree-missing " + machine.Command("git", "worktree", "remove", testPath)}},
		{"finished/admin-entry-left", finished, with2(vanishedObs(headCommit, true, headCommit), func(o *machine.WorktreeObservation) { o.AdminPresent = true }),
			want{action: "keep worktree-missing " + machine.Command("git", "worktree", "remove", testPath)}},
		{"active/admin-entry-left", active, with2(vanishedObs(tipCommit, true, tipCommit), func(o *machine.WorktreeObservation) { o.AdminPresent = true }),
			want{action: "keep worktree-missing " + machine.Command("git", "worktree", "remove", testPath)}},
		{"active/path-present", active, with2(vanishedObs(tipCommit, true, tipCommit), func(o *machine.WorktreeObservation) { o.PathState = machine.PathPresent }),
			want{action: "keep not-finished custody finish " + testID}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v := machine.Assess(tt.rec, tt.obs, machine.DefaultPolicy(), testNow)
			text := ""
			got := string(v.Action)
			if r := v.Primary(); r != nil {
				got += " " + string(r.Code) + " " + r.Retry
				text = r.Message
			}
			if got != tt.want.action {
				t.Fatalf("Assess = %s, want %s (refusals %+v)", got, tt.want.action, v.Refusals)
			}
			if v.Action != machine.ActionSettle {
				if v.Settlement != nil {
					t.Errorf("a %s verdict carries a settlement: %+v", v.Action, v.Settlement)
				}
			} else {
				s := v.Settlement
				if s == nil {
					t.Fatal("settle without a settlement")
				}
				text = s.Summary
				if s.Head != tt.want.head || s.Proven != tt.want.proven || s.WorkProven != tt.want.workProven || s.Branch != tt.want.branch {
					t.Errorf("settlement head %s proven %v work %v branch %s, want %s %v %v %s",
						s.Head[:6], s.Proven, s.WorkProven, s.Branch, tt.want.head[:6], tt.want.proven, tt.want.workProven, tt.want.branch)
				}
				if (v.Proof != nil) != s.Proven || (s.Proven && !v.Proof.Covers(s.Head)) {
					t.Errorf("verdict proof %+v does not match proven %v of %s", v.Proof, s.Proven, s.Head)
				}
				if (s.Branch == machine.SettleBranchKeep) != (s.BranchReason != "") {
					t.Errorf("branch %s with reason %q", s.Branch, s.BranchReason)
				}
				if !s.WorkProven && strings.Contains(s.Summary, "work, up to") {
					t.Errorf("a settlement whose work is not proven says so: %s", s.Summary)
				}
				if want := tt.rec.EffectiveHead(); s.LastKnown != want {
					t.Errorf("last known %s, want %s", s.LastKnown, want)
				}
			}
			for _, w := range tt.want.words {
				if !strings.Contains(text, w) {
					t.Errorf("%q does not say %q", text, w)
				}
			}
		})
	}
}

func with2(o machine.WorktreeObservation, f func(*machine.WorktreeObservation)) machine.WorktreeObservation {
	f(&o)
	return o
}

// TestVanished: only nothing at the path and nothing git knows of the tree
// is vanished.
func TestVanished(t *testing.T) {
	t.Parallel()
	for name, o := range map[string]machine.WorktreeObservation{
		"present":       removableObs(),
		"unknown":       {PathState: machine.PathUnknown},
		"registered":    {PathState: machine.PathAbsent, Registered: true},
		"admin-entry":   {PathState: machine.PathAbsent, AdminPresent: true},
		"moved":         {PathState: machine.PathAbsent, MovedTo: destPath},
		"other-entries": {PathState: machine.PathAbsent, OtherEntries: []machine.AdminEntry{{Key: "stray"}}},
		"not-observed":  {},
	} {
		if machine.Vanished(o) {
			t.Errorf("%s: Vanished = true", name)
		}
	}
	if !machine.Vanished(absentObs()) {
		t.Error("nothing at the path, nothing registered: Vanished = false")
	}
}
