package clitest

// What a kill test compares: one worktree record's end, on disk, in git
// and in the store, and a repository's health after it.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/store"
)

// TreeEnd is what exists of one worktree record, on disk, in git and in
// the store, with ids and commits replaced by what they should be.
type TreeEnd struct {
	State           string
	Intent          bool
	Path            string // present | absent (lstat ENOENT) | the lstat error
	Registered      bool   // git worktree list names the path
	AdminEntry      string // id (<common>/worktrees/<id>/gitdir names the path) | absent | what it names
	Marker          string // id (the ready marker holds the id) | absent | its content
	Branch          string // commit (custody/<id> at the expected commit) | absent | its tip
	EvidenceOutcome string
	Triggers        []string // the record's journal, in order
}

// ObserveTreeEnd observes the TreeEnd of record id, whose branch should be
// at commit.
func ObserveTreeEnd(t testing.TB, r *fixtures.Repo, id, commit string) TreeEnd {
	t.Helper()
	sh := ShowRecord(t, r, id)
	rec := sh.Record
	e := TreeEnd{State: string(rec.State), Intent: sh.Intent != nil, EvidenceOutcome: rec.Evidence.Outcome}
	for _, j := range sh.Journal {
		// A resumed run records that it took the dead process's intent
		// over; everything else must match the uninterrupted run.
		if j.Trigger == string(machine.TriggerTakeOver) {
			continue
		}
		e.Triggers = append(e.Triggers, j.Trigger)
	}
	if _, err := os.Lstat(rec.Path); err == nil {
		e.Path = "present"
	} else if errors.Is(err, os.ErrNotExist) {
		e.Path = "absent"
	} else {
		e.Path = err.Error()
	}
	e.Registered = slices.Contains(Registered(t, r), rec.Path)
	admin := filepath.Join(r.Dir, ".git", "worktrees", id)
	switch b, err := os.ReadFile(filepath.Join(admin, "gitdir")); {
	case err == nil && filepath.Clean(strings.TrimSpace(string(b))) == filepath.Join(rec.Path, ".git"):
		e.AdminEntry = "id"
	case err == nil:
		e.AdminEntry = strings.TrimSpace(string(b))
	case errors.Is(err, os.ErrNotExist):
		if _, err := os.Lstat(admin); err == nil {
			e.AdminEntry = "present without gitdir"
		} else {
			e.AdminEntry = "absent"
		}
	default:
		e.AdminEntry = err.Error()
	}
	switch b, err := os.ReadFile(filepath.Join(admin, "custody-ready")); {
	case err == nil && strings.TrimSpace(string(b)) == id:
		e.Marker = "id"
	case err == nil:
		e.Marker = fmt.Sprintf("%q", b)
	case errors.Is(err, os.ErrNotExist):
		e.Marker = "absent"
	default:
		e.Marker = err.Error()
	}
	if rec.Branch != "custody/"+id {
		t.Errorf("record %s has branch %q, want custody/%s", id, rec.Branch, id)
	}
	switch tip := r.BranchTip("custody/" + id); tip {
	case "":
		e.Branch = "absent"
	case commit:
		e.Branch = "commit"
	default:
		e.Branch = tip
	}
	return e
}

// Healthy asserts doctor is OK and an exported journal verifies up to the
// store's chain head; it returns the exported entries.
func Healthy(t testing.TB, r *fixtures.Repo) []store.Entry {
	t.Helper()
	MustCustody(t, r, 0, "doctor")
	return JournalEntries(t, r)
}
