package crash

// Crash safety (DESIGN §4 Resume, §10): for every named failpoint, a
// failpoint build of custody is SIGKILLed there; the ordinary binary then
// resumes and carries on, and the end state must equal an uninterrupted
// run's (or, where the resume rules say so, a complete discard), with no
// intent left, a clean doctor and a journal that verifies.
//
// Helpers shared with concurrency_test.go carry the prefix cs so they do not
// collide with other test files of this package.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
	"github.com/google/go-cmp/cmp"
)

// csNewOutcome says what resume must make of a `custody new` killed at each
// new/* failpoint (DESIGN §4: provisioning + exact tree exists → activate,
// nothing exists → tombstone).
var csNewOutcome = map[string]string{
	"new/after-intent":    "discarded", // the intent is durable, git never ran
	"new/after-add":       "activated", // git made the tree; the marker is missing
	"new/after-marker":    "activated",
	"new/before-complete": "activated",
}

func TestCrash(t *testing.T) {
	points := steps.Failpoints()
	if len(points) == 0 {
		t.Fatal("steps.Failpoints() lists no failpoints")
	}
	seen := map[string]bool{}
	for _, p := range points {
		if seen[p] {
			t.Errorf("failpoint %q is listed twice", p)
		}
		seen[p] = true
	}
	// The uninterrupted runs every crashed run is compared with.
	var newBase clitest.TreeEnd
	var applyBase csApplyEnd
	t.Run("baseline", func(t *testing.T) {
		t.Run("new", func(t *testing.T) {
			t.Parallel()
			newBase = csUninterruptedNew(t)
		})
		t.Run("apply", func(t *testing.T) {
			t.Parallel()
			applyBase = csUninterruptedApply(t)
		})
	})
	if t.Failed() {
		t.FailNow()
	}
	for _, point := range points {
		if strings.HasPrefix(point, "resource/") {
			continue // TestResourceCrash in e2e/resource kills at these points
		}
		if strings.HasPrefix(point, "archive/") {
			continue // TestArchiveCrash in e2e/archive kills at these points
		}
		if strings.HasPrefix(point, "relocate/") {
			continue // TestRelocateCrash in relocate_crash_test.go kills at these points
		}
		if strings.HasPrefix(point, "sweep/") {
			continue // TestSweepCrash in sweep_crash_test.go kills at these points
		}
		if strings.HasPrefix(point, "land/") {
			continue // TestLandCrash in land_crash_test.go kills at these points
		}
		if !strings.HasPrefix(point, "new/") && !strings.HasPrefix(point, "apply/") {
			t.Run(point, func(t *testing.T) {
				t.Errorf("failpoint %q has no crash scenario in crash_test.go: add one", point)
			})
			continue
		}
		for _, v := range csVariants(points, point, fixtures.Full()) {
			t.Run(point+v.suffix, func(t *testing.T) {
				t.Parallel()
				switch {
				case strings.HasPrefix(point, "new/"):
					csCrashNew(t, point, v, newBase)
				case strings.HasPrefix(point, "apply/"):
					csCrashApply(t, point, v, applyBase)
				default:
					t.Fatalf("failpoint %q has no crash scenario in crash_test.go: add one", point)
				}
			})
		}
	}
}

// csVariant is how a crashed run is picked up again.
type csVariant struct {
	suffix string
	// killResumeAt: before the ordinary resume, run resume with the
	// failpoint build at each of these points in turn.
	killResumeAt []string
	// direct: skip `custody resume`; the next mutating command (the same
	// one again) must resume first on its own.
	direct bool
}

