//go:build unix

package relocate

// Relocation under a kill (DESIGN §4 Resume): a `custody relocate` killed
// at each relocate/* failpoint, then picked up by `custody resume` or by
// running the same relocate again, ends where an uninterrupted relocate
// ends: the record active at the destination with no intent, git
// registering exactly the destination under the same admin key, HEAD and
// every file unchanged, nothing at the source, a clean doctor and a
// journal that verifies. Helpers are prefixed rl.

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/cmd/custody/internal/output"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
	"github.com/google/go-cmp/cmp"
)

// rlResumeOutcome is what resume makes of a relocate killed at each point:
// before the move git still reports only the source (step back), after it
// only the destination (complete).
var rlResumeOutcome = map[string]machine.Outcome{
	"relocate/after-intent": machine.OutcomeSteppedBack,
	"relocate/after-move":   machine.OutcomeRelocated,
}

// rlScene is a managed tree with a commit and an untracked-free worktree,
// and where it is to go.
type rlScene struct {
	r            *fixtures.Repo
	id, src, dst string
	head         string
	snap         fixtures.Snapshot
}

func rlNewScene(t *testing.T) rlScene {
	t.Helper()
	r := fixtures.New(t, fixtures.Options{})
	clitest.MustCustody(t, r, 0, "init")
	s := rlScene{r: r}
	s.id, s.src = clitest.NewTree(t, r, "move")
	s.head = r.Commit(s.src, "work.txt", "kept through the move\n")
	s.dst = filepath.Join(r.Root, "moved", "move")
	s.snap = r.Snap(s.src)
	return s
}

// end is what exists of the scene's tree, with the journal left out (a
// stepped-back run journals its first attempt too).
func (s rlScene) end(t *testing.T) clitest.TreeEnd {
	t.Helper()
	e := clitest.ObserveTreeEnd(t, s.r, s.id, s.head)
	if n := len(e.Triggers); n == 0 || e.Triggers[n-1] != string(machine.TriggerRelocated) {
		t.Errorf("the journal of %s does not end with relocated: %v", s.id, e.Triggers)
	}
	e.Triggers = nil
	if rec := clitest.ListRecord(t, s.r, s.id); rec.Path != s.dst {
		t.Errorf("record %s is at %s, want %s", s.id, rec.Path, s.dst)
	}
	if d := s.snap.Diff(s.r.Snap(s.dst)); d != "" {
		t.Errorf("the moved tree differs from the tree before the move:\n%s", d)
	}
	if _, err := os.Lstat(s.src); !os.IsNotExist(err) {
		t.Errorf("the source %s is still there (lstat: %v)", s.src, err)
	}
	if got := s.r.Head(s.dst); got != s.head {
		t.Errorf("HEAD at the destination = %s, want %s", got, s.head)
	}
	return e
}

