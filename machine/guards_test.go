package machine_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/machine"
)

// committed is one call of the Commit callback.
type committed struct {
	From, To machine.State
	Trigger  machine.Trigger
	Firing   machine.Firing
}

// recorder returns a Commit that records its calls and returns err.
func recorder(err error) (machine.Commit, *[]committed) {
	var calls []committed
	return func(_ context.Context, from, to machine.State, t machine.Trigger, f machine.Firing) error {
		calls = append(calls, committed{from, to, t, f})
		return err
	}, &calls
}

// Firing builders: each returns a firing over which its trigger's guard
// holds for the fixture record of the matching state.

func createFiring() machine.Firing {
	return machine.Firing{
		Record: machine.Record{ID: testID, Path: testPath, Branch: testBranch, BaseCommit: baseCommit},
		Obs:    absentObs(),
		Now:    testNow,
		Policy: machine.DefaultPolicy(),
		Intent: createIntent(),
	}
}

func createdFiring() machine.Firing {
	return machine.Firing{Record: provisioningRecord(), Obs: madeObs(), Now: testNow}
}

func adoptFiring() machine.Firing {
	rec := machine.Record{ID: testID, Kind: machine.KindWorktree, Origin: machine.OriginAdopted, Path: removableObs().Path,
		Branch: "feature", BaseCommit: headCommit, AdminKey: testID}
	obs := removableObs()
	obs.Branch = "feature"
	return machine.Firing{Record: rec, Obs: obs, Now: testNow}
}

func discardFiring() machine.Firing {
	return machine.Firing{Record: provisioningRecord(), Obs: absentObs(), Now: testNow}
}

func finishFiring() machine.Firing {
	return machine.Firing{Record: activeRecord(), Obs: removableObs(), Now: testNow}
}

func expireFiring() machine.Firing {
	f := finishFiring()
	f.Obs.Lease = lease(testNow.Add(-time.Minute))
	return f
}

func reopenFiring() machine.Firing {
	return machine.Firing{Record: removableRecord(), Obs: removableObs(), Now: testNow}
}

func relocateFiring() machine.Firing {
	dest := machine.WorktreeObservation{Path: destPath, PathState: machine.PathAbsent}
	return machine.Firing{Record: activeRecord(), Obs: removableObs(), Now: testNow, Intent: relocationIntent(), Dest: &dest}
}

func relocatedFiring() machine.Firing {
	dest := removableObs()
	dest.Path, dest.Dev, dest.Ino = destPath, testDev, 9999
	return machine.Firing{
		Record: relocatingRecord(),
		Obs:    machine.WorktreeObservation{Path: testPath, PathState: machine.PathAbsent},
		Now:    testNow,
		Dest:   &dest,
	}
}

func removeFiring() machine.Firing {
	obs := removableObs()
	return machine.Firing{
		Record:      removableRecord(),
		Obs:         obs,
		Now:         testNow,
		Policy:      machine.DefaultPolicy(),
		Intent:      removalIntent(obs),
		Fingerprint: machine.Fingerprint(obs),
	}
}

func removedFiring() machine.Firing {
	return machine.Firing{
		Record:   removingRecord(),
		Obs:      absentObs(),
		Now:      testNow,
		Evidence: machine.Evidence{BranchOutcome: machine.BranchDeleted},
	}
}

func retreatFiring() machine.Firing {
	return machine.Firing{Record: removingRecord(), Obs: removableObs(), Now: testNow}
}

// takeOverFiring hands a removing record's intent to a new holder.
func takeOverFiring() machine.Firing {
	f := retreatFiring()
	in := *f.Record.Intent
	in.Holder = machine.Holder{PID: 7, Host: "other"}
	f.Intent = &in
	return f
}

// abandonFiring acknowledges rec's effective HEAD, which the observation
// also shows.
func abandonFiring(rec machine.Record) machine.Firing {
	obs := removableObs()
	obs.Head = rec.EffectiveHead()
	return machine.Firing{Record: rec, Obs: obs, Now: testNow, Acknowledged: rec.EffectiveHead(), AckConfirmed: true}
}

type fireCase struct {
	name    string
	trigger machine.Trigger
	firing  machine.Firing
	// to is the state reached; "" when the trigger is refused.
	to machine.State
	// code is the refusal; guard names the guard when code is guard-failed.
	code  machine.Code
	guard string
}

func with(f machine.Firing, mutate func(*machine.Firing)) machine.Firing {
	mutate(&f)
	return f
}