// csVariants: the plain run (resume, then carry on); the run where the
// command is simply repeated; and, when the step has later points, the run
// whose resume is itself killed at each of them. Every point gets the plain
// run. At full size (fixtures.Full) every point gets every variant; bounded,
// the two others alternate along each step's points, so each point is also
// picked up a second way and each way is tried at every other point.
func csVariants(points []string, point string, full bool) []csVariant {
	step, _, _ := strings.Cut(point, "/")
	var later []string
	for _, q := range points[slices.Index(points, point)+1:] {
		if strings.HasPrefix(q, step+"/") {
			later = append(later, q)
		}
	}
	rerun := csVariant{suffix: "/rerun-without-resume", direct: true}
	killed := csVariant{suffix: "/resume-killed", killResumeAt: later}
	if full {
		if len(later) == 0 {
			return []csVariant{{}, rerun}
		}
		return []csVariant{{}, rerun, killed}
	}
	// The point's place among its step's points decides which other way.
	nth := 0
	for _, q := range points[:slices.Index(points, point)] {
		if strings.HasPrefix(q, step+"/") {
			nth++
		}
	}
	if nth%2 == 1 && len(later) > 0 {
		return []csVariant{{}, killed}
	}
	return []csVariant{{}, rerun}
}

// csResumeOnce kills resume again where v says so, then runs the ordinary
// `custody resume --json`, which must settle id with outcome want (or find
// nothing left if a killed-again resume was not killed after all).
func csResumeOnce(t *testing.T, r *fixtures.Repo, v csVariant, point, id, want string) {
	t.Helper()
	finished := csKillResumes(t, r, v.killResumeAt)
	res := clitest.MustCustody(t, r, 0, "resume", "--json")
	items := clitest.DecodeResult[clitest.ItemsResult[steps.ResumeItem]](t, res, "resume").Items
	switch {
	case finished && len(items) != 0:
		t.Fatalf("resume after a resume that finished: want nothing to do, got\n%s", res)
	case !finished && (len(items) != 1 || items[0].ID != id || string(items[0].Outcome) != want || items[0].Refusal != nil):
		t.Fatalf("resume after the kill at %s: want %s %s, got\n%s", point, want, id, res)
	}
}

// csKillResumes runs `custody resume` with the failpoint build at each of
// points in turn, each of which either kills it (the point was reached on
// the resume path) or lets it finish (exit 0). It reports whether one
// finished, and logs the points reached.
func csKillResumes(t *testing.T, r *fixtures.Repo, points []string) (finished bool) {
	t.Helper()
	env := r.Env()
	for _, q := range points {
		res, err := clitest.RunInGoroutine(clitest.FailpointBin(), r, append(env, "CUSTODY_FAILPOINT="+q), "resume", "--json")
		if err != nil {
			t.Fatal(err)
		}
		switch res.Code {
		case -1:
			t.Logf("resume killed again at %s", q)
			continue
		case 0:
			t.Logf("resume with CUSTODY_FAILPOINT=%s finished", q)
			return true
		}
		t.Fatalf("resume with CUSTODY_FAILPOINT=%s: want SIGKILL or exit 0, got\n%s", q, res)
	}
	return false
}

// --- new ---------------------------------------------------------------

func csUninterruptedNew(t *testing.T) clitest.TreeEnd {
	r := fixtures.New(t, fixtures.Options{})
	clitest.MustCustody(t, r, 0, "init")
	head := r.Head(r.Dir)
	res := clitest.MustCustody(t, r, 0, "new", "x", "--json")
	made := clitest.DecodeResult[steps.NewResult](t, res, "new")
	end := clitest.ObserveTreeEnd(t, r, made.ID, head)
	if end.State != "active" || end.Path != "present" || end.Marker != "id" {
		t.Fatalf("an uninterrupted custody new did not make an active tree: %+v", end)
	}
	return end
}

// csDiscarded is the end state of a create that resume discarded: nothing
// exists and the record is tombstoned, without an intent.
var csDiscarded = clitest.TreeEnd{
	State: "tombstoned", Path: "absent", Registered: false, AdminEntry: "absent", Marker: "absent",
	Branch: "absent", EvidenceOutcome: "discarded", Triggers: []string{"create", "discard"},
}

