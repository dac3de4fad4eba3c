//go:build unix

package vanished

// Trees deleted outside custody (rm -rf, then git worktree prune) settle
// whatever their record's state (decision 0226): the resource is destroyed
// exactly once whichever command gets there first and however often the
// commands run again, the record settles with a journal entry saying what
// was proven of the tree's commits, the branch stays unless its tip is
// proven, and every retry printed on the way works when pasted. Helpers
// carry the prefix vs.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/store"
)

// vsVanish deletes the tree at path as a person does outside custody.
func vsVanish(t testing.TB, w *clitest.World, path string) {
	t.Helper()
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
	w.R.Git("worktree", "prune")
}

// vsPaste runs retry as a person pastes it: sh -c in the main checkout,
// custody first on PATH.
func vsPaste(t testing.TB, r *fixtures.Repo, retry string) clitest.Result {
	t.Helper()
	res := clitest.RunBin(t, "sh", r, r.Dir, []string{clitest.PathEnv(filepath.Dir(clitest.Bin()))}, "-c", retry)
	t.Logf("pasted %q:\n%s", retry, res)
	if res.Code != 0 {
		t.Errorf("the pasted retry %q failed:\n%s", retry, res)
	}
	return res
}

// vsPlan plans into file and returns the plan.
func vsPlan(t testing.TB, w *clitest.World, file string) machine.Plan {
	t.Helper()
	return clitest.DecodeResult[machine.Plan](t, clitest.MustCustody(t, w.R, 0, "plan", "--json", "-o", file), "plan")
}

// vsApply applies file and returns what apply did, by item id.
func vsApply(t testing.TB, w *clitest.World, file string, want int) map[string]steps.Outcome {
	t.Helper()
	res := clitest.DecodeResult[steps.ApplyResult](t, clitest.MustCustody(t, w.R, want, "apply", file, "--json"), "apply")
	out := map[string]steps.Outcome{}
	for _, o := range res.Items {
		out[o.ID] = o
	}
	return out
}

// vsSettledEntry returns the journal's settled entry of record id; the
// journal verifies on the way.
func vsSettledEntry(t testing.TB, w *clitest.World, id string) store.Entry {
	t.Helper()
	var found []store.Entry
	for _, e := range w.Journal(t) {
		if e.Record == id && e.Trigger == string(machine.TriggerSettled) {
			found = append(found, e)
		}
	}
	if len(found) != 1 {
		t.Fatalf("the journal holds %d settled entries of %s, want 1", len(found), id)
	}
	return found[0]
}

// vsSettled checks that id is tombstoned as settled, with a settlement in
// its evidence, and returns the record.
func vsSettled(t testing.TB, w *clitest.World, id string) machine.Record {
	t.Helper()
	rec := clitest.ShowRecord(t, w.R, id).Record
	if rec.State != machine.StateTombstoned || rec.Evidence.Outcome != string(machine.OutcomeSettled) || rec.Evidence.Settlement == nil || rec.Intent != nil {
		t.Fatalf("%s is %s with outcome %q, settlement %+v, intent %+v; want tombstoned, settled", id, rec.State, rec.Evidence.Outcome, rec.Evidence.Settlement, rec.Intent)
	}
	return rec
}

// vsQuiet runs every command that could act on the tree twice more and
// checks that nothing more is destroyed and nothing of id comes back.
func vsQuiet(t testing.TB, w *clitest.World, id, handle, planFile string) {
	t.Helper()
	for range 2 {
		clitest.MustCustody(t, w.R, 0, "resource", "gc")
		clitest.MustCustody(t, w.R, 0, "resource", "gc", "--dry-run")
		p := vsPlan(t, w, filepath.Join(w.R.Root, "again.json"))
		if _, ok := p.Item(id); ok {
			t.Errorf("plan lists %s again", id)
		}
		if _, ok := p.Item(id + "/db"); ok {
			t.Errorf("plan lists %s/db again", id)
		}
		if planFile != "" {
			clitest.MustCustody(t, w.R, 0, "apply", planFile)
		}
		clitest.MustCustody(t, w.R, 0, "apply", filepath.Join(w.R.Root, "again.json"))
		clitest.MustCustody(t, w.R, 0, "resume")
	}
	if n := vsCount(w.LogLines(t), "destroy "+handle); n != 1 {
		t.Errorf("%s destroyed %d times, want exactly once: %q", handle, n, w.LogLines(t))
	}
	if w.Exists(t, handle) {
		t.Errorf("%s still exists", handle)
	}
	w.NoIntents(t)
	clitest.MustCustody(t, w.R, 0, "doctor")
}