func fireCases() []fireCase {
	const (
		gCreate    = "createTargetsFree"
		gCreated   = "treeMadeExactly"
		gDiscard   = "nothingMade"
		gFinish    = "noLiveLease"
		gExpire    = "leaseExpired"
		gRelocate  = "relocationSafe"
		gRelocated = "onlyDestinationRegistered"
		gRemove    = "removalProven"
		gRemoved   = "absenceVerified"
		gRetreat   = "treeIntact"
		gAbandon   = "unrecoverableAcknowledged"
		gSettle    = "vanishedSettlement"
		gSettled   = "settlementVerified"
	)
	S := machine.StateNone
	P, A, F := machine.StateProvisioning, machine.StateActive, machine.StateFinished
	L, R, T := machine.StateRelocating, machine.StateRemoving, machine.StateTombstoned
	_ = S
	guardFailed := func(name string, t machine.Trigger, f machine.Firing, guard string) fireCase {
		return fireCase{name: name, trigger: t, firing: f, code: machine.CodeGuardFailed, guard: guard}
	}
	wrongState := func(name string, t machine.Trigger, f machine.Firing) fireCase {
		return fireCase{name: name, trigger: t, firing: f, code: machine.CodeWrongState}
	}
	cr, cd, di := machine.TriggerCreate, machine.TriggerCreated, machine.TriggerDiscard
	fi, ex, re := machine.TriggerFinish, machine.TriggerExpire, machine.TriggerReopen
	rl, rd := machine.TriggerRelocate, machine.TriggerRelocated
	rm, rv, rt, ab := machine.TriggerRemove, machine.TriggerRemoved, machine.TriggerRetreat, machine.TriggerAbandon

	return []fireCase{
		// create: none → provisioning, createTargetsFree.
		{name: "create", trigger: cr, firing: createFiring(), to: P},
		guardFailed("create/path-present", cr, with(createFiring(), func(f *machine.Firing) { f.Obs.PathState = machine.PathPresent }), gCreate),
		guardFailed("create/path-unknown", cr, with(createFiring(), func(f *machine.Firing) { f.Obs.PathState = machine.PathUnknown }), gCreate),
		guardFailed("create/registered", cr, with(createFiring(), func(f *machine.Firing) { f.Obs.Registered = true }), gCreate),
		guardFailed("create/admin-entry", cr, with(createFiring(), func(f *machine.Firing) { f.Obs.AdminPresent = true }), gCreate),
		guardFailed("create/branch-exists", cr, with(createFiring(), func(f *machine.Firing) { f.Obs.BranchTip = baseCommit }), gCreate),
		guardFailed("create/short-commit", cr, with(createFiring(), func(f *machine.Firing) { f.Intent.Commit = baseCommit[:12] }), gCreate),
		guardFailed("create/intent-elsewhere", cr, with(createFiring(), func(f *machine.Firing) { f.Intent.Path = destPath }), gCreate),
		guardFailed("create/no-intent", cr, with(createFiring(), func(f *machine.Firing) { f.Intent = nil }), gCreate),
		guardFailed("create/removal-intent", cr, with(createFiring(), func(f *machine.Firing) { f.Intent.Kind = machine.IntentRemoval }), gCreate),
		wrongState("create/from-active", cr, finishFiring()),
		// A branch the person names (new --branch) is created like
		// custody's own: it must not exist. An existing branch (new
		// --checkout) must exist, at the intended commit.
		{name: "create/named-branch", trigger: cr, firing: with(createFiring(), func(f *machine.Firing) {
			f.Record.Branch, f.Record.BranchOrigin = "feature/login", machine.BranchOriginCreated
		}), to: P},
		guardFailed("create/named-branch-exists", cr, with(createFiring(), func(f *machine.Firing) {
			f.Record.Branch, f.Record.BranchOrigin, f.Obs.BranchTip = "feature/login", machine.BranchOriginCreated, baseCommit
		}), gCreate),
		{name: "create/existing-branch", trigger: cr, firing: with(createFiring(), func(f *machine.Firing) {
			f.Record.Branch, f.Record.BranchOrigin, f.Obs.BranchTip = "topic", machine.BranchOriginExisting, baseCommit
		}), to: P},
		guardFailed("create/existing-branch-absent", cr, with(createFiring(), func(f *machine.Firing) {
			f.Record.Branch, f.Record.BranchOrigin = "topic", machine.BranchOriginExisting
		}), gCreate),
		guardFailed("create/existing-branch-moved", cr, with(createFiring(), func(f *machine.Firing) {
			f.Record.Branch, f.Record.BranchOrigin, f.Obs.BranchTip = "topic", machine.BranchOriginExisting, headCommit
		}), gCreate),

		// take-over: a reentry handing an intent to a new holder, intentHeld.
		{name: "take-over", trigger: machine.TriggerTakeOver, firing: takeOverFiring(), to: R},
		guardFailed("take-over/other-target", machine.TriggerTakeOver, with(takeOverFiring(), func(f *machine.Firing) { f.Intent.Path = destPath }), "intentHeld"),
		guardFailed("take-over/no-intent", machine.TriggerTakeOver, with(takeOverFiring(), func(f *machine.Firing) { f.Intent = nil }), "intentHeld"),
		wrongState("take-over/from-finished", machine.TriggerTakeOver, reopenFiring()),

		// adopt: none → active, adoptable.
		{name: "adopt", trigger: machine.TriggerAdopt, firing: adoptFiring(), to: A},
		guardFailed("adopt/created-origin", machine.TriggerAdopt, with(adoptFiring(), func(f *machine.Firing) { f.Record.Origin = machine.OriginCreated }), "adoptable"),
		guardFailed("adopt/no-marker", machine.TriggerAdopt, with(adoptFiring(), func(f *machine.Firing) { f.Obs.Marker = "" }), "adoptable"),
		guardFailed("adopt/admin-key", machine.TriggerAdopt, with(adoptFiring(), func(f *machine.Firing) { f.Obs.AdminKey = "other" }), "adoptable"),
		guardFailed("adopt/unregistered", machine.TriggerAdopt, with(adoptFiring(), func(f *machine.Firing) { f.Obs.Registered = false }), "adoptable"),
		guardFailed("adopt/absent", machine.TriggerAdopt, with(adoptFiring(), func(f *machine.Firing) { f.Obs = absentObs() }), "adoptable"),
		wrongState("adopt/from-active", machine.TriggerAdopt, finishFiring()),

		// created: provisioning → active, treeMadeExactly.
		{name: "created", trigger: cd, firing: createdFiring(), to: A},
		guardFailed("created/absent", cd, with(createdFiring(), func(f *machine.Firing) { f.Obs = absentObs() }), gCreated),
		guardFailed("created/symlink", cd, with(createdFiring(), func(f *machine.Firing) { f.Obs.IsSymlink = true }), gCreated),
		guardFailed("created/not-dir", cd, with(createdFiring(), func(f *machine.Firing) { f.Obs.IsDir = false }), gCreated),
		guardFailed("created/unregistered", cd, with(createdFiring(), func(f *machine.Firing) { f.Obs.Registered = false }), gCreated),
		guardFailed("created/admin-key", cd, with(createdFiring(), func(f *machine.Firing) { f.Obs.AdminKey = testID + "1" }), gCreated),
		guardFailed("created/head", cd, with(createdFiring(), func(f *machine.Firing) { f.Obs.Head = headCommit }), gCreated),
		guardFailed("created/branch", cd, with(createdFiring(), func(f *machine.Firing) { f.Obs.Branch = "main" }), gCreated),
		guardFailed("created/no-marker", cd, with(createdFiring(), func(f *machine.Firing) { f.Obs.Marker = "" }), gCreated),
		wrongState("created/from-finished", cd, reopenFiring()),

		// discard: provisioning → tombstoned, nothingMade.
		{name: "discard", trigger: di, firing: discardFiring(), to: T},
		{name: "discard/branch-untouched", trigger: di, firing: with(discardFiring(), func(f *machine.Firing) { f.Obs.BranchTip = baseCommit }), to: T},
		guardFailed("discard/branch-moved", di, with(discardFiring(), func(f *machine.Firing) { f.Obs.BranchTip = headCommit }), gDiscard),
		// An existing branch is not custody's to judge: wherever it is
		// now, nothing custody made is on it.
		{name: "discard/existing-branch-moved", trigger: di, firing: with(discardFiring(), func(f *machine.Firing) {
			f.Record.Branch, f.Record.BranchOrigin, f.Obs.BranchTip = "topic", machine.BranchOriginExisting, headCommit
		}), to: T},
		guardFailed("discard/named-branch-moved", di, with(discardFiring(), func(f *machine.Firing) {
			f.Record.Branch, f.Record.BranchOrigin, f.Obs.BranchTip = "feature/login", machine.BranchOriginCreated, headCommit
		}), gDiscard),
		guardFailed("discard/path-present", di, with(discardFiring(), func(f *machine.Firing) { f.Obs.PathState = machine.PathPresent }), gDiscard),
		guardFailed("discard/path-unknown", di, with(discardFiring(), func(f *machine.Firing) { f.Obs.PathState = machine.PathUnknown }), gDiscard),
		guardFailed("discard/registered", di, with(discardFiring(), func(f *machine.Firing) { f.Obs.Registered = true }), gDiscard),
		guardFailed("discard/admin-entry", di, with(discardFiring(), func(f *machine.Firing) { f.Obs.AdminPresent = true }), gDiscard),
		wrongState("discard/from-removing", di, removedFiring()),

		// finish: active → finished, noLiveLease.
		{name: "finish", trigger: fi, firing: finishFiring(), to: F},
		{name: "finish/expired-lease", trigger: fi, firing: expireFiring(), to: F},
		guardFailed("finish/live-lease", fi, with(finishFiring(), func(f *machine.Firing) { f.Obs.Lease = lease(testNow.Add(time.Nanosecond)) }), gFinish),
		wrongState("finish/from-finished", fi, reopenFiring()),

		// expire: active → finished, leaseExpired.
		{name: "expire", trigger: ex, firing: expireFiring(), to: F},
		{name: "expire/at-expiry", trigger: ex, firing: with(expireFiring(), func(f *machine.Firing) { f.Obs.Lease = lease(testNow) }), to: F},
		guardFailed("expire/no-lease", ex, finishFiring(), gExpire),
		guardFailed("expire/live-lease", ex, with(expireFiring(), func(f *machine.Firing) { f.Obs.Lease = lease(testNow.Add(time.Second)) }), gExpire),
		wrongState("expire/from-provisioning", ex, createdFiring()),

		// reopen: finished → active, no guard.
		{name: "reopen", trigger: re, firing: reopenFiring(), to: A},
		{name: "reopen/whatever-observed", trigger: re, firing: with(reopenFiring(), func(f *machine.Firing) { f.Obs = machine.WorktreeObservation{} }), to: A},
		wrongState("reopen/from-active", re, finishFiring()),

		// relocate: active → relocating, relocationSafe.
		{name: "relocate", trigger: rl, firing: relocateFiring(), to: L},
		guardFailed("relocate/untracked", rl, with(relocateFiring(), func(f *machine.Firing) { f.Obs.Status.Untracked = []string{"x"} }), gRelocate),
		guardFailed("relocate/ignored", rl, with(relocateFiring(), func(f *machine.Firing) { f.Obs.Status.Ignored = []string{"x"} }), gRelocate),
		guardFailed("relocate/status-failed", rl, with(relocateFiring(), func(f *machine.Firing) { f.Obs.StatusErr = "boom" }), gRelocate),
		guardFailed("relocate/hidden", rl, with(relocateFiring(), func(f *machine.Firing) { f.Obs.Hidden = []machine.Hidden{{Code: "nested-git", Path: "x"}} }), gRelocate),
		guardFailed("relocate/in-use", rl, with(relocateFiring(), func(f *machine.Firing) { f.Obs.InUse = []machine.Process{{PID: 7, Command: "sh", Via: "cwd"}} }), gRelocate),
		guardFailed("relocate/locked", rl, with(relocateFiring(), func(f *machine.Firing) { f.Obs.Locked = true }), gRelocate),
		guardFailed("relocate/leased", rl, with(relocateFiring(), func(f *machine.Firing) { f.Obs.Lease = lease(testNow.Add(time.Hour)) }), gRelocate),
		guardFailed("relocate/absent", rl, with(relocateFiring(), func(f *machine.Firing) { f.Obs.PathState = machine.PathAbsent }), gRelocate),
		guardFailed("relocate/unregistered", rl, with(relocateFiring(), func(f *machine.Firing) { f.Obs.Registered = false }), gRelocate),
		guardFailed("relocate/head-moved", rl, with(relocateFiring(), func(f *machine.Firing) { f.Obs.Head = otherHead }), gRelocate),
		guardFailed("relocate/dest-present", rl, with(relocateFiring(), func(f *machine.Firing) { f.Dest.PathState = machine.PathPresent }), gRelocate),
		guardFailed("relocate/dest-unknown", rl, with(relocateFiring(), func(f *machine.Firing) { f.Dest.PathState = machine.PathUnknown }), gRelocate),
		guardFailed("relocate/dest-registered", rl, with(relocateFiring(), func(f *machine.Firing) { f.Dest.Registered = true }), gRelocate),
		guardFailed("relocate/no-dest", rl, with(relocateFiring(), func(f *machine.Firing) { f.Dest = nil }), gRelocate),
		guardFailed("relocate/no-intent", rl, with(relocateFiring(), func(f *machine.Firing) { f.Intent = nil }), gRelocate),
		guardFailed("relocate/create-intent", rl, with(relocateFiring(), func(f *machine.Firing) { f.Intent.Kind = machine.IntentCreate }), gRelocate),
		wrongState("relocate/from-finished", rl, with(relocateFiring(), func(f *machine.Firing) { f.Record.State = F })),

		// relocated: relocating → active, onlyDestinationRegistered.
		{name: "relocated", trigger: rd, firing: relocatedFiring(), to: A},
		guardFailed("relocated/both-registered", rd, with(relocatedFiring(), func(f *machine.Firing) { f.Obs.Registered = true }), gRelocated),
		guardFailed("relocated/only-source", rd, with(relocatedFiring(), func(f *machine.Firing) {
			f.Obs.Registered = true
			f.Dest.Registered = false
		}), gRelocated),
		guardFailed("relocated/source-still-there", rd, with(relocatedFiring(), func(f *machine.Firing) { f.Obs.PathState = machine.PathPresent }), gRelocated),
		guardFailed("relocated/other-admin-key", rd, with(relocatedFiring(), func(f *machine.Firing) { f.Dest.AdminKey = "other" }), gRelocated),
		guardFailed("relocated/neither", rd, with(relocatedFiring(), func(f *machine.Firing) { f.Dest.Registered = false }), gRelocated),
		guardFailed("relocated/head-changed", rd, with(relocatedFiring(), func(f *machine.Firing) { f.Dest.Head = otherHead }), gRelocated),
		guardFailed("relocated/no-dest", rd, with(relocatedFiring(), func(f *machine.Firing) { f.Dest = nil }), gRelocated),
		guardFailed("relocated/no-intent", rd, with(relocatedFiring(), func(f *machine.Firing) { f.Record.Intent = nil }), gRelocated),
		wrongState("relocated/from-active", rd, with(relocatedFiring(), func(f *machine.Firing) { f.Record.State = A })),

		// remove: finished → removing, removalProven.
		{name: "remove", trigger: rm, firing: removeFiring(), to: R},
		guardFailed("remove/stale-fingerprint", rm, with(removeFiring(), func(f *machine.Firing) { f.Fingerprint = machine.Fingerprint(removableObs()) + "0" }), gRemove),
		guardFailed("remove/no-fingerprint", rm, with(removeFiring(), func(f *machine.Firing) { f.Fingerprint = "" }), gRemove),
		guardFailed("remove/tree-changed-since-plan", rm, with(removeFiring(), func(f *machine.Firing) { f.Obs.Status.Untracked = []string{"new"} }), gRemove),
		// In use is not part of the fingerprint, but Assess keeps.
		guardFailed("remove/in-use", rm, with(removeFiring(), func(f *machine.Firing) { f.Obs.InUse = []machine.Process{{PID: 1, Command: "sh", Via: "cwd"}} }), gRemove),
		guardFailed("remove/no-fresh-proof", rm, with(removeFiring(), func(f *machine.Firing) { f.Obs.Proof = nil }), gRemove),
		guardFailed("remove/intent-proof-other-head", rm, with(removeFiring(), func(f *machine.Firing) { f.Intent.Proof.Head = otherHead }), gRemove),
		guardFailed("remove/intent-without-proof", rm, with(removeFiring(), func(f *machine.Firing) { f.Intent.Proof = nil }), gRemove),
		guardFailed("remove/no-intent", rm, with(removeFiring(), func(f *machine.Firing) { f.Intent = nil }), gRemove),
		guardFailed("remove/relocation-intent", rm, with(removeFiring(), func(f *machine.Firing) { f.Intent.Kind = machine.IntentRelocation }), gRemove),
		wrongState("remove/from-active", rm, with(removeFiring(), func(f *machine.Firing) { f.Record.State = A })),

		// removed: removing → tombstoned, absenceVerified.
		{name: "removed", trigger: rv, firing: removedFiring(), to: T},
		guardFailed("removed/path-present", rv, with(removedFiring(), func(f *machine.Firing) { f.Obs = removableObs() }), gRemoved),
		guardFailed("removed/path-unknown", rv, with(removedFiring(), func(f *machine.Firing) { f.Obs.PathState = machine.PathUnknown }), gRemoved),
		guardFailed("removed/still-registered", rv, with(removedFiring(), func(f *machine.Firing) { f.Obs.Registered = true }), gRemoved),
		guardFailed("removed/admin-entry-left", rv, with(removedFiring(), func(f *machine.Firing) { f.Obs.AdminPresent = true }), gRemoved),
		wrongState("removed/from-finished", rv, with(removedFiring(), func(f *machine.Firing) { f.Record.State = F })),

		// retreat: removing → finished, treeIntact.
		{name: "retreat", trigger: rt, firing: retreatFiring(), to: F},
		guardFailed("retreat/inode-changed", rt, with(retreatFiring(), func(f *machine.Firing) { f.Obs.Ino++ }), gRetreat),
		guardFailed("retreat/device-changed", rt, with(retreatFiring(), func(f *machine.Firing) { f.Obs.Dev++ }), gRetreat),
		guardFailed("retreat/head-changed", rt, with(retreatFiring(), func(f *machine.Firing) { f.Obs.Head = otherHead }), gRetreat),
		guardFailed("retreat/absent", rt, with(retreatFiring(), func(f *machine.Firing) { f.Obs.PathState = machine.PathAbsent }), gRetreat),
		guardFailed("retreat/unregistered", rt, with(retreatFiring(), func(f *machine.Firing) { f.Obs.Registered = false }), gRetreat),
		guardFailed("retreat/no-intent", rt, with(retreatFiring(), func(f *machine.Firing) { f.Record.Intent = nil }), gRetreat),
		wrongState("retreat/from-finished", rt, with(retreatFiring(), func(f *machine.Firing) { f.Record.State = F })),

		// settle: active or finished → removing, vanishedSettlement.
		{name: "settle/finished", trigger: machine.TriggerSettle, firing: settleFiring(removableRecord(), vanishedObs(headCommit, true, headCommit)), to: R},
		{name: "settle/active", trigger: machine.TriggerSettle, firing: settleFiring(activeRecord(), vanishedObs(tipCommit, true, tipCommit)), to: R},
		{name: "settle/branch-kept-unproven", trigger: machine.TriggerSettle, firing: settleFiring(activeRecord(), vanishedObs(tipCommit, true, "")), to: R},
		guardFailed("settle/settlement-changed", machine.TriggerSettle, with(settleFiring(activeRecord(), vanishedObs(tipCommit, true, tipCommit)), func(f *machine.Firing) {
			f.Obs.Proof = nil // the tip is no longer proven: the branch would be kept, not deleted
		}), gSettle),
		guardFailed("settle/stale-fingerprint", machine.TriggerSettle, with(settleFiring(activeRecord(), vanishedObs(tipCommit, true, tipCommit)), func(f *machine.Firing) {
			f.Fingerprint += "0"
		}), gSettle),
		guardFailed("settle/path-present", machine.TriggerSettle, with(settleFiring(removableRecord(), vanishedObs(headCommit, true, headCommit)), func(f *machine.Firing) {
			f.Obs.PathState, f.Obs.IsDir = machine.PathPresent, true
		}), gSettle),
		guardFailed("settle/registered", machine.TriggerSettle, with(settleFiring(removableRecord(), vanishedObs(headCommit, true, headCommit)), func(f *machine.Firing) {
			f.Obs.AdminPresent = true
		}), gSettle),
		guardFailed("settle/live-lease", machine.TriggerSettle, with(settleFiring(activeRecord(), vanishedObs(tipCommit, true, tipCommit)), func(f *machine.Firing) {
			f.Obs.Lease = lease(testNow.Add(time.Hour))
		}), gSettle),
		guardFailed("settle/other-commit", machine.TriggerSettle, with(settleFiring(removableRecord(), vanishedObs(headCommit, true, headCommit)), func(f *machine.Firing) {
			f.Intent.Commit = otherHead
		}), gSettle),
		guardFailed("settle/removal-intent", machine.TriggerSettle, with(settleFiring(removableRecord(), vanishedObs(headCommit, true, headCommit)), func(f *machine.Firing) {
			f.Intent.Settlement = nil
		}), gSettle),
		guardFailed("settle/no-intent", machine.TriggerSettle, with(settleFiring(removableRecord(), vanishedObs(headCommit, true, headCommit)), func(f *machine.Firing) {
			f.Intent = nil
		}), gSettle),
		wrongState("settle/from-removing", machine.TriggerSettle, with(settleFiring(removableRecord(), vanishedObs(headCommit, true, headCommit)), func(f *machine.Firing) {
			f.Record.State = R
		})),
		// A finished tree's removal never settles: remove refuses a settlement.
		guardFailed("remove/vanished", rm, with(settleFiring(removableRecord(), vanishedObs(headCommit, true, headCommit)), func(f *machine.Firing) {
			f.Intent.Settlement = nil
			f.Intent.Proof = removableProof()
		}), gRemove),

		// settled: removing (under a settlement) → tombstoned, settlementVerified.
		{name: "settled", trigger: machine.TriggerSettled, firing: settledFiring(), to: T},
		guardFailed("settled/path-present", machine.TriggerSettled, with(settledFiring(), func(f *machine.Firing) { f.Obs = removableObs() }), gSettled),
		guardFailed("settled/registered", machine.TriggerSettled, with(settledFiring(), func(f *machine.Firing) { f.Obs.Registered = true }), gSettled),
		guardFailed("settled/removal-intent", machine.TriggerSettled, removedFiring(), gSettled),
		guardFailed("removed/settlement-intent", rv, settledFiring(), gRemoved),
		wrongState("settled/from-finished", machine.TriggerSettled, with(settledFiring(), func(f *machine.Firing) { f.Record.State = F })),

		// abandon: any but none and tombstoned → tombstoned,
		// unrecoverableAcknowledged.
		{name: "abandon/provisioning", trigger: ab, firing: abandonFiring(provisioningRecord()), to: T},
		{name: "abandon/active", trigger: ab, firing: abandonFiring(activeRecord()), to: T},
		{name: "abandon/finished", trigger: ab, firing: abandonFiring(removableRecord()), to: T},
		{name: "abandon/relocating", trigger: ab, firing: abandonFiring(relocatingRecord()), to: T},
		{name: "abandon/removing", trigger: ab, firing: abandonFiring(removingRecord()), to: T},
		guardFailed("abandon/not-acknowledged", ab, with(abandonFiring(removableRecord()), func(f *machine.Firing) { f.Acknowledged = "" }), gAbandon),
		guardFailed("abandon/other-commit", ab, with(abandonFiring(removableRecord()), func(f *machine.Firing) { f.Acknowledged = otherHead }), gAbandon),
		guardFailed("abandon/base-not-final-head", ab, with(abandonFiring(removableRecord()), func(f *machine.Firing) { f.Acknowledged = baseCommit }), gAbandon),
		guardFailed("abandon/git-did-not-confirm", ab, with(abandonFiring(removableRecord()), func(f *machine.Firing) { f.AckConfirmed = false }), gAbandon),
		wrongState("abandon/from-tombstoned", ab, with(abandonFiring(removableRecord()), func(f *machine.Firing) { f.Record.State = T })),
		wrongState("abandon/from-none", ab, with(abandonFiring(removableRecord()), func(f *machine.Firing) { f.Record.State = S })),
		wrongState("finish/from-tombstoned", fi, with(finishFiring(), func(f *machine.Firing) { f.Record.State = T })),
		wrongState("unknown-trigger", machine.Trigger("explode"), finishFiring()),
	}
}