func csCrashNew(t *testing.T, point string, v csVariant, base clitest.TreeEnd) {
	want, ok := csNewOutcome[point]
	if !ok {
		t.Fatalf("no expected resume outcome for failpoint %q: add it to csNewOutcome", point)
	}
	r := fixtures.New(t, fixtures.Options{})
	clitest.MustCustody(t, r, 0, "init")
	head := r.Head(r.Dir)
	refsBefore := r.Refs()

	clitest.MustBeKilled(t, r, point, "new", "x")

	// The create intent was durable before anything happened.
	recs := clitest.ListRecords(t, r, true)
	if len(recs) != 1 {
		t.Fatalf("after the kill at %s: want exactly one record, got %+v", point, recs)
	}
	id := recs[0].ID
	if recs[0].State != "provisioning" || recs[0].Intent == nil || recs[0].Intent.Kind != machine.IntentCreate {
		t.Fatalf("after the kill at %s: want a provisioning record carrying a create intent, got %+v", point, recs[0])
	}
	if recs[0].Intent.Commit != head {
		t.Errorf("create intent commit = %s, want %s", recs[0].Intent.Commit, head)
	}
	if res := clitest.Custody(t, r, "doctor"); res.Code != 3 || !strings.Contains(res.Stdout, id) {
		t.Errorf("doctor before resume must report the unfinished intent of %s with exit 3, got\n%s", id, res)
	}

	var second steps.NewResult
	if v.direct {
		// custody new resumes the interrupted create before it makes
		// its own tree.
		second = clitest.DecodeResult[steps.NewResult](t, clitest.MustCustody(t, r, 0, "new", "x", "--json"), "new")
	} else {
		csResumeOnce(t, r, v, point, id, want)
	}
	// Resume is idempotent: another one finds nothing.
	if items := clitest.DecodeResult[clitest.ItemsResult[steps.ResumeItem]](t, clitest.MustCustody(t, r, 0, "resume", "--json"), "resume").Items; len(items) != 0 {
		t.Errorf("resume after the crash was settled: want nothing to do, got %+v", items)
	}

	rec := clitest.ListRecord(t, r, id)
	if rec.Intent != nil {
		t.Fatalf("after resume: record %s still carries an intent: %+v", id, rec)
	}
	got := clitest.ObserveTreeEnd(t, r, id, head)
	expect := base
	if want == "discarded" {
		expect = csDiscarded
		var refs []string // all but the branch of the tree made since
		for _, l := range strings.Split(r.Refs(), "\n") {
			if second.ID == "" || !strings.HasSuffix(l, " refs/heads/custody/"+second.ID) {
				refs = append(refs, l)
			}
		}
		if refs := strings.Join(refs, "\n"); refs != refsBefore {
			t.Errorf("a discarded create changed the refs:\nbefore:\n%s\nafter:\n%s", refsBefore, refs)
		}
	}
	if d := cmp.Diff(expect, got); d != "" {
		t.Errorf("end state after a kill at %s and resume is not the %s end state (-want +got):\n%s", point, want, d)
	}
	clitest.Healthy(t, r)

	// Carry on with the normal flow.
	if want == "activated" {
		path := rec.Path
		commit := r.Commit(path, "work.txt", "done\n")
		r.Push(path, "main")
		clitest.MustCustody(t, r, 0, "finish", id)
		planFile := filepath.Join(r.Root, "plan.json")
		clitest.MustCustody(t, r, 0, "plan", "-o", planFile)
		ap := clitest.DecodeResult[steps.ApplyResult](t, clitest.MustCustody(t, r, 0, "apply", planFile, "--json"), "apply")
		if o := clitest.Outcomes(ap); !cmp.Equal(o, map[string]string{id: "removed"}) {
			t.Errorf("apply of the resumed tree: want %s removed, got %v", id, o)
		}
		end := clitest.ObserveTreeEnd(t, r, id, commit)
		if end.State != "tombstoned" || end.Path != "absent" || end.Registered || end.Branch != "absent" || end.AdminEntry != "absent" {
			t.Errorf("the resumed tree was not removed cleanly: %+v", end)
		}
	}
	if !v.direct {
		second = clitest.DecodeResult[steps.NewResult](t, clitest.MustCustody(t, r, 0, "new", "x", "--json"), "new")
	}
	if second.ID == id {
		t.Errorf("second custody new reused id %s", id)
	}
	if end := clitest.ObserveTreeEnd(t, r, second.ID, head); end.State != "active" || end.Path != "present" || !end.Registered || end.Marker != "id" || end.Branch != "commit" {
		t.Errorf("second custody new after the crash did not make a complete tree: %+v", end)
	}
	for _, rec := range clitest.ListRecords(t, r, true) {
		if rec.Intent != nil {
			t.Errorf("record %s still carries a %s intent", rec.ID, rec.Intent.Kind)
		}
	}
	clitest.Healthy(t, r)
}

