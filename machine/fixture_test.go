package machine_test

import (
	"strings"
	"time"

	"github.com/custody-sh/custody/machine"
)

// The fixture: one worktree custody created, finished, clean, published.
// Every test mutates one thing of a fresh copy.
const (
	testID     = "feat-login-a1b2c3"
	testPath   = "/repo/.worktrees/feat-login-a1b2c3"
	testBranch = "custody/feat-login-a1b2c3"
	testDev    = 42
	testIno    = 4242
	testPlanID = "sha256:0000000000000000000000000000000000000000000000000000000000000001"
	destPath   = "/repo/.worktrees/moved-a1b2c3"
)

var (
	baseCommit = strings.Repeat("a", 40)
	headCommit = strings.Repeat("b", 40)
	tipCommit  = strings.Repeat("c", 40)
	otherHead  = strings.Repeat("d", 40)
	testNow    = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	createdAt  = testNow.Add(-48 * time.Hour)
	finishedAt = testNow.Add(-24 * time.Hour)
)

// removableRecord is a finished record custody created, with its identity
// and final HEAD recorded.
func removableRecord() machine.Record {
	return machine.Record{
		ID:         testID,
		Kind:       machine.KindWorktree,
		State:      machine.StateFinished,
		Origin:     machine.OriginCreated,
		Path:       testPath,
		Branch:     testBranch,
		BaseCommit: baseCommit,
		AdminKey:   testID,
		Dev:        testDev,
		Ino:        testIno,
		Rev:        3,
		CreatedAt:  createdAt,
		UpdatedAt:  finishedAt,
		Evidence:   machine.Evidence{FinalHead: headCommit, FinishedAt: finishedAt},
	}
}

// removableProof proves headCommit published on origin's main.
func removableProof() *machine.Proof {
	return &machine.Proof{
		Kind:   machine.ProofAncestry,
		Remote: "origin",
		Ref:    "refs/heads/main",
		Tip:    tipCommit,
		Head:   headCommit,
	}
}

// removableObs is a fresh observation of removableRecord's tree that
// permits removal.
func removableObs() machine.WorktreeObservation {
	return machine.WorktreeObservation{
		Path:         testPath,
		PathState:    machine.PathPresent,
		IsDir:        true,
		Dev:          testDev,
		Ino:          testIno,
		Registered:   true,
		AdminKey:     testID,
		AdminPresent: true,
		Head:         headCommit,
		Branch:       testBranch,
		Marker:       testID,
		BranchTip:    headCommit,
		Remote:       machine.RemoteEvidence{Remotes: []string{"origin"}},
		Proof:        removableProof(),
	}
}

// removalIntent is the intent apply commits before removing the fixture.
func removalIntent(obs machine.WorktreeObservation) *machine.Intent {
	return &machine.Intent{
		Kind:        machine.IntentRemoval,
		Path:        testPath,
		Commit:      obs.Head,
		Dev:         obs.Dev,
		Ino:         obs.Ino,
		AdminKey:    obs.AdminKey,
		Proof:       removableProof(),
		Fingerprint: machine.Fingerprint(obs),
		PlanID:      testPlanID,
		Holder:      machine.Holder{PID: 100, Host: "host"},
		At:          testNow,
	}
}

// provisioningRecord is a record whose create intent is committed.
func provisioningRecord() machine.Record {
	return machine.Record{
		ID:         testID,
		Kind:       machine.KindWorktree,
		State:      machine.StateProvisioning,
		Origin:     machine.OriginCreated,
		Path:       testPath,
		Branch:     testBranch,
		BaseCommit: baseCommit,
		Rev:        1,
		CreatedAt:  createdAt,
		UpdatedAt:  createdAt,
		Intent:     createIntent(),
	}
}

func createIntent() *machine.Intent {
	return &machine.Intent{
		Kind:   machine.IntentCreate,
		Path:   testPath,
		Branch: testBranch,
		Commit: baseCommit,
		Holder: machine.Holder{PID: 100, Host: "host"},
		At:     createdAt,
	}
}

// madeObs observes the tree create made exactly.
func madeObs() machine.WorktreeObservation {
	return machine.WorktreeObservation{
		Path:         testPath,
		PathState:    machine.PathPresent,
		IsDir:        true,
		Dev:          testDev,
		Ino:          testIno,
		Registered:   true,
		AdminKey:     testID,
		AdminPresent: true,
		Head:         baseCommit,
		Branch:       testBranch,
		Marker:       testID,
		BranchTip:    baseCommit,
	}
}

// absentObs observes nothing at the fixture's path.
func absentObs() machine.WorktreeObservation {
	return machine.WorktreeObservation{Path: testPath, PathState: machine.PathAbsent}
}

func activeRecord() machine.Record {
	r := removableRecord()
	r.State = machine.StateActive
	r.Evidence = machine.Evidence{}
	return r
}

func removingRecord() machine.Record {
	r := removableRecord()
	r.State = machine.StateRemoving
	r.Rev = 4
	r.Intent = removalIntent(removableObs())
	r.Evidence.PlanID = testPlanID
	return r
}

func relocationIntent() *machine.Intent {
	return &machine.Intent{
		Kind:        machine.IntentRelocation,
		Path:        testPath,
		Destination: destPath,
		Commit:      headCommit,
		Holder:      machine.Holder{PID: 100, Host: "host"},
		At:          testNow,
	}
}

func relocatingRecord() machine.Record {
	r := activeRecord()
	r.State = machine.StateRelocating
	r.Intent = relocationIntent()
	return r
}

func lease(expires time.Time) *machine.Lease {
	return &machine.Lease{Record: testID, Holder: "agent-7", Expires: expires}
}
