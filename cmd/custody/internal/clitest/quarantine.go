package clitest

// The two honest ends of a removal apply attempted: removed, or kept and
// refused with a reason.

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/output"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	json "github.com/custody-sh/custody/machine/bytejson"
	"github.com/custody-sh/custody/steps"
)

// WantFile fails unless file holds exactly want.
func WantFile(t *testing.T, file, want string) {
	t.Helper()
	if b, err := os.ReadFile(file); err != nil || string(b) != want {
		t.Errorf("%s: %q, %v; want %q (lost)", file, b, err, want)
	}
}

// KeptOrRemoved checks the tree ended one of the two honest ways: fully
// removed and unregistered (record tombstoned), or kept at its path (or its
// quarantine) and still registered with git.
func KeptOrRemoved(t *testing.T, r *fixtures.Repo, id, path, q string) (removed bool) {
	t.Helper()
	st := RecordState(t, r, id)
	_, perr := os.Lstat(path)
	_, qerr := os.Lstat(q)
	registered := slices.Contains(Registered(t, r), path)
	switch {
	case st == "tombstoned":
		if !errors.Is(perr, fs.ErrNotExist) || !errors.Is(qerr, fs.ErrNotExist) || registered {
			t.Errorf("%s tombstoned, but path %v, quarantine %v, registered %v", id, perr, qerr, registered)
		}
		return true
	default:
		if perr != nil && qerr != nil {
			t.Errorf("%s is %s, but neither its path (%v) nor its quarantine (%v) exists", id, st, perr, qerr)
		}
		if !registered {
			t.Errorf("%s is kept (%s) but git no longer registers %s", id, st, path)
		}
	}
	return false
}

// RefusedIn requires the apply result to refuse id (exit 3, a refusal with a
// code and a message).
func RefusedIn(t *testing.T, res Result, id string) *machine.Refusal {
	t.Helper()
	if res.Code != output.ExitPending {
		t.Fatalf("apply: want exit %d, got\n%s", output.ExitPending, res)
	}
	o := ApplyOutcome(t, ApplyDecoded(t, res), id)
	if o.Outcome == "removed" || o.Refusal == nil || o.Refusal.Code == "" || o.Refusal.Message == "" {
		t.Fatalf("apply %s: %+v, want a refusal that says why", id, o)
	}
	return o.Refusal
}

// IgnoreLogs makes *.log ignored, as a project's .gitignore would: git
// worktree remove deletes such files without looking.
func IgnoreLogs(t *testing.T, r *fixtures.Repo) {
	t.Helper()
	excl := filepath.Join(r.Dir, ".git", "info", "exclude")
	b, _ := os.ReadFile(excl)
	if err := os.WriteFile(excl, append(b, "\n*.log\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ApplyDecoded decodes a finished apply run.
func ApplyDecoded(t *testing.T, res Result) steps.ApplyResult {
	t.Helper()
	var env struct {
		Result steps.ApplyResult `json:"result"`
	}
	if err := json.Unmarshal([]byte(res.Stdout), &env); err != nil {
		t.Fatalf("apply output: %v\n%s", err, res)
	}
	return env.Result
}