// --- apply -------------------------------------------------------------

// csApplyScene is a repository with one merged finished tree, one finished
// tree kept for an untracked file, and a plan over both.
type csApplyScene struct {
	r                    *fixtures.Repo
	merged, mergedPath   string
	mergedHead           string
	kept, keptPath       string
	keptHead, keptBranch string
	keptSnap             fixtures.Snapshot
	plan                 string
}

func csNewApplyScene(t *testing.T) csApplyScene {
	t.Helper()
	r := fixtures.New(t, fixtures.Options{})
	clitest.MustCustody(t, r, 0, "init")
	s := csApplyScene{r: r}
	s.merged, s.mergedPath = clitest.NewTree(t, r, "merged")
	s.mergedHead = r.Commit(s.mergedPath, "feature.txt", "published\n")
	r.Push(s.mergedPath, "main")
	s.kept, s.keptPath = clitest.NewTree(t, r, "kept")
	r.WriteFile(s.keptPath, "notes/todo.txt", "only here\n")
	s.keptHead = r.Head(s.keptPath)
	s.keptBranch = r.BranchTip("custody/" + s.kept)
	clitest.MustCustody(t, r, 0, "finish", s.merged, s.kept)
	s.plan = filepath.Join(r.Root, "plan.json")
	clitest.MustCustody(t, r, 0, "plan", "-o", s.plan) // 0: a kept tree is the plan's result
	var plan machine.Plan
	b, err := os.ReadFile(s.plan)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &plan); err != nil {
		t.Fatal(err)
	}
	actions := map[string]machine.Action{}
	for _, it := range plan.Items {
		actions[it.ID] = it.Action
	}
	if want := map[string]machine.Action{s.merged: machine.ActionRemove, s.kept: machine.ActionKeep}; !cmp.Equal(actions, want) {
		t.Fatalf("plan actions = %v, want %v", actions, want)
	}
	s.keptSnap = r.Snap(s.keptPath)
	return s
}

// csApplyEnd is the end state of an apply, with ids replaced by roles.
type csApplyEnd struct {
	Merged, Kept  clitest.TreeEnd
	KeptDiff      string
	KeptHead      string
	KeptBranch    string
	ReapplyMerged string
}

func (s csApplyScene) end(t *testing.T) csApplyEnd {
	t.Helper()
	r := s.r
	e := csApplyEnd{
		Merged:   clitest.ObserveTreeEnd(t, r, s.merged, s.mergedHead),
		Kept:     clitest.ObserveTreeEnd(t, r, s.kept, s.keptHead),
		KeptDiff: s.keptSnap.Diff(r.Snap(s.keptPath)),
		KeptHead: "moved", KeptBranch: "moved",
	}
	if r.Head(s.keptPath) == s.keptHead {
		e.KeptHead = "unchanged"
	}
	if r.BranchTip("custody/"+s.kept) == s.keptBranch {
		e.KeptBranch = "unchanged"
	}
	ap := clitest.DecodeResult[steps.ApplyResult](t, clitest.MustCustody(t, r, 0, "apply", s.plan, "--json"), "apply")
	e.ReapplyMerged = clitest.Outcomes(ap)[s.merged]
	if ap.Kept != 1 || len(ap.Items) != 1 {
		t.Errorf("re-apply: want 1 item and 1 kept, got %+v", ap)
	}
	return e
}

