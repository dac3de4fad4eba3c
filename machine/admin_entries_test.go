package machine_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/machine"
)

const (
	testCommon = "/repo/.git"
	strayDir   = "/repo/.git/worktrees/stray"
	strayDir2  = "/repo/.git/worktrees/other two"
)

// stray is an other admin entry naming the fixture's path with a detached
// HEAD at otherHead.
func stray() machine.AdminEntry {
	return machine.AdminEntry{Key: "stray", Dir: strayDir, CommonDir: testCommon, Names: testPath + "/.git", Head: otherHead}
}

// TestOtherEntriesRefusal: the refusal names each other entry and what it
// holds, and its retry keeps a detached HEAD under refs/custody/stray/
// before it moves exactly that entry out of the registry; an entry whose
// HEAD or gitdir cannot be read, or that is another record's, is never
// moved by the retry.
func TestOtherEntriesRefusal(t *testing.T) {
	t.Parallel()
	onBranch := stray()
	onBranch.Head, onBranch.Branch = "", "topic"
	locked := stray()
	locked.Locked, locked.LockReason, locked.Prunable = true, "on a usb disk", true
	second := stray()
	second.Key, second.Dir, second.Head = "other two", strayDir2, baseCommit
	noHead := stray()
	noHead.Head = ""
	unreadable := machine.AdminEntry{Key: "odd", Dir: "/repo/.git/worktrees/odd", CommonDir: testCommon, Unreadable: "permission denied"}
	keepHead := "git --git-dir=/repo/.git update-ref refs/custody/stray/" + otherHead + " " + otherHead
	aside := " && mkdir -p -- /repo/.git/custody/stray-entries && mv -- "
	marked := stray()
	marked.Marker = "other-123456"
	ownCopy := stray()
	ownCopy.Marker = testID
	tests := []struct {
		name   string
		others []machine.AdminEntry
		then   string
		retry  string
		says   []string
	}{
		{"detached", []machine.AdminEntry{stray()}, "custody plan",
			keepHead + aside + strayDir + " /repo/.git/custody/stray-entries/stray && custody plan",
			[]string{strayDir, "detached HEAD " + otherHead, testPath}},
		{"resume", []machine.AdminEntry{stray()}, "custody resume",
			keepHead + aside + strayDir + " /repo/.git/custody/stray-entries/stray && custody resume", []string{strayDir}},
		{"branch-keeps-its-commit", []machine.AdminEntry{onBranch}, "custody plan",
			"mkdir -p -- /repo/.git/custody/stray-entries && mv -- " + strayDir + " /repo/.git/custody/stray-entries/stray && custody plan", []string{"HEAD on branch topic"}},
		{"locked-and-prunable", []machine.AdminEntry{locked}, "custody plan",
			keepHead + aside + strayDir + " /repo/.git/custody/stray-entries/stray && custody plan", []string{"locked: on a usb disk", "prunable"}},
		{"two", []machine.AdminEntry{stray(), second}, "custody plan",
			keepHead + aside + strayDir + " /repo/.git/custody/stray-entries/stray && git --git-dir=/repo/.git update-ref refs/custody/stray/" + baseCommit + " " + baseCommit +
				aside + "'" + strayDir2 + "' '/repo/.git/custody/stray-entries/other two' && custody plan", []string{"and 1 more"}},
		{"another-records-entry", []machine.AdminEntry{marked}, "custody plan", "custody show other-123456", []string{"custody's entry of record other-123456", "moves no record's entry"}},
		{"a-copy-of-its-own-entry", []machine.AdminEntry{ownCopy}, "custody plan",
			keepHead + aside + strayDir + " /repo/.git/custody/stray-entries/stray && custody plan", []string{strayDir}},
		{"head-unreadable", []machine.AdminEntry{noHead}, "custody plan", "git worktree list --porcelain", []string{"HEAD unreadable", "gives no command that moves"}},
		{"gitdir-unreadable", []machine.AdminEntry{unreadable}, "custody plan", "git worktree list --porcelain", []string{"permission denied"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := machine.OtherEntriesRefusal(removableRecord(), tt.others, tt.then)
			if r.Code != machine.CodeDuplicateAdminEntry || r.Path != testPath {
				t.Errorf("refusal %s at %s, want %s at %s", r.Code, r.Path, machine.CodeDuplicateAdminEntry, testPath)
			}
			if diff := cmp.Diff(tt.retry, r.Retry); diff != "" {
				t.Errorf("retry (-want +got):\n%s", diff)
			}
			for _, s := range tt.says {
				if !strings.Contains(r.Message, s) {
					t.Errorf("message %q does not say %q", r.Message, s)
				}
			}
		})
	}
}

