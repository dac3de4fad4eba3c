package migrate

import (
	"context"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/store"
)

// MigrateStatusResult is where every candidate of the migration stands.
type MigrateStatusResult struct {
	Candidates []machine.MigrateCandidateStatus `json:"candidates"`
	Counts     map[machine.MigrateState]int     `json:"counts"`
	// Complete is true only when every candidate is settled; a run killed
	// between an act and its outcome leaves it false.
	Complete bool `json:"complete"`
	// LegacyBranches are the branches of trees the migration retired or
	// released on a remote's proof that still point at the proven commit:
	// custody never deletes a branch it did not create, so each is listed
	// with the command that deletes it.
	LegacyBranches []LegacyBranch `json:"legacy_branches,omitempty"`
}

// LegacyBranch is one legacy branch a settled candidate left behind.
type LegacyBranch struct {
	Candidate string `json:"candidate"`
	Branch    string `json:"branch"`
	Commit    string `json:"commit"`
	// Delete deletes the branch only while it is still at Commit.
	Delete string `json:"delete"`
}

// Pending reports whether some candidate is pending or refused.
func (r MigrateStatusResult) Pending() bool { return !r.Complete }

// migrationEvents reads every migration event of the journal, in order.
func migrationEvents(e *steps.Env) ([]machine.MigrateEvent, error) { return steps.MigrationEvents(e) }

// MigrateStatus folds the journal's migration events into each
// candidate's standing.
func MigrateStatus(ctx context.Context, e *steps.Env) (MigrateStatusResult, error) {
	evs, err := migrationEvents(e)
	if err != nil {
		return MigrateStatusResult{}, err
	}
	st := machine.FoldMigration(evs)
	res := MigrateStatusResult{Candidates: st, Counts: map[machine.MigrateState]int{}, Complete: machine.MigrationComplete(st)}
	var inv *gitfiles.Inventory
	for _, s := range st {
		res.Counts[s.State]++
		if s.Branch == "" || !machine.IsFullCommit(s.Head) {
			continue
		}
		if inv == nil {
			i, err := gitfiles.TakeInventory(ctx, e.Git, e.Repo)
			if err != nil {
				return res, err
			}
			inv = &i
		}
		b, err := e.Git.Observe(ctx, e.Repo.MainCheckout, "rev-parse", "--verify", "-q", "refs/heads/"+s.Branch)
		if err != nil || strings.TrimSpace(string(b)) != s.Head {
			continue // gone, or moved on since: nothing of it was proven
		}
		del := machine.LegacyBranchDelete(s.Branch, s.Head)
		if ent, ok := inv.Entry(s.Path); ok && hostio.Lstat(s.Path).State == machine.PathAbsent && !ent.Locked {
			// A released tree is gone but still registered, its branch
			// checked out there: that one registration goes first (its
			// directory is gone; nothing else is pruned).
			del = machine.Command("git", "worktree", "remove", s.Path) + " && " + del
		}
		res.LegacyBranches = append(res.LegacyBranches, LegacyBranch{Candidate: s.ID, Branch: s.Branch, Commit: s.Head, Delete: del})
	}
	return res, nil
}

// journalMigrate appends one migration event.
func journalMigrate(e *steps.Env, ev machine.MigrateEvent) error {
	return e.Store.AppendEvent(store.Event{Record: ev.Candidate, Kind: machine.KindWorktree, Event: ev.Event, At: e.Now().UTC(), Actor: e.Actor, Detail: ev})
}