func TestFire(t *testing.T) {
	t.Parallel()
	for _, tt := range fireCases() {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := tt.firing.Record
			commit, calls := recorder(nil)
			w := machine.NewWorktree(rec, commit)
			if got := w.State(); got != rec.State {
				t.Fatalf("new machine State() = %s, want %s", got, rec.State)
			}
			err := w.Fire(context.Background(), tt.trigger, tt.firing)

			if tt.code == "" {
				if err != nil {
					t.Fatalf("Fire(%s) = %v, want nil", tt.trigger, err)
				}
				want := []committed{{From: rec.State, To: tt.to, Trigger: tt.trigger, Firing: tt.firing}}
				if diff := cmp.Diff(want, *calls); diff != "" {
					t.Errorf("Commit calls (-want +got):\n%s", diff)
				}
				if got := w.State(); got != tt.to {
					t.Errorf("State() = %s, want %s", got, tt.to)
				}
				return
			}

			var ref *machine.Refusal
			if !errors.As(err, &ref) {
				t.Fatalf("Fire(%s) = %v (%T), want a *Refusal", tt.trigger, err, err)
			}
			want := refusalKey{Code: tt.code, Path: rec.Path, Retry: "custody show " + rec.ID}
			if diff := cmp.Diff(want, refusalKey{ref.Code, ref.Path, ref.Retry}); diff != "" {
				t.Errorf("refusal (-want +got):\n%s", diff)
			}
			if !errors.Is(err, tt.code.AsError()) {
				t.Errorf("errors.Is(err, %s.AsError()) = false", tt.code)
			}
			for _, s := range []string{string(tt.trigger), rec.ID, rec.State.String()} {
				if !strings.Contains(ref.Message, s) {
					t.Errorf("message %q does not name %q", ref.Message, s)
				}
			}
			if tt.guard != "" && !strings.Contains(ref.Message, tt.guard+" did not hold") {
				t.Errorf("message %q does not name guard %s", ref.Message, tt.guard)
			}
			if len(*calls) != 0 {
				t.Errorf("Commit called on a refused trigger: %+v", *calls)
			}
			if got := w.State(); got != rec.State {
				t.Errorf("State() = %s after a refusal, want %s", got, rec.State)
			}
		})
	}
}

