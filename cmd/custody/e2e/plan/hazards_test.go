package plan

// The hazard tables, end to end: every hazard fixtures.Hazards and
// fixtures.MoreHazards build is put into a finished, otherwise removable
// tree beside a removable neighbour, against real git, and custody must
// keep it with exactly its refusal codes while the neighbour goes. They stay
// in Go because they loop over the fixtures package's generated states (the
// one definition of each hazard, which a script cannot call); the CLI
// contract itself (exit codes, the kept lines and their retry line, --json
// envelopes, bad input) is in cmd/custody/e2e/scripts/*/testdata/script, with a
// plan_kept_<hazard>.txtar for the human form of a representative few.
// Every helper here is prefixed e2e so it cannot collide with the other
// test files of this package.

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/google/go-cmp/cmp"
)

func TestE2EHazardsAreKept(t *testing.T) {
	t.Parallel()
	for _, h := range fixtures.Hazards() {
		t.Run(h.Name, func(t *testing.T) {
			t.Parallel()
			r := clitest.InitRepoWith(t, fixtures.Options{})
			// A tree that is removable but for the hazard: its own
			// commit is published on a topic branch.
			id, path := clitest.MergedTree(t, r, "hazard", "topic/hazard")
			// A removable neighbour, in the same plan.
			okID, okPath := clitest.MergedTree(t, r, "neighbour", "topic/neighbour")
			h.Make(r, path)
			before := clitest.SnapKept(r, id, path)

			file := filepath.Join(r.Root, "p.json")
			p := clitest.PlanTo(t, r, file, 0) // a kept tree is the plan's result: exit 0
			it := clitest.PlanItem(t, p, id)
			if it.Action != "keep" || it.Refusal == nil {
				t.Fatalf("hazard tree not kept: %+v", it)
			}
			if string(it.Refusal.Code) != h.Code {
				t.Errorf("refusal code %q, want %q (%s)", it.Refusal.Code, h.Code, it.Refusal.Message)
			}
			codes := clitest.RefusalCodes(it.Refusals)
			if !cmp.Equal(codes, []string{h.Code}) {
				t.Errorf("refusals %v, want exactly [%s]", codes, h.Code)
			}
			if it.Refusal.Path != path || it.Refusal.Message == "" || it.Refusal.Retry == "" {
				t.Errorf("refusal does not name the path, a reason and a retry: %+v", it.Refusal)
			}
			if it.Proof != nil {
				t.Errorf("kept item carries a proof: %v", it.Proof)
			}
			if n := clitest.PlanItem(t, p, okID); n.Action != "remove" {
				t.Fatalf("neighbour not removable: %+v", n)
			}
			// plan wrote nothing.
			clitest.AssertKept(t, r, id, path, before, before.Refs)

			a := clitest.ApplyFile(t, r, file, 0)
			if len(a.Items) != 1 || a.Items[0].ID != okID || a.Items[0].Outcome != "removed" {
				t.Errorf("apply acted on %+v, want only %s removed", a.Items, okID)
			}
			if a.Kept != 1 {
				t.Errorf("apply kept %d, want 1", a.Kept)
			}
			clitest.AssertRemovedWithBranch(t, r, okID, okPath)
			clitest.AssertKept(t, r, id, path, before, clitest.DropRefLine(before.Refs, "refs/heads/custody/"+okID))
			if st := clitest.State(t, r, id); st != "finished" {
				t.Errorf("hazard record is %s, want finished", st)
			}
		})
	}
}

// TestE2ENoRemote: with no remote at all nothing can prove work published;
// plan (and apply) refuse as a whole with no-remote, exit 1, and change
// nothing.
// TestE2ERemoteRemovedAfterPlan: a plan made while origin existed is not
// carried out once the repository has no remote.
// TestE2EEnvelopeCommandNames checks the envelope's "command" is the
// command's name (DESIGN §9: "command":"plan"), not kong's usage syntax.
// TestE2EApplyItemsIsAnArray checks apply's result lists its items as a
// JSON array even when the plan removes nothing (list and resume do).
// TestE2EChdirRelativePlanFile: -C DIR is documented as "Run as if custody
// was started in DIR", so a relative plan file is DIR's, as with git -C.
// TestE2EMoreHazardsAreKept: states beyond the core hazards (the tree
// vanished or was replaced, ownership evidence broke, an operation or
// hidden state) are kept with their codes, untouched, while a removable
// neighbour in the same plan goes.
func TestE2EMoreHazardsAreKept(t *testing.T) {
	t.Parallel()
	for _, h := range fixtures.MoreHazards() {
		t.Run(h.Name, func(t *testing.T) {
			t.Parallel()
			r := clitest.InitRepoWith(t, fixtures.Options{})
			id, path := clitest.MergedTree(t, r, "hazard", "topic/hazard")
			okID, okPath := clitest.MergedTree(t, r, "neighbour", "topic/neighbour")
			h.Make(r, path)
			snap := func() fixtures.Snapshot {
				if h.Gone {
					if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
						t.Errorf("%s: %v, want absent", path, err)
					}
					return nil
				}
				s := r.Snap(path)
				if real, err := filepath.EvalSymlinks(path); err == nil && real != path {
					for k, v := range r.Snap(real) {
						s["->"+k] = v
					}
				}
				return s
			}
			admin := filepath.Join(r.Dir, ".git", "worktrees", id)
			tree, adm, refs := snap(), r.Snap(admin), r.Refs()

			file := filepath.Join(r.Root, "p.json")
			p := clitest.PlanTo(t, r, file, 0)
			it := clitest.PlanItem(t, p, id)
			codes := clitest.RefusalCodes(it.Refusals)
			if it.Action != "keep" || it.Refusal == nil || string(it.Refusal.Code) != h.Codes[0] || !cmp.Equal(codes, h.Codes) {
				t.Errorf("hazard tree: action %s, refusals %v, want keep with %v", it.Action, codes, h.Codes)
			}
			if n := clitest.PlanItem(t, p, okID); n.Action != "remove" {
				t.Fatalf("neighbour not removable: %+v", n)
			}
			a := clitest.ApplyFile(t, r, file, 0)
			if len(a.Items) != 1 || a.Items[0].ID != okID || a.Items[0].Outcome != "removed" {
				t.Errorf("apply acted on %+v, want only %s removed", a.Items, okID)
			}
			clitest.AssertRemovedWithBranch(t, r, okID, okPath)
			if d := tree.Diff(snap()); d != "" {
				t.Errorf("kept tree changed:\n%s", d)
			}
			if d := adm.Diff(r.Snap(admin)); d != "" {
				t.Errorf("kept tree's admin dir changed:\n%s", d)
			}
			if got, want := r.Refs(), clitest.DropRefLine(refs, "refs/heads/custody/"+okID); got != want {
				t.Errorf("refs changed:\n%s", cmp.Diff(want, got))
			}
			if !slices.Contains(clitest.Worktrees(t, r), path) {
				t.Errorf("kept tree %s is no longer registered", path)
			}
			if st := clitest.State(t, r, id); st != "finished" {
				t.Errorf("hazard record is %s, want finished", st)
			}
		})
	}
}