// TestVanishedActiveTreeSettles: an active tree deleted and pruned outside
// custody, with a resource. Whether resource gc or plan and apply get there
// first, the resource is destroyed once, the record settles (its base
// commit, which its branch still points at, is published: the branch goes)
// with a journal entry saying so, and plan no longer counts it as active.
// A live neighbour and its resource are left alone.
func TestVanishedActiveTreeSettles(t *testing.T) {
	t.Parallel()
	for _, first := range []string{"gc", "plan"} {
		t.Run(first+"-first", func(t *testing.T) {
			t.Parallel()
			w := clitest.SetupResources(t, clitest.ResourceDecl("db", "", ""), fixtures.Options{})
			gone, live := w.New(t, "gone"), w.New(t, "live")
			h, hl := w.Handle(gone.ID, "db"), w.Handle(live.ID, "db")
			vsVanish(t, w, gone.Path)

			if first == "gc" {
				dry := w.GC(t, 0, true)
				if got := strings.Join(vsGCOutcomes(dry), ", "); got != gone.ID+"/db would-reclaim, "+live.ID+"/db kept worktree-live" {
					t.Errorf("gc --dry-run: %s", got)
				}
				g := w.GC(t, 0, false)
				if got := strings.Join(vsGCOutcomes(g), ", "); got != gone.ID+"/db destroyed, "+live.ID+"/db kept worktree-live" {
					t.Errorf("gc: %s", got)
				}
				if n := vsCount(w.LogLines(t), "destroy "+h); n != 1 {
					t.Fatalf("gc destroyed %s %d times", h, n)
				}
			}

			file := filepath.Join(w.R.Root, "plan.json")
			p := vsPlan(t, w, file)
			it := clitest.PlanItem(t, p, gone.ID)
			s := it.Settlement
			if it.Action != machine.ActionSettle || s == nil || it.Proof == nil {
				t.Fatalf("plan: %s %+v %+v, want settle with a proof", it.Action, it.Refusals, s)
			}
			if s.LastKnownFrom != machine.LastKnownBaseCommit || s.Head != s.LastKnown || !s.Proven || !s.WorkProven || s.Branch != machine.SettleBranchDelete {
				t.Errorf("settlement %+v: want the base commit, which the branch holds, proven and the branch deleted", s)
			}
			if _, ok := p.Item(gone.ID + "/db"); ok != (first == "plan") {
				t.Errorf("plan lists %s/db as an orphan: %v", gone.ID, ok)
			}
			human := clitest.MustCustody(t, w.R, 0, "plan")
			// Its text wraps within 80 columns: read it as words.
			flat := strings.Join(strings.Fields(human.Stdout), " ")
			if !strings.Contains(flat, "0 to remove, 1 to settle (deleted outside custody)") || !strings.Contains(flat, ", 1 active, ") ||
				!strings.Contains(flat, "work proven, ancestry:") || !strings.Contains(flat, "branch custody/"+gone.ID+" deleted") {
				t.Errorf("human plan does not show the settlement, or counts the vanished tree as active:\n%s", human.Stdout)
			}

			out := vsApply(t, w, file, 0)
			o := out[gone.ID]
			if o.Outcome != machine.OutcomeSettled || o.Branch == nil || o.Branch.Outcome != machine.BranchDeleted {
				t.Errorf("apply: %+v (branch %+v), want settled with the branch deleted", o, o.Branch)
			}
			if tip := w.R.BranchTip("custody/" + gone.ID); tip != "" {
				t.Errorf("branch custody/%s survived at %s", gone.ID, tip)
			}
			rec := vsSettled(t, w, gone.ID)
			if rec.Evidence.BranchOutcome != machine.BranchDeleted || rec.Evidence.Proof == nil || !rec.Evidence.Settlement.WorkProven {
				t.Errorf("evidence %+v", rec.Evidence)
			}
			e := vsSettledEntry(t, w, gone.ID)
			for _, want := range []string{"settled: its tree was deleted outside custody", "custody never saw its final HEAD", "branch custody/" + gone.ID + " deleted"} {
				if !strings.Contains(e.Outcome, want) {
					t.Errorf("journal outcome %q does not say %q", e.Outcome, want)
				}
			}
			if e.Proof == nil || e.From != "removing" || e.To != "tombstoned" {
				t.Errorf("settled entry %+v", e)
			}
			p = vsPlan(t, w, filepath.Join(w.R.Root, "after.json"))
			if _, ok := p.Item(gone.ID); ok {
				t.Errorf("plan still lists %s", gone.ID)
			}
			if it := clitest.PlanItem(t, p, live.ID); it.Refusal == nil || it.Refusal.Code != machine.CodeNotFinished {
				t.Errorf("the live neighbour: %+v", it)
			}
			vsQuiet(t, w, gone.ID, h, file)
			if !w.Exists(t, hl) || vsCount(w.LogLines(t), "destroy "+hl) != 0 {
				t.Errorf("the live neighbour's resource %s was destroyed", hl)
			}
		})
	}
}