// TestFireCoversEveryTrigger keeps the table honest: every trigger has a
// case that fires and a case that is refused.
func TestFireCoversEveryTrigger(t *testing.T) {
	t.Parallel()
	triggers := []machine.Trigger{
		machine.TriggerCreate, machine.TriggerCreated, machine.TriggerAbandon, machine.TriggerFinish,
		machine.TriggerExpire, machine.TriggerReopen, machine.TriggerRelocate, machine.TriggerRelocated,
		machine.TriggerRemove, machine.TriggerRemoved, machine.TriggerRetreat, machine.TriggerDiscard,
		machine.TriggerAdopt, machine.TriggerTakeOver, machine.TriggerSettle, machine.TriggerSettled,
	}
	fired, refused := map[machine.Trigger]bool{}, map[machine.Trigger]bool{}
	for _, c := range fireCases() {
		if c.code == "" {
			fired[c.trigger] = true
		} else {
			refused[c.trigger] = true
		}
	}
	for _, tr := range triggers {
		if !fired[tr] || !refused[tr] {
			t.Errorf("trigger %s: fired case %v, refused case %v", tr, fired[tr], refused[tr])
		}
	}
}

func TestFireCommitError(t *testing.T) {
	t.Parallel()
	errDisk := errors.New("bbolt: disk full")
	f := removeFiring()
	commit, calls := recorder(errDisk)
	w := machine.NewWorktree(f.Record, commit)
	err := w.Fire(context.Background(), machine.TriggerRemove, f)
	if !errors.Is(err, errDisk) {
		t.Fatalf("Fire = %v, want the Commit error", err)
	}
	var ref *machine.Refusal
	if errors.As(err, &ref) {
		t.Errorf("a Commit error came back as refusal %v", ref)
	}
	if len(*calls) != 1 {
		t.Errorf("Commit called %d times, want 1", len(*calls))
	}
	if got := w.State(); got != machine.StateFinished {
		t.Errorf("State() = %s after a failed commit, want finished", got)
	}

	// The same machine fires once the store works again.
	ok := false
	w2 := machine.NewWorktree(f.Record, func(_ context.Context, from, to machine.State, tr machine.Trigger, _ machine.Firing) error {
		ok = from == machine.StateFinished && to == machine.StateRemoving && tr == machine.TriggerRemove
		return nil
	})
	if err := w2.Fire(context.Background(), machine.TriggerRemove, f); err != nil || !ok {
		t.Fatalf("Fire after recovery = %v, commit saw the right transition: %v", err, ok)
	}
}