func csUninterruptedApply(t *testing.T) csApplyEnd {
	s := csNewApplyScene(t)
	ap := clitest.DecodeResult[steps.ApplyResult](t, clitest.MustCustody(t, s.r, 0, "apply", s.plan, "--json"), "apply")
	if o := clitest.Outcomes(ap); !cmp.Equal(o, map[string]string{s.merged: "removed"}) {
		t.Fatalf("uninterrupted apply: want %s removed, got %v", s.merged, o)
	}
	end := s.end(t)
	want := csApplyEnd{
		Merged: clitest.TreeEnd{State: "tombstoned", Path: "absent", AdminEntry: "absent", Marker: "absent", Branch: "absent",
			EvidenceOutcome: "removed", Triggers: []string{"create", "created", "finish", "remove", "removed"}},
		Kept: clitest.TreeEnd{State: "finished", Path: "present", Registered: true, AdminEntry: "id", Marker: "id", Branch: "commit",
			Triggers: []string{"create", "created", "finish"}},
		KeptHead: "unchanged", KeptBranch: "unchanged", ReapplyMerged: "already-done",
	}
	if d := cmp.Diff(want, end); d != "" {
		t.Fatalf("uninterrupted apply did not reach the expected end state (-want +got):\n%s", d)
	}
	clitest.Healthy(t, s.r)
	return end
}

func csCrashApply(t *testing.T, point string, v csVariant, base csApplyEnd) {
	s := csNewApplyScene(t)
	r := s.r

	clitest.MustBeKilled(t, r, point, "apply", s.plan)

	// The removal intent was durable before anything was destroyed, and the
	// kept tree was never touched.
	rec := clitest.ListRecord(t, r, s.merged)
	if rec.State != "removing" || rec.Intent == nil || rec.Intent.Kind != machine.IntentRemoval {
		t.Fatalf("after the kill at %s: want %s removing with a removal intent, got %+v", point, s.merged, rec)
	}
	if k := clitest.ListRecord(t, r, s.kept); k.State != "finished" || k.Intent != nil {
		t.Errorf("after the kill at %s: the kept record changed: %+v", point, k)
	}
	if d := s.keptSnap.Diff(r.Snap(s.keptPath)); d != "" {
		t.Errorf("after the kill at %s the kept tree changed:\n%s", point, d)
	}
	if res := clitest.Custody(t, r, "doctor"); res.Code != 3 || !strings.Contains(res.Stdout, s.merged) {
		t.Errorf("doctor before resume must report the unfinished intent of %s with exit 3, got\n%s", s.merged, res)
	}

	if !v.direct {
		csResumeOnce(t, r, v, point, s.merged, "removed")
	}
	// Applying the plan again (which resumes first, when resume was not
	// run) finds the removal done.
	ap := clitest.DecodeResult[steps.ApplyResult](t, clitest.MustCustody(t, r, 0, "apply", s.plan, "--json"), "apply")
	if o := clitest.Outcomes(ap); !cmp.Equal(o, map[string]string{s.merged: "already-done"}) {
		t.Errorf("apply after the crash: want %s already-done, got %v", s.merged, o)
	}

	got := s.end(t)
	if d := cmp.Diff(base, got); d != "" {
		t.Errorf("end state after a kill at %s, resume and apply differs from an uninterrupted apply (-want +got):\n%s", point, d)
	}
	// The owned branch is gone either way; if the kill came after custody
	// deleted it, the evidence can only say it was absent at completion.
	ev := clitest.ShowRecord(t, r, s.merged).Evidence
	if ev.BranchOutcome != machine.BranchDeleted && ev.BranchOutcome != machine.BranchAbsent {
		t.Errorf("branch outcome of %s = %q (%s), want deleted or absent", s.merged, ev.BranchOutcome, ev.BranchReason)
	}
	for _, rec := range clitest.ListRecords(t, r, true) {
		if rec.Intent != nil {
			t.Errorf("record %s still carries a %s intent", rec.ID, rec.Intent.Kind)
		}
	}
	clitest.Healthy(t, r)
}

// --- shared helpers ------------------------------------------------------