// TestAssessOtherEntries: another entry naming the path keeps a removable
// tree, present or already gone, and is named before the advice to prune a
// gone tree's registration (which would drop the other entry's HEAD).
func TestAssessOtherEntries(t *testing.T) {
	t.Parallel()
	withStray := func(o machine.WorktreeObservation) machine.WorktreeObservation {
		o.OtherEntries = []machine.AdminEntry{stray()}
		return o
	}
	gone := absentObs()
	gone.Registered, gone.Prunable = true, true
	proven := absentObs()
	proven.Proof = removableProof()
	proven.Proof.Head = removableRecord().EffectiveHead()
	tests := []struct {
		name string
		obs  machine.WorktreeObservation
		want []refusalKey
	}{
		{"present", withStray(removableObs()), []refusalKey{key(machine.CodeDuplicateAdminEntry,
			"git --git-dir=/repo/.git update-ref refs/custody/stray/"+otherHead+" "+otherHead+" && mkdir -p -- /repo/.git/custody/stray-entries && mv -- "+strayDir+" /repo/.git/custody/stray-entries/stray && custody plan")}},
		{"gone-registered-by-it", withStray(gone), []refusalKey{key(machine.CodeDuplicateAdminEntry,
			"git --git-dir=/repo/.git update-ref refs/custody/stray/"+otherHead+" "+otherHead+" && mkdir -p -- /repo/.git/custody/stray-entries && mv -- "+strayDir+" /repo/.git/custody/stray-entries/stray && custody plan")}},
		{"gone-and-proven", withStray(proven), []refusalKey{key(machine.CodeDuplicateAdminEntry,
			"git --git-dir=/repo/.git update-ref refs/custody/stray/"+otherHead+" "+otherHead+" && mkdir -p -- /repo/.git/custody/stray-entries && mv -- "+strayDir+" /repo/.git/custody/stray-entries/stray && custody plan")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v := machine.Assess(removableRecord(), tt.obs, machine.DefaultPolicy(), testNow)
			if v.Action != machine.ActionKeep {
				t.Fatalf("Assess = %s, want keep", v.Action)
			}
			if diff := cmp.Diff(tt.want, keysOf(v.Refusals)); diff != "" {
				t.Errorf("refusals (-want +got):\n%s", diff)
			}
		})
	}
	// Without the other entry the same observations settle (the proven
	// one) or advise pruning (the registered one): the entry is what keeps.
	if v := machine.Assess(removableRecord(), proven, machine.DefaultPolicy(), testNow); v.Action != machine.ActionSettle {
		t.Errorf("the gone, proven tree without another entry: %s %+v, want settle", v.Action, v.Refusals)
	}
	if v := machine.Assess(removableRecord(), gone, machine.DefaultPolicy(), testNow); v.Primary().Code != machine.CodeWorktreeMissing {
		t.Errorf("the gone, registered tree without another entry: %+v, want %s", v.Primary(), machine.CodeWorktreeMissing)
	}
}

// TestDecideResumeOtherEntries: an interrupted removal whose path is gone
// but which another key's entry still registers resolves to one refusal
// naming that entry, whose retry ends in custody resume; it is never the
// drop-admin-entry rule again (which cannot drop another key's entry).
func TestDecideResumeOtherEntries(t *testing.T) {
	t.Parallel()
	obs := absentObs()
	obs.Registered, obs.Prunable = true, true
	obs.OtherEntries = []machine.AdminEntry{stray()}
	for _, own := range []bool{false, true} {
		o := obs
		o.AdminPresent = own
		got, ref := machine.DecideResume(removingRecord(), o, nil)
		if got != "" || ref == nil || ref.Code != machine.CodeDuplicateAdminEntry {
			t.Fatalf("own entry present %v: DecideResume = %q, %+v; want %s", own, got, ref, machine.CodeDuplicateAdminEntry)
		}
		want := "git --git-dir=/repo/.git update-ref refs/custody/stray/" + otherHead + " " + otherHead + " && mkdir -p -- /repo/.git/custody/stray-entries && mv -- " + strayDir + " /repo/.git/custody/stray-entries/stray && custody resume"
		if ref.Retry != want {
			t.Errorf("retry %q, want %q", ref.Retry, want)
		}
	}
	// Once the entry is gone, the removal completes.
	if got, ref := machine.DecideResume(removingRecord(), absentObs(), nil); got != machine.ResumeCompleteRemoval || ref != nil {
		t.Errorf("after the retry: %q, %+v; want %s", got, ref, machine.ResumeCompleteRemoval)
	}
}
