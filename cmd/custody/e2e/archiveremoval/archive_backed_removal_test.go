//go:build unix

package archiveremoval

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/cmd/custody/internal/output"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/steps/archive"
	"github.com/custody-sh/custody/store"
)

// TestArchiveBackedRemoval is the round trip of What must hold through
// plan and apply: a finished tree with every kind of content is archived,
// plan lists its removal on proof kind archive naming the archive, apply
// removes it, and restore yields the identical bytes and modes. A file
// added after the archive keeps the tree [archive-stale].
func TestArchiveBackedRemoval(t *testing.T) {
	t.Parallel()
	r := clitest.InitSpacedRepo(t, fixtures.Options{})
	id, wt := clitest.NewTree(t, r, "spike")
	clitest.FillEveryKind(t, r, wt)
	r.GitIn(wt, "reset", "-q") // staged content is never archived away: unstage it
	before := clitest.SnapDisk(t, wt)
	head := r.Head(wt)
	res := clitest.DecodeResult[output.FinishArchiveResult](t, clitest.MustCustody(t, r, 0, "--json", "finish", "--archive", id), "finish")
	if len(res.Archives) != 1 {
		t.Fatalf("finish --archive = %+v", res)
	}
	a := res.Archives[0]

	// A file added after the archive: kept, and the archive says why.
	r.WriteFile(wt, "later.txt", "after the capture\n")
	plan := filepath.Join(r.Root, "stale.json")
	p := clitest.PlanTo(t, r, plan, 0) // a kept tree is the plan's result
	if it := clitest.PlanItem(t, p, id); it.Action != machine.ActionKeep || !clitest.HasCode(it.Refusals, string(machine.CodeArchiveStale)) {
		t.Fatalf("plan with a file added after the archive: %+v, want kept with archive-stale", it)
	}
	if err := os.Remove(filepath.Join(wt, "later.txt")); err != nil {
		t.Fatal(err)
	}

	plan = filepath.Join(r.Root, "plan.json")
	p = clitest.PlanTo(t, r, plan, 0)
	it := clitest.PlanItem(t, p, id)
	if it.Action != machine.ActionRemove || it.Proof == nil || it.Proof.Kind != machine.ProofArchive || it.Proof.Ref != a.ID {
		t.Fatalf("plan of an archived tree: %+v, want remove on proof archive %s", it, a.ID)
	}
	out := clitest.ApplyFile(t, r, plan, 0)
	if o := clitest.ApplyOutcome(t, out, id); o.Outcome != machine.OutcomeRemoved {
		t.Fatalf("apply: %+v", o)
	}
	if _, err := os.Lstat(wt); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the tree is still there: %v", err)
	}
	if c := arVerify(t, r, a.ID); c.State != machine.StateFinished || len(c.Problems) != 0 || c.Fresh != "tree absent" {
		t.Errorf("the archive after its tree was removed: %+v, want finished (the sole copy), verifying", c)
	}
	dst := filepath.Join(t.TempDir(), "restored")
	restored := clitest.DecodeResult[archive.ArchiveRestored](t, clitest.RunBin(t, clitest.Bin(), r, r.Root, nil, "--json", "archive", "restore", a.ID, dst), "archive restore")
	if restored.Head != head {
		t.Errorf("restored HEAD %s, want %s", restored.Head, head)
	}
	if diff := cmp.Diff(before, clitest.SnapDisk(t, dst)); diff != "" {
		t.Errorf("restored tree differs (-archived +restored):\n%s", diff)
	}
}

// TestArchiveBackedRemovalCrash kills an archive-backed apply at each of
// apply's failpoints: resume converges to the tree removed, and the
// archive still restores it byte for byte.
func TestArchiveBackedRemovalCrash(t *testing.T) {
	t.Parallel()
	for _, point := range steps.Failpoints() {
		if !strings.HasPrefix(point, "apply/") {
			continue
		}
		t.Run(strings.ReplaceAll(point, "/", "_"), func(t *testing.T) {
			t.Parallel()
			r := clitest.InitSpacedRepo(t, fixtures.Options{})
			id, wt := clitest.NewTree(t, r, "spike")
			r.Commit(wt, "a.txt", "one\n")
			r.WriteFile(wt, "notes/untracked.md", "only here\n")
			r.WriteFile(wt, "b.txt", "uncommitted\n")
			r.NestedRepo(wt, "vendor/nested")
			before := clitest.SnapDisk(t, wt)
			res := clitest.DecodeResult[output.FinishArchiveResult](t, clitest.MustCustody(t, r, 0, "--json", "finish", "--archive", id), "finish")
			plan := filepath.Join(r.Root, "plan.json")
			if it := clitest.PlanItem(t, clitest.PlanTo(t, r, plan, 0), id); it.Action != machine.ActionRemove {
				t.Fatalf("plan: %+v", it)
			}
			killed := clitest.RunBin(t, clitest.FailpointBin(), r, r.Dir, []string{"CUSTODY_FAILPOINT=" + point}, "apply", plan)
			if killed.Code != -1 {
				t.Fatalf("apply was not killed at %s:\n%s", point, killed)
			}
			clitest.MustCustody(t, r, 0, "resume")
			if got := clitest.ListRecord(t, r, id).State; got != machine.StateTombstoned {
				t.Fatalf("after %s and resume: %s is %s, want tombstoned", point, id, got)
			}
			if _, err := os.Lstat(wt); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("after %s and resume the tree is still there: %v", point, err)
			}
			if st := arState(t, r, res.Archives[0].ID); st != machine.StateFinished {
				t.Errorf("after %s and resume the archive is %s, want finished (the sole copy)", point, st)
			}
			dst := filepath.Join(t.TempDir(), "restored")
			clitest.MustCustody(t, r, 0, "archive", "restore", res.Archives[0].ID, dst)
			if diff := cmp.Diff(before, clitest.SnapDisk(t, dst)); diff != "" {
				t.Errorf("restored after %s (-archived +restored):\n%s", point, diff)
			}
		})
	}
}

// arState reads archive id's state from the repository's store.
func arState(t testing.TB, r *fixtures.Repo, id string) machine.State {
	t.Helper()
	s, err := store.Open(filepath.Join(r.Dir, ".git", "custody", "state.db"), 5*time.Second, false)
	if err != nil {
		t.Fatal(err)
	}
	a, err := store.Load[machine.Archive](s, machine.KindArchive, id)
	if err != nil {
		t.Fatal(err)
	}
	return a.State
}

// arVerify runs archive verify --json of ref.
func arVerify(t *testing.T, r *fixtures.Repo, ref string) archive.ArchiveCheck {
	t.Helper()
	res := clitest.Custody(t, r, "--json", "archive", "verify", ref)
	return clitest.DecodeResult[archive.ArchiveCheck](t, res, "archive verify")
}

// arCodes lists the codes of c's problems.
func arCodes(c archive.ArchiveCheck) []string {
	var out []string
	for _, p := range c.Problems {
		out = append(out, string(p.Code))
	}
	return out
}

// mustRead reads the file at p.
func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
