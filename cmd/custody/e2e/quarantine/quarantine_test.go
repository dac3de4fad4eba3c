package quarantine

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
)

// TestQuarantineNoRemovalWindow: whatever appears in the tree after the
// final observation (an ignored debug.log written before the move, a file
// written into the quarantine by a process working inside it, a tracked
// file whose bytes changed) is never deleted: the tree is moved back, kept
// byte for byte, and apply refuses with quarantine-changed naming the
// entry.
func TestQuarantineNoRemovalWindow(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		point string
		write func(t *testing.T, r *fixtures.Repo, path, q string) string // returns the entry's path in the tree
	}{
		{"ignored-file-before-move", "apply/before-quarantine", func(t *testing.T, r *fixtures.Repo, path, q string) string {
			r.WriteFile(path, "debug.log", "written at the last instant\n")
			return filepath.Join(path, "debug.log")
		}},
		{"file-written-into-quarantine", "apply/after-quarantine", func(t *testing.T, r *fixtures.Repo, path, q string) string {
			if err := os.WriteFile(filepath.Join(q, "late.txt"), []byte("from a process inside the tree\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(path, "late.txt")
		}},
		{"tracked-bytes-changed", "apply/before-quarantine", func(t *testing.T, r *fixtures.Repo, path, q string) string {
			name := filepath.Base(path)
			f := filepath.Join(path, strings.SplitN(name, "-", 2)[0]+".txt")
			if err := os.WriteFile(f, []byte("edited after the final observation\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			return f
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := clitest.InitRepo(t)
			clitest.IgnoreLogs(t, r)
			id, path := clitest.Removable(t, r, "window")
			_, file := clitest.PlanNow(t, r, 0)
			release, wait := clitest.Paused(t, r, c.point, "apply", file, "--json")
			q := filepath.Join(filepath.Dir(path), ".custody-quarantine-"+id)
			entry := c.write(t, r, path, q)
			want, err := os.ReadFile(entry)
			if err != nil && c.point == "apply/before-quarantine" {
				t.Fatal(err)
			}
			if c.point == "apply/after-quarantine" {
				want = []byte("from a process inside the tree\n")
			}
			release()
			res := wait()
			if res.Code != 3 {
				t.Fatalf("apply: want exit 3, got\n%s", res)
			}
			o := clitest.ApplyOutcome(t, clitest.ApplyDecoded(t, res), id)
			if o.Refusal == nil || o.Refusal.Code != machine.CodeQuarantineChanged || o.Refusal.Path != entry {
				t.Fatalf("apply %s: %+v, want quarantine-changed naming %s", id, o, entry)
			}
			if got, err := os.ReadFile(entry); err != nil || string(got) != string(want) {
				t.Fatalf("%s after apply: %q, %v; want %q", entry, got, err, want)
			}
			if _, err := os.Lstat(q); !os.IsNotExist(err) {
				t.Errorf("quarantine %s left behind: %v", q, err)
			}
			if _, err := os.Lstat(filepath.Join(path, "window.txt")); err != nil {
				t.Errorf("the tree's own file is gone: %v", err)
			}
			if st := clitest.RecordState(t, r, id); st != "finished" {
				t.Errorf("record %s is %s, want finished (stepped back)", id, st)
			}
			// The tree is kept until a person looks again: plan keeps it.
			plan, _ := clitest.PlanAny(t, r)
			if it := clitest.PlanItem(t, plan, id); it.Action == "remove" {
				t.Errorf("plan removes %s although %s is in it", id, entry)
			}
		})
	}
}

// TestQuarantineConcurrentWriter: a writer creates ignored files in the
// tree continuously while apply runs (from plan on, or from right after
// the final observation) and logs each write that succeeded; afterwards
// every logged file exists with its bytes (the tree was kept or moved
// back), none lost.
func TestQuarantineConcurrentWriter(t *testing.T) {
	t.Parallel()
	for round := range 3 {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			t.Parallel()
			r := clitest.InitRepo(t)
			clitest.IgnoreLogs(t, r)
			_, path := clitest.Removable(t, r, "busy")
			_, file := clitest.PlanNow(t, r, 0)
			var stop atomic.Bool
			var mu sync.Mutex
			var written []string
			var wg sync.WaitGroup
			var started atomic.Bool
			wg.Add(1)
			startWriter := func() {
				defer wg.Done()
				for n := 0; !stop.Load(); n++ {
					if n == 3 {
						started.Store(true)
					}
					p := filepath.Join(path, fmt.Sprintf("w-%d.log", n))
					if err := os.WriteFile(p, []byte(p), 0o644); err == nil {
						mu.Lock()
						written = append(written, p)
						mu.Unlock()
					}
					time.Sleep(time.Duration(round) * time.Millisecond)
				}
			}
			if round == 0 {
				go startWriter()
			}
			var res clitest.Result
			if round == 0 {
				res = clitest.Custody(t, r, "apply", file, "--json")
			} else {
				release, wait := clitest.Paused(t, r, "apply/before-quarantine", "apply", file, "--json")
				defer func() { stop.Store(true); wg.Wait() }()
				go startWriter()
				for !started.Load() {
					time.Sleep(time.Millisecond)
				}
				release()
				res = wait()
			}
			stop.Store(true)
			wg.Wait()
			if res.Code != 0 && res.Code != 3 {
				t.Fatalf("apply: %s", res)
			}
			for _, p := range written {
				if b, err := os.ReadFile(p); err != nil || string(b) != p {
					t.Errorf("a write that succeeded during apply is lost: %s (%q, %v)", p, b, err)
				}
			}
			t.Logf("%d writes succeeded during apply (exit %d)", len(written), res.Code)
		})
	}
}

// TestQuarantineCrashEvidence: a removal killed while deleting the
// quarantined tree is settled by resume (removed, not stale), and one
// killed after its branch deletion records the branch deleted, not
// absent.
func TestQuarantineCrashEvidence(t *testing.T) {
	t.Parallel()
	for _, point := range []string{"apply/after-quarantine", "apply/during-delete", "apply/after-branch"} {
		t.Run(strings.TrimPrefix(point, "apply/"), func(t *testing.T) {
			t.Parallel()
			r := clitest.InitRepo(t)
			id, path := clitest.Removable(t, r, "killed")
			_, file := clitest.PlanNow(t, r, 0)
			clitest.MustBeKilled(t, r, point, "apply", file)
			clitest.MustCustody(t, r, 0, "resume")
			clitest.AssertRemoved(t, r, id, path, true)
			if _, err := os.Lstat(filepath.Join(filepath.Dir(path), ".custody-quarantine-"+id)); !os.IsNotExist(err) {
				t.Errorf("quarantine left behind: %v", err)
			}
			s := clitest.ShowRecord(t, r, id)
			if s.State != "tombstoned" || s.Evidence.Outcome != "removed" || s.Evidence.BranchOutcome != machine.BranchDeleted {
				t.Errorf("after resume: state %s evidence %+v, want tombstoned, removed, branch deleted", s.State, s.Evidence)
			}
			a := clitest.Apply(t, r, file, 0)
			if o := clitest.ApplyOutcome(t, a, id); o.Outcome != "already-done" {
				t.Errorf("apply again: %+v, want already-done", o)
			}
		})
	}
}

// TestQuarantineLateWriterRecreatesPath: while the quarantined tree is
// being deleted, a writer makes the tree's path again and writes into it.
// The item fails with removal-failed naming the path, and custody deletes
// nothing the writer made, then or on any re-run (the quarantine-era
// counterpart of TestSafetyLateWriter).
func TestQuarantineLateWriterRecreatesPath(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.Removable(t, r, "recreated")
	_, file := clitest.PlanNow(t, r, 0)
	release, wait := clitest.Paused(t, r, "apply/after-quarantine", "apply", file, "--json")
	r.WriteFile(path, "late.txt", "late\n")
	release()
	res := wait()
	if res.Code != 3 {
		t.Fatalf("apply: want exit 3, got\n%s", res)
	}
	o := clitest.ApplyOutcome(t, clitest.ApplyDecoded(t, res), id)
	if o.Outcome == "removed" || o.Refusal == nil || o.Refusal.Code != machine.CodeRemovalFailed || o.Refusal.Path != path {
		t.Errorf("apply with a late writer: %+v, want removal-failed naming %s", o, path)
	}
	late := filepath.Join(path, "late.txt")
	for _, args := range [][]string{{"resume"}, {"plan"}, {"apply", file}} {
		res := clitest.Custody(t, r, args...)
		if b, err := os.ReadFile(late); err != nil || string(b) != "late\n" {
			t.Fatalf("after custody %v the late writer's file is %q, %v\n%s", args, b, err, res)
		}
	}
	if st := clitest.RecordState(t, r, id); st == "tombstoned" {
		t.Errorf("record %s tombstoned although %s exists", id, path)
	}
}

// TestQuarantineInterruptedReportsRemoval: SIGINT while the quarantined
// tree is being deleted. The deletion is not cancelled (a half-deleted
// tree helps nobody); apply exits 130 (interrupted, not 1: "nothing was
// changed") and names the tree it removed; the next command finds it settled (the
// quarantine-era counterpart of TestInterruptedApplyReportsRemoval).
func TestQuarantineInterruptedReportsRemoval(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.Removable(t, r, "interrupted")
	_, file := clitest.PlanNow(t, r, 0)
	b, interrupt, _ := clitest.StartPaused(t, r, "apply/after-quarantine", "apply", file)
	interrupt(os.Interrupt)
	res := b.Wait(t)
	if res.Code != 130 || !strings.HasPrefix(res.Stdout, "removed "+id) {
		t.Errorf("interrupted apply: exit %d (want 130), stdout does not name %s as removed:\n%s", res.Code, id, res)
	}
	// The interrupted apply itself finished the removal it had started.
	if st := clitest.RecordState(t, r, id); st != "tombstoned" {
		t.Errorf("after the interrupted apply %s is %s, want tombstoned", id, st)
	}
	if _, err := os.Lstat(filepath.Join(filepath.Dir(path), ".custody-quarantine-"+id)); !os.IsNotExist(err) {
		t.Errorf("quarantine left behind: %v", err)
	}
	clitest.MustCustody(t, r, 0, "resume")
	clitest.AssertRemoved(t, r, id, path, true)
	if s := clitest.ShowRecord(t, r, id); s.Evidence.Outcome != "removed" {
		t.Errorf("evidence %+v, want removed", s.Evidence)
	}
}