// TestVanishedTreeMembers: the other members of the class. A tree whose
// path something else now holds, or which git still registers, is not
// settled and its resource is kept, with retries that, pasted once the
// person has done what they say, settle it. Unpushed commits on the
// branch keep the branch, and the record says nothing proved them. A tree
// deleted before finish whose branch is gone is settled on its base
// commit, and the record says only that commit was proven. A finished
// tree settles like an active one. A live lease keeps it until it expires.
func TestVanishedTreeMembers(t *testing.T) {
	t.Parallel()
	t.Run("path-occupied", func(t *testing.T) {
		t.Parallel()
		w := clitest.SetupResources(t, clitest.ResourceDecl("db", "", ""), fixtures.Options{})
		made := w.New(t, "occupied")
		h := w.Handle(made.ID, "db")
		vsVanish(t, w, made.Path)
		w.R.WriteFile(made.Path, "notes.txt", "someone else's\n") // an unrelated directory
		var retry string
		for _, dry := range []bool{true, false} {
			g := w.GC(t, 0, dry)
			if len(g.Items) != 1 || g.Items[0].Refusal == nil || g.Items[0].Refusal.Code != machine.CodeWorktreeLive ||
				!strings.Contains(g.Items[0].Refusal.Message, "still present") {
				t.Fatalf("gc dry=%v: %+v, want kept worktree-live (still present)", dry, g.Items)
			}
			retry = g.Items[0].Refusal.Retry
		}
		p := vsPlan(t, w, filepath.Join(w.R.Root, "p.json"))
		if it := clitest.PlanItem(t, p, made.ID); it.Action != machine.ActionKeep || it.Settlement != nil {
			t.Errorf("plan: %s %+v, want the record kept", it.Action, it.Refusals)
		}
		clitest.MustCustody(t, w.R, 0, "apply", filepath.Join(w.R.Root, "p.json"))
		if rec := clitest.ShowRecord(t, w.R, made.ID).Record; rec.State != machine.StateActive {
			t.Errorf("%s is %s, want active", made.ID, rec.State)
		}
		if b, err := os.ReadFile(filepath.Join(made.Path, "notes.txt")); err != nil || string(b) != "someone else's\n" {
			t.Errorf("the directory at the path was touched: %q %v", b, err)
		}
		w.WantLog(t, "create "+h)
		// The person moves it away; the retry as printed then reclaims.
		if err := os.Rename(made.Path, made.Path+".mine"); err != nil {
			t.Fatal(err)
		}
		vsPaste(t, w.R, retry)
		w.WantLog(t, "create "+h, "destroy "+h)
		file := filepath.Join(w.R.Root, "p2.json")
		if it := clitest.PlanItem(t, vsPlan(t, w, file), made.ID); it.Action != machine.ActionSettle {
			t.Fatalf("plan after the directory moved: %s %+v", it.Action, it.Refusals)
		}
		clitest.MustCustody(t, w.R, 0, "apply", file)
		vsSettled(t, w, made.ID)
		vsQuiet(t, w, made.ID, h, file)
	})

	t.Run("still-registered", func(t *testing.T) {
		t.Parallel()
		w := clitest.SetupResources(t, clitest.ResourceDecl("db", "", ""), fixtures.Options{})
		made := w.New(t, "registered")
		h := w.Handle(made.ID, "db")
		if err := os.RemoveAll(made.Path); err != nil { // not pruned
			t.Fatal(err)
		}
		g := w.GC(t, 0, false)
		unregister := machine.Command("git", "worktree", "remove", made.Path)
		if len(g.Items) != 1 || g.Items[0].Refusal == nil || g.Items[0].Refusal.Code != machine.CodeWorktreeLive || g.Items[0].Refusal.Retry != unregister {
			t.Fatalf("gc: %+v, want kept worktree-live, retry %s", g.Items, unregister)
		}
		it := clitest.PlanItem(t, vsPlan(t, w, filepath.Join(w.R.Root, "p.json")), made.ID)
		if it.Action != machine.ActionKeep || it.Refusal == nil || it.Refusal.Code != machine.CodeWorktreeMissing || it.Refusal.Retry != unregister {
			t.Fatalf("plan: %s %+v, want kept worktree-missing, retry %s", it.Action, it.Refusal, unregister)
		}
		w.WantLog(t, "create "+h)
		vsPaste(t, w.R, it.Refusal.Retry)
		file := filepath.Join(w.R.Root, "p2.json")
		if it := clitest.PlanItem(t, vsPlan(t, w, file), made.ID); it.Action != machine.ActionSettle {
			t.Fatalf("plan after the pasted prune: %s %+v", it.Action, it.Refusals)
		}
		clitest.MustCustody(t, w.R, 0, "apply", file)
		vsSettled(t, w, made.ID)
		vsQuiet(t, w, made.ID, h, file)
	})

	t.Run("unpushed-commits", func(t *testing.T) {
		t.Parallel()
		w := clitest.SetupResources(t, clitest.ResourceDecl("db", "", ""), fixtures.Options{})
		made := w.New(t, "unpushed")
		h := w.Handle(made.ID, "db")
		tip := w.R.Commit(made.Path, "mine.txt", "only here\n")
		vsVanish(t, w, made.Path)
		file := filepath.Join(w.R.Root, "p.json")
		it := clitest.PlanItem(t, vsPlan(t, w, file), made.ID)
		s := it.Settlement
		if it.Action != machine.ActionSettle || s == nil || it.Proof != nil || s.Proven || s.WorkProven || s.Head != tip || s.Branch != machine.SettleBranchKeep {
			t.Fatalf("plan: %s %+v %+v, want settle on the unproven tip %s with the branch kept", it.Action, it.Refusals, s, tip)
		}
		out := vsApply(t, w, file, 0)
		if o := out[made.ID]; o.Outcome != machine.OutcomeSettled || o.Branch == nil || o.Branch.Outcome != machine.BranchKept ||
			!strings.Contains(o.Branch.Reason, "unproven commits") {
			t.Errorf("apply: %+v (branch %+v), want settled with the branch kept", o, o.Branch)
		}
		if got := w.R.BranchTip("custody/" + made.ID); got != tip {
			t.Errorf("branch custody/%s is at %q, want %s: it holds the only copy", made.ID, got, tip)
		}
		rec := vsSettled(t, w, made.ID)
		if rec.Evidence.Proof != nil || rec.Evidence.Settlement.Proven || rec.Evidence.BranchOutcome != machine.BranchKept {
			t.Errorf("the record claims a proof: %+v", rec.Evidence)
		}
		e := vsSettledEntry(t, w, made.ID)
		for _, want := range []string{"nothing proves " + tip[:12], "branch custody/" + made.ID + " kept at " + tip[:12]} {
			if !strings.Contains(e.Outcome, want) {
				t.Errorf("journal outcome %q does not say %q", e.Outcome, want)
			}
		}
		if e.Proof != nil {
			t.Errorf("the settled entry carries a proof: %+v", e.Proof)
		}
		vsQuiet(t, w, made.ID, h, file)
		if got := w.R.BranchTip("custody/" + made.ID); got != tip {
			t.Errorf("branch custody/%s is at %q after the reruns, want %s", made.ID, got, tip)
		}
	})

	t.Run("finished-after-vanishing-branch-deleted", func(t *testing.T) {
		t.Parallel()
		// Deleted before finish, then finished (no final HEAD to record),
		// and its branch deleted by hand: only the base commit can be
		// proven, and the record must not say the tree's work was.
		w := clitest.SetupResources(t, clitest.ResourceDecl("db", "", ""), fixtures.Options{})
		made := w.New(t, "early")
		h := w.Handle(made.ID, "db")
		w.R.Commit(made.Path, "mine.txt", "lost with the branch\n")
		vsVanish(t, w, made.Path)
		clitest.MustCustody(t, w.R, 0, "finish", made.ID)
		w.R.Git("branch", "-D", "custody/"+made.ID)
		file := filepath.Join(w.R.Root, "p.json")
		it := clitest.PlanItem(t, vsPlan(t, w, file), made.ID)
		s := it.Settlement
		if it.Action != machine.ActionSettle || s == nil || !s.Proven || s.WorkProven || s.LastKnownFrom != machine.LastKnownBaseCommit || s.Branch != machine.SettleBranchAbsent {
			t.Fatalf("plan: %s %+v %+v, want settle with only the base commit proven", it.Action, it.Refusals, s)
		}
		human := clitest.MustCustody(t, w.R, 0, "plan")
		if flat := strings.Join(strings.Fields(human.Stdout), " "); !strings.Contains(flat, "only its base commit proven") || strings.Contains(flat, "work proven") {
			t.Errorf("human plan claims more than the base commit:\n%s", human.Stdout)
		}
		out := vsApply(t, w, file, 0)
		if o := out[made.ID]; o.Outcome != machine.OutcomeSettled {
			t.Errorf("apply: %+v", o)
		}
		rec := vsSettled(t, w, made.ID)
		if rec.Evidence.Settlement.WorkProven || rec.Evidence.Outcome == string(machine.OutcomeRemoved) {
			t.Errorf("the record claims the tree's work proven: %+v", rec.Evidence)
		}
		e := vsSettledEntry(t, w, made.ID)
		for _, want := range []string{"only that base commit is proven published", "not the tree's own work"} {
			if !strings.Contains(e.Outcome, want) {
				t.Errorf("journal outcome %q does not say %q", e.Outcome, want)
			}
		}
		vsQuiet(t, w, made.ID, h, file)
	})

	t.Run("finished-published", func(t *testing.T) {
		t.Parallel()
		w := clitest.SetupResources(t, clitest.ResourceDecl("db", "", ""), fixtures.Options{})
		made := w.New(t, "done")
		h := w.Handle(made.ID, "db")
		head := w.R.Commit(made.Path, "done.txt", "published\n")
		w.R.Push(made.Path, "topic/done")
		clitest.MustCustody(t, w.R, 0, "finish", made.ID)
		vsVanish(t, w, made.Path)
		file := filepath.Join(w.R.Root, "p.json")
		it := clitest.PlanItem(t, vsPlan(t, w, file), made.ID)
		s := it.Settlement
		if it.Action != machine.ActionSettle || s == nil || !s.WorkProven || s.LastKnownFrom != machine.LastKnownFinalHead || s.Head != head || s.Branch != machine.SettleBranchDelete {
			t.Fatalf("plan: %s %+v %+v, want settle with the final HEAD proven", it.Action, it.Refusals, s)
		}
		out := vsApply(t, w, file, 0)
		if o := out[made.ID]; o.Outcome != machine.OutcomeSettled || o.Branch == nil || o.Branch.Outcome != machine.BranchDeleted || o.Branch.Commit != head {
			t.Errorf("apply: %+v (branch %+v)", o, o.Branch)
		}
		vsSettled(t, w, made.ID)
		vsQuiet(t, w, made.ID, h, file)
	})

	t.Run("interrupted-create", func(t *testing.T) {
		t.Parallel()
		// A create killed before it ran, for a tree that then vanished:
		// resume undoes it (the frozen destroy) and never makes it again.
		w := clitest.SetupResources(t, clitest.ResourceDecl("db", "", ""), fixtures.Options{})
		path := filepath.Join(w.R.Root, "adopted")
		w.R.Git("worktree", "add", "-q", "-b", "adopted", path)
		id := clitest.DecodeResult[steps.NewResult](t, clitest.MustCustody(t, w.R, 0, "adopt", path, "--json"), "adopt").ID
		h := w.Handle(id, "db")
		w.Killed(t, "resource/after-create-intent", "resource", "ensure", id)
		if e := w.Entry(t, id+"/db"); e.State != machine.StateProvisioning || e.Intent == nil {
			t.Fatalf("the create intent was not durable before the kill: %+v", e)
		}
		vsVanish(t, w, path)
		clitest.MustCustody(t, w.R, 0, "resume")
		w.WantLog(t, "destroy "+h)
		if e := w.Entry(t, id+"/db"); e.State != machine.StateTombstoned {
			t.Errorf("entry is %s after resume, want tombstoned", e.State)
		}
		file := filepath.Join(w.R.Root, "p.json")
		it := clitest.PlanItem(t, vsPlan(t, w, file), id)
		if it.Action != machine.ActionSettle || it.Settlement == nil || it.Settlement.Branch != machine.SettleBranchKeep || it.Settlement.BranchReason != machine.BranchNotCreated {
			t.Fatalf("plan: %s %+v %+v, want settle keeping the branch custody did not make", it.Action, it.Refusals, it.Settlement)
		}
		clitest.MustCustody(t, w.R, 0, "apply", file)
		vsSettled(t, w, id)
		if tip := w.R.BranchTip("adopted"); tip == "" {
			t.Error("the adopted tree's branch, which custody did not make, was deleted")
		}
		vsQuiet(t, w, id, h, file)
		if n := vsCount(w.LogLines(t), "create "+h); n != 0 {
			t.Errorf("%s created %d times for a vanished tree", h, n)
		}
	})

	t.Run("live-lease", func(t *testing.T) {
		t.Parallel()
		w := clitest.SetupResources(t, clitest.ResourceDecl("db", "", ""), fixtures.Options{})
		made := w.New(t, "leased")
		h := w.Handle(made.ID, "db")
		clitest.PutLeases(t, w.R, machine.Lease{Record: made.ID, Holder: "agent-1", Expires: time.Now().Add(time.Hour)})
		vsVanish(t, w, made.Path)
		var retry string
		for _, dry := range []bool{true, false} {
			g := w.GC(t, 0, dry)
			if len(g.Items) != 1 || g.Items[0].Refusal == nil || g.Items[0].Refusal.Code != machine.CodeLeaseLive ||
				!strings.Contains(g.Items[0].Refusal.Message, "agent-1") {
				t.Fatalf("gc dry=%v: %+v, want kept lease-live", dry, g.Items)
			}
			retry = g.Items[0].Refusal.Retry
		}
		file := filepath.Join(w.R.Root, "p.json")
		p := vsPlan(t, w, file)
		if it := clitest.PlanItem(t, p, made.ID); it.Action != machine.ActionKeep || it.Refusal == nil || it.Refusal.Code != machine.CodeLeaseLive {
			t.Errorf("plan: %s %+v, want kept lease-live", it.Action, it.Refusal)
		}
		if _, ok := p.Item(made.ID + "/db"); ok {
			t.Errorf("plan lists the leased tree's resource as an orphan")
		}
		clitest.MustCustody(t, w.R, 0, "apply", file)
		if rec := clitest.ShowRecord(t, w.R, made.ID).Record; rec.State != machine.StateActive {
			t.Errorf("%s is %s under a live lease, want active", made.ID, rec.State)
		}
		w.WantLog(t, "create "+h)
		// The session ends (its lease expires): the retry as printed reclaims.
		clitest.PutLeases(t, w.R, machine.Lease{Record: made.ID, Holder: "agent-1", Expires: time.Now().Add(-time.Minute)})
		vsPaste(t, w.R, retry)
		w.WantLog(t, "create "+h, "destroy "+h)
		file = filepath.Join(w.R.Root, "p2.json")
		if it := clitest.PlanItem(t, vsPlan(t, w, file), made.ID); it.Action != machine.ActionSettle {
			t.Fatalf("plan after the lease expired: %s %+v", it.Action, it.Refusals)
		}
		clitest.MustCustody(t, w.R, 0, "apply", file)
		vsSettled(t, w, made.ID)
		vsQuiet(t, w, made.ID, h, file)
	})
}