func TestRelocateCrash(t *testing.T) {
	t.Parallel()
	base := func() clitest.TreeEnd {
		s := rlNewScene(t)
		res := clitest.DecodeResult[steps.RelocateResult](t, clitest.MustCustody(t, s.r, 0, "relocate", s.id, "--to", s.dst, "--json"), "relocate")
		if res.Outcome != machine.OutcomeRelocated || res.Head != s.head {
			t.Fatalf("uninterrupted relocate: %+v", res)
		}
		e := s.end(t)
		want := clitest.TreeEnd{State: "active", Path: "present", Registered: true, AdminEntry: "id", Marker: "id", Branch: "commit"}
		if d := cmp.Diff(want, e); d != "" {
			t.Fatalf("uninterrupted relocate did not end as expected (-want +got):\n%s", d)
		}
		clitest.Healthy(t, s.r)
		return e
	}()
	points := 0
	for _, point := range steps.Failpoints() {
		if !strings.HasPrefix(point, "relocate/") {
			continue
		}
		points++
		want, ok := rlResumeOutcome[point]
		if !ok {
			t.Errorf("no expected resume outcome for failpoint %q: add it to rlResumeOutcome", point)
			continue
		}
		for _, direct := range []bool{false, true} {
			name := strings.ReplaceAll(point, "/", "_")
			if direct {
				name += "_rerun_without_resume"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				s := rlNewScene(t)
				clitest.MustBeKilled(t, s.r, point, "relocate", s.id, "--to", s.dst)
				rec := clitest.ListRecord(t, s.r, s.id)
				if rec.State != "relocating" || rec.Intent == nil || rec.Intent.Kind != machine.IntentRelocation ||
					rec.Intent.Destination != s.dst || rec.Intent.Commit != s.head || rec.Intent.Path != s.src {
					t.Fatalf("after the kill at %s: want %s relocating under a relocation intent {%s, %s, %s}, got %+v", point, s.id, s.src, s.dst, s.head, rec)
				}
				if res := clitest.Custody(t, s.r, "doctor"); res.Code != 3 || !strings.Contains(res.Stdout, s.id) {
					t.Errorf("doctor before resume must report the unfinished intent of %s with exit 3, got\n%s", s.id, res)
				}
				if !direct {
					rs := clitest.DecodeResult[clitest.ItemsResult[steps.ResumeItem]](t, clitest.MustCustody(t, s.r, 0, "resume", "--json"), "resume").Items
					if len(rs) != 1 || rs[0].ID != s.id || rs[0].Outcome != want {
						t.Fatalf("resume after the kill at %s: want %s %s, got %+v", point, s.id, want, rs)
					}
				}
				again := map[bool]machine.Outcome{true: machine.OutcomeAlreadyDone, false: machine.OutcomeRelocated}[want == machine.OutcomeRelocated]
				res := clitest.DecodeResult[steps.RelocateResult](t, clitest.MustCustody(t, s.r, 0, "relocate", s.id, "--to", s.dst, "--json"), "relocate")
				if res.Outcome != again {
					t.Errorf("relocate after the kill at %s: want %s, got %+v", point, again, res)
				}
				if d := cmp.Diff(base, s.end(t)); d != "" {
					t.Errorf("end state after a kill at %s differs from an uninterrupted relocate (-want +got):\n%s", point, d)
				}
				if rs := clitest.DecodeResult[clitest.ItemsResult[steps.ResumeItem]](t, clitest.MustCustody(t, s.r, 0, "resume", "--json"), "resume").Items; len(rs) != 0 {
					t.Errorf("a resume after the relocation settled still found work: %+v", rs)
				}
				clitest.Healthy(t, s.r)
			})
		}
	}
	if points == 0 {
		t.Fatal("steps.Failpoints() lists no relocate/ failpoint")
	}
}