// TestFireSequence drives one record through its whole life on one
// machine, each step committing what Next returns.
func TestFireSequence(t *testing.T) {
	t.Parallel()
	rec := machine.Record{ID: testID, Path: testPath, Branch: testBranch, BaseCommit: baseCommit, Origin: machine.OriginCreated}
	var trail []machine.State
	w := machine.NewWorktree(rec, func(_ context.Context, from, to machine.State, tr machine.Trigger, f machine.Firing) error {
		if from != rec.State {
			t.Errorf("%s: commit from %s, record is %s", tr, from, rec.State)
		}
		rec = machine.Next(rec, to, tr, f)
		trail = append(trail, to)
		return nil
	})
	fire := func(tr machine.Trigger, f machine.Firing) {
		t.Helper()
		f.Record = rec
		if err := w.Fire(context.Background(), tr, f); err != nil {
			t.Fatalf("%s: %v", tr, err)
		}
	}
	fire(machine.TriggerCreate, createFiring())
	fire(machine.TriggerCreated, createdFiring())
	fire(machine.TriggerFinish, finishFiring())
	rf := removeFiring()
	rf.Record = rec
	fire(machine.TriggerRemove, rf)
	fire(machine.TriggerRemoved, removedFiring())

	want := []machine.State{machine.StateProvisioning, machine.StateActive, machine.StateFinished, machine.StateRemoving, machine.StateTombstoned}
	if diff := cmp.Diff(want, trail); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
	if rec.Rev != 5 || rec.Intent != nil || rec.Evidence.Outcome != "removed" {
		t.Errorf("final record Rev=%d Intent=%v Outcome=%q", rec.Rev, rec.Intent, rec.Evidence.Outcome)
	}
}