// TestVanishedSettleCrash: apply killed at each point of a settlement
// (after its intent, after the branch, before its completion, after a
// resource's destroy intent) is taken up by resume, or by the same apply
// run again, to the uninterrupted outcome: the record settled, its branch
// deleted, its resource destroyed exactly once, no intent left.
func TestVanishedSettleCrash(t *testing.T) {
	t.Parallel()
	for _, point := range []string{"apply/after-intent", "apply/after-branch", "apply/before-complete", "resource/after-destroy-intent"} {
		for _, next := range []string{"resume", "apply"} {
			t.Run(point+"/"+next, func(t *testing.T) {
				t.Parallel()
				w := clitest.SetupResources(t, clitest.ResourceDecl("db", "", ""), fixtures.Options{})
				made := w.New(t, "crash")
				h := w.Handle(made.ID, "db")
				vsVanish(t, w, made.Path)
				file := filepath.Join(w.R.Root, "p.json")
				if it := clitest.PlanItem(t, vsPlan(t, w, file), made.ID); it.Action != machine.ActionSettle {
					t.Fatalf("plan: %s %+v", it.Action, it.Refusals)
				}
				w.Killed(t, point, "apply", file)
				if n := vsCount(w.LogLines(t), "destroy "+h); n != 0 {
					t.Fatalf("killed at %s, %s was already destroyed %d times", point, h, n)
				}
				switch next {
				case "resume":
					clitest.MustCustody(t, w.R, 0, "resume")
				case "apply":
					clitest.MustCustody(t, w.R, 0, "apply", file)
				}
				rec := vsSettled(t, w, made.ID)
				if rec.Evidence.BranchOutcome != machine.BranchDeleted {
					t.Errorf("branch outcome %q (%s), want deleted", rec.Evidence.BranchOutcome, rec.Evidence.BranchReason)
				}
				if tip := w.R.BranchTip("custody/" + made.ID); tip != "" {
					t.Errorf("branch custody/%s survived at %s", made.ID, tip)
				}
				vsSettledEntry(t, w, made.ID)
				vsQuiet(t, w, made.ID, h, file)
			})
		}
	}
}

// vsCount is how many of lines are line.
func vsCount(lines []string, line string) int {
	n := 0
	for _, l := range lines {
		if l == line {
			n++
		}
	}
	return n
}

// vsGCOutcomes reduces GC items to "id outcome [code]".
func vsGCOutcomes(g clitest.GCResult) []string {
	var out []string
	for _, it := range g.Items {
		s := it.ID + " " + string(it.Outcome)
		if it.Refusal != nil {
			s += " " + string(it.Refusal.Code)
		}
		out = append(out, s)
	}
	return out
}
