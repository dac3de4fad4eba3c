package machine_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/machine"
)

func TestNext(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		rec     machine.Record
		to      machine.State
		trigger machine.Trigger
		f       machine.Firing
		want    func() machine.Record
	}{
		{
			name:    "create",
			rec:     createFiring().Record,
			to:      machine.StateProvisioning,
			trigger: machine.TriggerCreate,
			f:       createFiring(),
			want: func() machine.Record {
				return machine.Record{
					ID: testID, Kind: machine.KindWorktree, State: machine.StateProvisioning,
					Path: testPath, Branch: testBranch, BaseCommit: baseCommit,
					Rev: 1, CreatedAt: testNow, UpdatedAt: testNow, Intent: createIntent(),
				}
			},
		},
		{
			name:    "created",
			rec:     provisioningRecord(),
			to:      machine.StateActive,
			trigger: machine.TriggerCreated,
			f:       with(createdFiring(), func(f *machine.Firing) { f.Obs.Dev, f.Obs.Ino = 8, 888 }),
			want: func() machine.Record {
				r := provisioningRecord()
				r.State, r.Rev, r.UpdatedAt, r.Intent = machine.StateActive, 2, testNow, nil
				r.Dev, r.Ino, r.AdminKey = 8, 888, testID
				return r
			},
		},
		{
			name:    "finish",
			rec:     activeRecord(),
			to:      machine.StateFinished,
			trigger: machine.TriggerFinish,
			f:       finishFiring(),
			want: func() machine.Record {
				r := activeRecord()
				r.State, r.Rev, r.UpdatedAt = machine.StateFinished, 4, testNow
				r.Evidence = machine.Evidence{FinalHead: headCommit, FinishedAt: testNow}
				return r
			},
		},
		{
			// A tree restored by copy: finish records the directory now
			// at the path.
			name:    "finish/records-identity",
			rec:     activeRecord(),
			to:      machine.StateFinished,
			trigger: machine.TriggerFinish,
			f:       with(finishFiring(), func(f *machine.Firing) { f.Obs.Dev, f.Obs.Ino = 7, 77 }),
			want: func() machine.Record {
				r := activeRecord()
				r.State, r.Rev, r.UpdatedAt = machine.StateFinished, 4, testNow
				r.Evidence = machine.Evidence{FinalHead: headCommit, FinishedAt: testNow}
				r.Dev, r.Ino = 7, 77
				return r
			},
		},
		{
			// Nothing at the path: the recorded identity stays.
			name:    "finish/absent-keeps-identity",
			rec:     activeRecord(),
			to:      machine.StateFinished,
			trigger: machine.TriggerFinish,
			f: with(finishFiring(), func(f *machine.Firing) {
				f.Obs.PathState, f.Obs.Dev, f.Obs.Ino, f.Obs.Head = machine.PathAbsent, 0, 0, headCommit
			}),
			want: func() machine.Record {
				r := activeRecord()
				r.State, r.Rev, r.UpdatedAt = machine.StateFinished, 4, testNow
				r.Evidence = machine.Evidence{FinalHead: headCommit, FinishedAt: testNow}
				return r
			},
		},
		{
			// Expiry is no person vouching for the directory.
			name:    "expire/keeps-identity",
			rec:     activeRecord(),
			to:      machine.StateFinished,
			trigger: machine.TriggerExpire,
			f:       with(expireFiring(), func(f *machine.Firing) { f.Obs.Dev, f.Obs.Ino = 7, 77 }),
			want: func() machine.Record {
				r := activeRecord()
				r.State, r.Rev, r.UpdatedAt = machine.StateFinished, 4, testNow
				r.Evidence = machine.Evidence{FinalHead: headCommit, FinishedAt: testNow}
				return r
			},
		},
		{
			name:    "expire",
			rec:     activeRecord(),
			to:      machine.StateFinished,
			trigger: machine.TriggerExpire,
			f:       with(expireFiring(), func(f *machine.Firing) { f.Obs.Head = otherHead }),
			want: func() machine.Record {
				r := activeRecord()
				r.State, r.Rev, r.UpdatedAt = machine.StateFinished, 4, testNow
				r.Evidence = machine.Evidence{FinalHead: otherHead, FinishedAt: testNow}
				return r
			},
		},
		{
			name:    "reopen",
			rec:     removableRecord(),
			to:      machine.StateActive,
			trigger: machine.TriggerReopen,
			f:       reopenFiring(),
			want: func() machine.Record {
				r := removableRecord()
				r.State, r.Rev, r.UpdatedAt = machine.StateActive, 4, testNow
				r.Evidence.FinalHead = ""
				return r
			},
		},
		{
			name:    "relocate",
			rec:     activeRecord(),
			to:      machine.StateRelocating,
			trigger: machine.TriggerRelocate,
			f:       relocateFiring(),
			want: func() machine.Record {
				r := activeRecord()
				r.State, r.Rev, r.UpdatedAt, r.Intent = machine.StateRelocating, 4, testNow, relocationIntent()
				return r
			},
		},
		{
			name:    "relocated",
			rec:     relocatingRecord(),
			to:      machine.StateActive,
			trigger: machine.TriggerRelocated,
			f:       relocatedFiring(),
			want: func() machine.Record {
				r := relocatingRecord()
				r.State, r.Rev, r.UpdatedAt, r.Intent = machine.StateActive, 4, testNow, nil
				r.Path, r.Dev, r.Ino = destPath, testDev, 9999
				return r
			},
		},
		{
			name:    "remove",
			rec:     removableRecord(),
			to:      machine.StateRemoving,
			trigger: machine.TriggerRemove,
			f:       removeFiring(),
			want: func() machine.Record {
				r := removableRecord()
				r.State, r.Rev, r.UpdatedAt = machine.StateRemoving, 4, testNow
				r.Intent = removalIntent(removableObs())
				r.Evidence.PlanID = testPlanID
				return r
			},
		},
		{
			name:    "removed",
			rec:     removingRecord(),
			to:      machine.StateTombstoned,
			trigger: machine.TriggerRemoved,
			f:       removedFiring(),
			want: func() machine.Record {
				r := removingRecord()
				r.State, r.Rev, r.UpdatedAt, r.Intent = machine.StateTombstoned, 5, testNow, nil
				r.Evidence.Proof = removableProof()
				r.Evidence.RemovedAt = testNow
				r.Evidence.BranchOutcome = machine.BranchDeleted
				r.Evidence.Outcome = "removed"
				return r
			},
		},
		{
			name:    "removed/branch-kept",
			rec:     removingRecord(),
			to:      machine.StateTombstoned,
			trigger: machine.TriggerRemoved,
			f: with(removedFiring(), func(f *machine.Firing) {
				f.Evidence = machine.Evidence{BranchOutcome: machine.BranchKept, BranchReason: "branch moved to " + otherHead, Outcome: "ignored"}
			}),
			want: func() machine.Record {
				r := removingRecord()
				r.State, r.Rev, r.UpdatedAt, r.Intent = machine.StateTombstoned, 5, testNow, nil
				r.Evidence.Proof = removableProof()
				r.Evidence.RemovedAt = testNow
				r.Evidence.BranchOutcome = machine.BranchKept
				r.Evidence.BranchReason = "branch moved to " + otherHead
				r.Evidence.Outcome = "removed"
				return r
			},
		},
		{
			name:    "retreat",
			rec:     removingRecord(),
			to:      machine.StateFinished,
			trigger: machine.TriggerRetreat,
			f:       retreatFiring(),
			want: func() machine.Record {
				r := removingRecord()
				r.State, r.Rev, r.UpdatedAt, r.Intent = machine.StateFinished, 5, testNow, nil
				return r
			},
		},
		{
			name:    "discard",
			rec:     provisioningRecord(),
			to:      machine.StateTombstoned,
			trigger: machine.TriggerDiscard,
			f: with(discardFiring(), func(f *machine.Firing) {
				f.Evidence = machine.Evidence{BranchOutcome: machine.BranchAbsent, BranchReason: "never made"}
			}),
			want: func() machine.Record {
				r := provisioningRecord()
				r.State, r.Rev, r.UpdatedAt, r.Intent = machine.StateTombstoned, 2, testNow, nil
				r.Evidence = machine.Evidence{Outcome: "discarded", BranchOutcome: machine.BranchAbsent, BranchReason: "never made"}
				return r
			},
		},
		{
			name:    "abandon",
			rec:     removingRecord(),
			to:      machine.StateTombstoned,
			trigger: machine.TriggerAbandon,
			f:       abandonFiring(removingRecord()),
			want: func() machine.Record {
				r := removingRecord()
				r.State, r.Rev, r.UpdatedAt, r.Intent = machine.StateTombstoned, 5, testNow, nil
				r.Evidence.Outcome = "abandoned: " + headCommit
				return r
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := tt.rec
			before := tt.rec
			if in.Intent != nil {
				c := *in.Intent
				before.Intent = &c
			}
			got := machine.Next(in, tt.to, tt.trigger, tt.f)
			if diff := cmp.Diff(tt.want(), got); diff != "" {
				t.Errorf("Next (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, in); diff != "" {
				t.Errorf("Next changed its input (-before +after):\n%s", diff)
			}
			// The result owns its intent: the store may keep it while the
			// caller reuses the firing and the old record.
			if got.Intent != nil && (got.Intent == in.Intent || got.Intent == tt.f.Intent) {
				t.Errorf("result shares its intent with the input")
			}
		})
	}
}

func TestNextUnknownTriggerPanics(t *testing.T) {
	t.Parallel()
	defer func() {
		if recover() == nil {
			t.Error("Next with an undeclared trigger did not panic")
		}
	}()
	machine.Next(removableRecord(), machine.StateActive, machine.Trigger("explode"), reopenFiring())
}