func TestPermitted(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		f    machine.Firing
		want []machine.Trigger
	}{
		{"none", createFiring(), []machine.Trigger{machine.TriggerCreate}},
		{"none/occupied", with(createFiring(), func(f *machine.Firing) { f.Obs.Registered = true }), []machine.Trigger{}},
		{"provisioning/made", createdFiring(), []machine.Trigger{machine.TriggerCreated}},
		{"provisioning/nothing-acknowledged", with(discardFiring(), func(f *machine.Firing) {
			f.Acknowledged, f.AckConfirmed = baseCommit, true
		}), []machine.Trigger{machine.TriggerAbandon, machine.TriggerDiscard}},
		{"active/expired-lease-acknowledged", with(expireFiring(), func(f *machine.Firing) {
			f.Acknowledged, f.AckConfirmed = baseCommit, true
			f.Intent = relocationIntent()
			f.Dest = &machine.WorktreeObservation{Path: destPath, PathState: machine.PathAbsent}
		}), // The tree's HEAD moved past the acknowledged base commit: abandon must not hold.
			[]machine.Trigger{machine.TriggerExpire, machine.TriggerFinish, machine.TriggerRelocate}},
		{"active/live-lease", with(finishFiring(), func(f *machine.Firing) { f.Obs.Lease = lease(testNow.Add(time.Hour)) }), []machine.Trigger{}},
		{"finished/removable", removeFiring(), []machine.Trigger{machine.TriggerRemove, machine.TriggerReopen}},
		{"finished/acknowledged", with(removeFiring(), func(f *machine.Firing) {
			f.Acknowledged, f.AckConfirmed = headCommit, true
		}), []machine.Trigger{machine.TriggerAbandon, machine.TriggerRemove, machine.TriggerReopen}},
		{"removing/intact", retreatFiring(), []machine.Trigger{machine.TriggerRetreat}},
		{"removing/gone", removedFiring(), []machine.Trigger{machine.TriggerRemoved}},
		{"relocating/moved", relocatedFiring(), []machine.Trigger{machine.TriggerRelocated}},
		{"tombstoned", with(removedFiring(), func(f *machine.Firing) { f.Record.State = machine.StateTombstoned }), []machine.Trigger{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			commit, calls := recorder(nil)
			w := machine.NewWorktree(tt.f.Record, commit)
			// stateless ranges over a map: ask often enough that an
			// unsorted answer shows.
			for range 50 {
				got := w.Permitted(context.Background(), tt.f)
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Fatalf("Permitted (-want +got):\n%s", diff)
				}
				if !slices.IsSorted(got) {
					t.Fatalf("Permitted = %v, not sorted", got)
				}
			}
			if len(*calls) != 0 || w.State() != tt.f.Record.State {
				t.Errorf("Permitted changed something: calls %v, state %s", *calls, w.State())
			}
		})
	}
}

func TestWorktreeGraph(t *testing.T) {
	t.Parallel()
	g := machine.WorktreeGraph()
	for _, s := range []string{
		"createTargetsFree", "treeMadeExactly", "nothingMade", "noLiveLease", "leaseExpired",
		"relocationSafe", "onlyDestinationRegistered", "removalProven", "absenceVerified",
		"treeIntact", "unrecoverableAcknowledged",
	} {
		if !strings.Contains(g, s) {
			t.Errorf("graph does not name guard %s", s)
		}
	}
	for _, s := range machine.States() {
		if !strings.Contains(g, string(s)) {
			t.Errorf("graph does not name state %s", s)
		}
	}
}