// TestCrashResumeDropAdmin covers the resume rule no failpoint reaches: a
// removal interrupted inside `git worktree remove` after the directory was
// deleted but before git dropped its admin entry (a power loss, say). Resume
// removes exactly that admin entry and completes, to the same end state as
// an uninterrupted apply.
func TestCrashResumeDropAdmin(t *testing.T) {
	t.Parallel()
	s := csNewApplyScene(t)
	r := s.r
	clitest.MustBeKilled(t, r, "apply/after-intent", "apply", s.plan)
	if err := os.RemoveAll(s.mergedPath); err != nil {
		t.Fatal(err)
	}
	res := clitest.MustCustody(t, r, 0, "resume", "--json")
	items := clitest.DecodeResult[clitest.ItemsResult[steps.ResumeItem]](t, res, "resume").Items
	if len(items) != 1 || items[0].ID != s.merged || items[0].Action != string(machine.ResumeDropAdmin) || items[0].Outcome != "removed" {
		t.Fatalf("resume: want %s drop-admin-entry → removed, got\n%s", s.merged, res)
	}
	got := s.end(t)
	want := csApplyEnd{
		Merged: clitest.TreeEnd{State: "tombstoned", Path: "absent", AdminEntry: "absent", Marker: "absent", Branch: "absent",
			EvidenceOutcome: "removed", Triggers: []string{"create", "created", "finish", "remove", "removed"}},
		Kept: clitest.TreeEnd{State: "finished", Path: "present", Registered: true, AdminEntry: "id", Marker: "id", Branch: "commit",
			Triggers: []string{"create", "created", "finish"}},
		KeptHead: "unchanged", KeptBranch: "unchanged", ReapplyMerged: "already-done",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("end state differs from an uninterrupted apply (-want +got):\n%s", d)
	}
	clitest.Healthy(t, r)
}

// TestCrashResumeRefusesUnmatched: a create killed after its intent, whose
// path then holds something custody did not make (a half-made tree, or a
// person's files). Resume fits no rule: it must refuse with a typed value
// naming the path, touch nothing, and keep the intent for a later resume.
func TestCrashResumeRefusesUnmatched(t *testing.T) {
	t.Parallel()
	r := fixtures.New(t, fixtures.Options{})
	clitest.MustCustody(t, r, 0, "init")
	clitest.MustBeKilled(t, r, "new/after-intent", "new", "x")
	recs := clitest.ListRecords(t, r, true)
	if len(recs) != 1 || recs[0].Intent == nil {
		t.Fatalf("want one record with a create intent, got %+v", recs)
	}
	id, path := recs[0].ID, recs[0].Path
	r.WriteFile(path, "mine.txt", "a person's work\n")
	snap := r.Snap(path)
	refs := r.Refs()

	res := clitest.MustCustody(t, r, 3, "resume", "--json")
	items := clitest.DecodeResult[clitest.ItemsResult[steps.ResumeItem]](t, res, "resume").Items
	if len(items) != 1 || items[0].ID != id || items[0].Outcome != "refused" || items[0].Refusal == nil ||
		items[0].Refusal.Code != machine.CodeResumeUnmatched || items[0].Refusal.Path != path {
		t.Fatalf("resume: want %s refused with resume-unmatched naming %s, got\n%s", id, path, res)
	}
	if d := snap.Diff(r.Snap(path)); d != "" {
		t.Errorf("resume changed %s:\n%s", path, d)
	}
	if got := r.Refs(); got != refs {
		t.Errorf("resume changed the refs:\nbefore:\n%s\nafter:\n%s", refs, got)
	}
	if rec := clitest.ListRecord(t, r, id); rec.State != "provisioning" || rec.Intent == nil {
		t.Errorf("resume dropped the intent it could not settle: %+v", rec)
	}
	// Another mutating command resumes first, refuses the same way, and
	// still does its own work.
	res = clitest.Custody(t, r, "new", "y", "--json")
	if res.Code != 0 && res.Code != 3 {
		t.Fatalf("custody new beside an unsettled intent: want exit 0 (or 3: something is pending), got\n%s", res)
	}
	made := clitest.DecodeResult[steps.NewResult](t, res, "new")
	if made.ID == id {
		t.Errorf("custody new reused id %s", id)
	}
	if d := snap.Diff(r.Snap(path)); d != "" {
		t.Errorf("custody new changed %s:\n%s", path, d)
	}
}