// TestRelocateMoveFails: when git worktree move itself fails (here the
// destination is on another filesystem, where rename gives EXDEV), the
// tree stays where it was, the record steps back to active at its path
// with no intent, and relocate refuses with relocation-failed.
func TestRelocateMoveFails(t *testing.T) {
	t.Parallel()
	s := rlNewScene(t)
	var here, there syscall.Stat_t
	shm, err := os.MkdirTemp("/dev/shm", "custody-relocate-")
	if err != nil {
		t.Skipf("no second filesystem to move to: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(shm) })
	if syscall.Stat(s.src, &here) != nil || syscall.Stat(shm, &there) != nil || here.Dev == there.Dev {
		t.Skip("/dev/shm is on the same filesystem as the test's repository")
	}
	dst := filepath.Join(shm, "move")
	res := clitest.Custody(t, s.r, "relocate", s.id, "--to", dst, "--json")
	if res.Code != 3 {
		t.Fatalf("relocate across filesystems: want exit 3, got\n%s", res)
	}
	out := clitest.DecodeResult[steps.RelocateResult](t, res, "relocate")
	if out.Refusal == nil || out.Refusal.Code != machine.CodeRelocationFailed || !strings.Contains(out.Refusal.Message, "the tree stays where it was") {
		t.Fatalf("relocate across filesystems: want a relocation-failed refusal, got %+v", out)
	}
	rec := clitest.ListRecord(t, s.r, s.id)
	if rec.State != "active" || rec.Intent != nil || rec.Path != s.src {
		t.Errorf("after a failed move: record %+v, want active at %s without an intent", rec, s.src)
	}
	if d := s.snap.Diff(s.r.Snap(s.src)); d != "" {
		t.Errorf("a failed move changed the tree:\n%s", d)
	}
	if _, err := os.Lstat(dst); !os.IsNotExist(err) {
		t.Errorf("a failed move left something at %s (lstat: %v)", dst, err)
	}
	clitest.Healthy(t, s.r)
}

// TestRelocateDestinationAppears: a directory made at the destination
// after relocate observed it free (git would move the tree into it) stops
// the move: the record steps back to active at its path, the tree is
// unchanged and nothing is put in the directory.
func TestRelocateDestinationAppears(t *testing.T) {
	t.Parallel()
	s := rlNewScene(t)
	release, wait := clitest.Paused(t, s.r, "relocate/before-move", "relocate", s.id, "--to", s.dst, "--json")
	if err := os.MkdirAll(s.dst, 0o755); err != nil {
		t.Fatal(err)
	}
	release()
	res := wait()
	if res.Code != 3 {
		t.Fatalf("relocate onto a destination made meanwhile: want exit 3, got\n%s", res)
	}
	out := clitest.DecodeResult[steps.RelocateResult](t, res, "relocate")
	if out.Refusal == nil || out.Refusal.Code != machine.CodeRelocationFailed || !strings.Contains(out.Refusal.Message, "appeared after it was observed") {
		t.Fatalf("want a relocation-failed refusal naming the destination that appeared, got %+v", out)
	}
	rlActiveAt(t, s, s.src)
	if d := s.snap.Diff(s.r.Snap(s.src)); d != "" {
		t.Errorf("the tree changed:\n%s", d)
	}
	if ents, err := os.ReadDir(s.dst); err != nil || len(ents) != 0 {
		t.Errorf("the directory made at the destination holds %v (%v), want nothing", ents, err)
	}
	clitest.Healthy(t, s.r)
}

// TestRelocateDoctorStuck: doctor lists a relocation as stuck only when
// resume cannot settle it. While a live relocate holds the intent it is
// that process's, not stuck; once the holder is dead and the tree is gone
// from both source and destination, no rule fits and doctor names what
// resume refuses, with its retry.
func TestRelocateDoctorStuck(t *testing.T) {
	t.Parallel()
	t.Run("live-holder", func(t *testing.T) {
		t.Parallel()
		s := rlNewScene(t)
		release, wait := clitest.Paused(t, s.r, "relocate/before-move", "relocate", s.id, "--to", s.dst)
		res := clitest.Custody(t, s.r, "doctor", "--json")
		release()
		if got := wait(); got.Code != 0 {
			t.Errorf("the held relocate, released: want exit 0, got\n%s", got)
		}
		if d := clitest.DecodeResult[output.DoctorResult](t, res, "doctor"); len(d.Stuck) != 0 {
			t.Errorf("doctor while a live relocate holds the intent lists it as stuck: %+v", d.Stuck)
		}
		s.end(t)
	})
	t.Run("tree-gone-from-both", func(t *testing.T) {
		t.Parallel()
		s := rlNewScene(t)
		clitest.MustBeKilled(t, s.r, "relocate/after-move", "relocate", s.id, "--to", s.dst)
		if err := os.RemoveAll(s.dst); err != nil {
			t.Fatal(err)
		}
		s.r.Git("worktree", "prune")
		res := clitest.Custody(t, s.r, "doctor", "--json")
		if res.Code != 3 {
			t.Fatalf("doctor with a stuck relocation: want exit 3, got\n%s", res)
		}
		d := clitest.DecodeResult[output.DoctorResult](t, res, "doctor")
		if len(d.Stuck) != 1 || d.Stuck[0].ID != s.id || d.Stuck[0].Refusal == nil || d.Stuck[0].Refusal.Code != machine.CodeResumeUnmatched ||
			d.Stuck[0].Settle != "custody show "+s.id || !strings.Contains(d.Stuck[0].Why, "destination: path absent") {
			t.Fatalf("doctor: want %s stuck with resume's resume-unmatched and its retry, got %+v", s.id, d.Stuck)
		}
		if human := clitest.Custody(t, s.r, "doctor"); !strings.Contains(human.Stdout, "worktree "+s.id+": can never progress on its own") ||
			!strings.Contains(human.Stdout, "\tto fix: custody show "+s.id+"\n") {
			t.Errorf("doctor's human output does not list %s as stuck with its settling command:\n%s", s.id, human.Stdout)
		}
		if res := clitest.Custody(t, s.r, "resume"); res.Code != 3 {
			t.Errorf("resume of the stuck relocation: want exit 3, got\n%s", res)
		}
	})
}

// rlActiveAt checks that the scene's record is active at where, without an
// intent: a relocation refused, stepped back or completed.
func rlActiveAt(t *testing.T, s rlScene, where string) {
	t.Helper()
	if rec := clitest.ListRecord(t, s.r, s.id); rec.State != "active" || rec.Intent != nil || rec.Path != where {
		t.Errorf("record %+v, want active at %s without an intent", rec, where)
	}
}
