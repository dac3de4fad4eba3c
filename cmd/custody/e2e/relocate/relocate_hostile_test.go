//go:build unix

package relocate

// Relocation against a hostile user, with real git: each test sets up
// what a person (or another process) could do around `custody relocate`
// and checks that nothing is lost, nothing is corrupted and the record
// never ends stuck where a rule could settle it. Helpers are prefixed rh.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/cmd/custody/internal/output"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
)

// rhRelocate runs relocate --json and decodes its result, failing unless
// custody exited with want.
func rhRelocate(t *testing.T, r *fixtures.Repo, want int, args ...string) steps.RelocateResult {
	t.Helper()
	return clitest.DecodeResult[steps.RelocateResult](t, clitest.MustCustody(t, r, want, append(append([]string{"relocate"}, args...), "--json")...), "relocate")
}

// rhRefused checks that res is a refusal with code and that the tree,
// its record and the destination are as they were.
func rhRefused(t *testing.T, s rlScene, res steps.RelocateResult, code machine.Code) {
	t.Helper()
	if res.Outcome != machine.OutcomeRefused || res.Refusal == nil || res.Refusal.Code != code {
		t.Fatalf("want a %s refusal, got %+v", code, res)
	}
	rlActiveAt(t, s, s.src)
	if _, err := os.Lstat(s.dst); !os.IsNotExist(err) {
		t.Errorf("a refused relocation left something at %s (lstat: %v)", s.dst, err)
	}
}

// TestRelocateIgnoredFile: an ignored file is refused, and the retry
// custody prints shows it (plain git status hides ignored files).
func TestRelocateIgnoredFile(t *testing.T) {
	t.Parallel()
	s := rlNewScene(t)
	clitest.Exclude(t, s.r, "*.log")
	s.r.WriteFile(s.src, "build.log", "only here\n")
	res := rhRelocate(t, s.r, 3, s.id, "--to", s.dst)
	rhRefused(t, s, res, machine.CodeIgnoredFiles)
	out, err := s.r.TryGitIn(s.r.Dir, strings.Fields(strings.TrimPrefix(res.Refusal.Retry, "git "))...)
	if err != nil || !strings.Contains(out, "build.log") {
		t.Errorf("the retry %q does not show the ignored file (err %v):\n%s", res.Refusal.Retry, err, out)
	}
}

// TestRelocateSubmodules: git worktree move refuses a tree holding
// submodules; custody refuses it first, saying so about the move (not
// about removal), and leaves the tree and its submodule as they were.
func TestRelocateSubmodules(t *testing.T) {
	t.Parallel()
	s := rlNewScene(t)
	up := s.r.NewUpstream("lib")
	s.head = s.r.AddSubmodule(s.src, up, "lib")
	s.snap = s.r.Snap(s.src)
	res := rhRelocate(t, s.r, 3, s.id, "--to", s.dst)
	rhRefused(t, s, res, machine.CodeSubmodules)
	if !strings.Contains(res.Refusal.Message, "git worktree move") || strings.Contains(res.Refusal.Message, "remove") {
		t.Errorf("the refusal must say git does not move a tree holding submodules, not speak of removal: %q", res.Refusal.Message)
	}
	if _, err := s.r.TryGitIn(s.r.Dir, strings.Fields(strings.TrimPrefix(res.Refusal.Retry, "git "))...); err != nil || !strings.HasPrefix(res.Refusal.Retry, "git ") {
		t.Errorf("the retry %q does not run: %v", res.Refusal.Retry, err)
	}
	if d := s.snap.Diff(s.r.Snap(s.src)); d != "" {
		t.Errorf("a refused relocation changed the tree:\n%s", d)
	}
}

// TestRelocateKeepsAdminState: per-worktree config and the reflog live in
// the admin entry; after the move git's <admin>/gitdir names the new
// .git, and the tree reads its own config and reflog there.
func TestRelocateKeepsAdminState(t *testing.T) {
	t.Parallel()
	s := rlNewScene(t)
	s.r.Git("config", "extensions.worktreeConfig", "true")
	s.r.GitIn(s.src, "config", "--worktree", "custody.test", "mine")
	reflog := s.r.GitIn(s.src, "reflog")
	rhRelocate(t, s.r, 0, s.id, "--to", s.dst)
	s.end(t)
	b, err := os.ReadFile(filepath.Join(s.r.Dir, ".git", "worktrees", s.id, "gitdir"))
	if err != nil || strings.TrimSpace(string(b)) != filepath.Join(s.dst, ".git") {
		t.Errorf("<admin>/gitdir holds %q (%v), want %s", b, err, filepath.Join(s.dst, ".git"))
	}
	if got := strings.TrimSpace(s.r.GitIn(s.dst, "config", "--worktree", "custody.test")); got != "mine" {
		t.Errorf("per-worktree config after the move = %q, want mine", got)
	}
	if got := s.r.GitIn(s.dst, "reflog"); got != reflog {
		t.Errorf("reflog after the move:\n%s\nwant\n%s", got, reflog)
	}
}

// TestRelocateTwiceAndBack: out, further out, then back to the very path
// it came from; then finished, planned and applied at its new home: the
// identity plan and apply check follows the moved directory.
func TestRelocateTwiceAndBack(t *testing.T) {
	t.Parallel()
	s := rlNewScene(t)
	orig := s.src
	mid := filepath.Join(s.r.Root, "mid", "move")
	rhRelocate(t, s.r, 0, s.id, "--to", mid)
	rhRelocate(t, s.r, 0, s.id, "--to", s.dst)
	s.end(t)
	s.dst, s.src = orig, s.dst
	if res := rhRelocate(t, s.r, 0, s.id, "--to", orig); res.Outcome != machine.OutcomeRelocated {
		t.Fatalf("back to %s: %+v", orig, res)
	}
	s.end(t)
	// Away once more, then removed from there through plan and apply.
	s.src, s.dst = orig, mid
	rhRelocate(t, s.r, 0, s.id, "--to", mid)
	s.r.Push(mid, "main")
	clitest.MustCustody(t, s.r, 0, "finish", s.id)
	plan := filepath.Join(s.r.Root, "plan.json")
	clitest.MustCustody(t, s.r, 2, "plan", "-o", plan, "--detailed-exitcode")
	clitest.MustCustody(t, s.r, 0, "apply", plan)
	if _, err := os.Lstat(mid); !os.IsNotExist(err) {
		t.Errorf("apply after the relocation left %s (lstat: %v)", mid, err)
	}
	if rec := listRecordAll(t, s.r, s.id); rec.State != "tombstoned" {
		t.Errorf("after apply: %+v, want tombstoned", rec)
	}
	clitest.Healthy(t, s.r)
}

// listRecordAll is the record id from list --all.
func listRecordAll(t *testing.T, r *fixtures.Repo, id string) output.ListEntry {
	t.Helper()
	for _, e := range clitest.ListRecords(t, r, true) {
		if e.ID == id {
			return e
		}
	}
	t.Fatalf("no record %s in list --all", id)
	return output.ListEntry{}
}

// TestRelocateCommitDuringKill: a relocate killed right after git moved
// the tree, and a person committing in the moved tree before anything
// resumes it: the directory at the destination is the very one that was
// moved (same device and inode), so resume completes the relocation
// rather than leaving a record that can never progress; the new commit
// is kept. Killed before the move, with a commit at the source, resume
// steps back the same way.
func TestRelocateCommitDuringKill(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		point string
		want  machine.Outcome
	}{{"relocate/after-move", machine.OutcomeRelocated}, {"relocate/after-intent", machine.OutcomeSteppedBack}} {
		t.Run(strings.ReplaceAll(tc.point, "/", "_"), func(t *testing.T) {
			t.Parallel()
			s := rlNewScene(t)
			clitest.MustBeKilled(t, s.r, tc.point, "relocate", s.id, "--to", s.dst)
			at := s.dst
			if tc.want == machine.OutcomeSteppedBack {
				at = s.src
			}
			head := s.r.Commit(at, "late.txt", "committed while custody was dead\n")
			rs := clitest.DecodeResult[clitest.ItemsResult[steps.ResumeItem]](t, clitest.MustCustody(t, s.r, 0, "resume", "--json"), "resume").Items
			if len(rs) != 1 || rs[0].Outcome != tc.want {
				t.Fatalf("resume: want %s %s, got %+v", s.id, tc.want, rs)
			}
			rec := clitest.ListRecord(t, s.r, s.id)
			if rec.State != "active" || rec.Intent != nil || rec.Path != at {
				t.Errorf("record %+v, want active at %s without an intent", rec, at)
			}
			if got := s.r.Head(at); got != head {
				t.Errorf("HEAD at %s = %s, want the new commit %s", at, got, head)
			}
			clitest.Healthy(t, s.r)
		})
	}
}

// TestRelocateParentBecomesSymlink: the destination's parent is a real
// directory when relocate checks it, and a symlink to somewhere else by
// the time git would move: the move is not made, the record steps back
// and nothing is put behind the link.
func TestRelocateParentBecomesSymlink(t *testing.T) {
	t.Parallel()
	s := rlNewScene(t)
	parent := filepath.Dir(s.dst)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	elsewhere := filepath.Join(s.r.Root, "elsewhere")
	if err := os.MkdirAll(elsewhere, 0o755); err != nil {
		t.Fatal(err)
	}
	release, wait := clitest.Paused(t, s.r, "relocate/before-move", "relocate", s.id, "--to", s.dst, "--json")
	if err := os.Remove(parent); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, parent); err != nil {
		t.Fatal(err)
	}
	release()
	res := wait()
	if res.Code != 3 {
		t.Fatalf("relocate under a parent swapped for a symlink: want exit 3, got\n%s", res)
	}
	out := clitest.DecodeResult[steps.RelocateResult](t, res, "relocate")
	if out.Refusal == nil || out.Refusal.Code != machine.CodeRelocationFailed || !strings.Contains(out.Refusal.Message, "symlink") {
		t.Fatalf("want a relocation-failed refusal naming the symlink, got %+v", out)
	}
	rlActiveAt(t, s, s.src)
	if ents, err := os.ReadDir(elsewhere); err != nil || len(ents) != 0 {
		t.Errorf("the symlink's target holds %v (%v), want nothing", ents, err)
	}
	if d := s.snap.Diff(s.r.Snap(s.src)); d != "" {
		t.Errorf("the tree changed:\n%s", d)
	}
	clitest.Healthy(t, s.r)
}

// TestRelocateRefusedWithResources: a tree whose resources froze its path
// into their commands is not moved (decision 0126): resources-frozen,
// nothing changed, no resource command run; once it has none (a tree
// made before custody.toml declared any) it moves.
func TestRelocateRefusedWithResources(t *testing.T) {
	t.Parallel()
	w := clitest.SetupResources(t, clitest.ResourceDecl("db", "", ""), fixtures.Options{})
	made := w.New(t, "res")
	dst := filepath.Join(w.R.Root, "moved", "res")
	before := w.LogLines(t)
	snap := w.R.Snap(made.Path)
	res := rhRelocate(t, w.R, 3, made.ID, "--to", dst)
	if res.Outcome != machine.OutcomeRefused || res.Refusal == nil || res.Refusal.Code != machine.CodeResourcesFrozen ||
		!strings.Contains(res.Refusal.Message, "db (active)") || res.Refusal.Retry != "custody resource list" {
		t.Fatalf("want a resources-frozen refusal naming db, got %+v", res)
	}
	if rec := w.Record(t, made.ID); rec.State != "active" || rec.Intent != nil || rec.Path != made.Path {
		t.Errorf("record %+v, want active at %s without an intent", rec, made.Path)
	}
	if _, err := os.Lstat(dst); !os.IsNotExist(err) {
		t.Errorf("a refused relocation left something at %s (lstat: %v)", dst, err)
	}
	if d := snap.Diff(w.R.Snap(made.Path)); d != "" {
		t.Errorf("the tree changed:\n%s", d)
	}
	w.WantLog(t, before...)
	if e := w.Entry(t, made.ID+"/db"); e.Path != made.Path || e.State != machine.StateActive {
		t.Errorf("ledger entry %+v, want active at %s", e, made.Path)
	}
}

// TestRelocateManagedRootExclude: a tree moved into the managed root
// stays out of the main checkout's git status, even when a person dropped
// the root from info/exclude since init; moved out of the root, it stays
// custody's own (TestRelocateTwiceAndBack removes one from outside).
func TestRelocateManagedRootExclude(t *testing.T) {
	t.Parallel()
	s := rlNewScene(t)
	rhRelocate(t, s.r, 0, s.id, "--to", s.dst)
	excl := filepath.Join(s.r.Dir, ".git", "info", "exclude")
	if err := os.WriteFile(excl, []byte("# emptied by hand\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := clitest.MustCustody(t, s.r, 0, "show", s.id, "--json").Stdout; !strings.Contains(out, `"origin": "created"`) {
		t.Errorf("moved out of the root, %s must stay created by custody:\n%s", s.id, out)
	}
	res := rhRelocate(t, s.r, 0, s.id)
	if res.Outcome != machine.OutcomeRelocated {
		t.Fatalf("back into the root: %+v", res)
	}
	if out := s.r.Git("status", "--porcelain"); out != "" {
		t.Errorf("the main checkout's git status after moving a tree into the managed root:\n%s", out)
	}
	b, _ := os.ReadFile(excl)
	if !strings.Contains(string(b), "\n/.worktrees/\n") || !strings.HasPrefix(string(b), "# emptied by hand\n") {
		t.Errorf("info/exclude after the move:\n%s", b)
	}
}

// TestRelocateHandMovedDuringKill: a relocate killed around the move, and
// a person moving the tree before anything resumes it: back to the source
// by hand (git still registers the destination) or on to a third place
// with git. Resume cannot settle these on its own, and its refusal's retry
// (also what doctor says to run) is the git command that puts the tree
// where a rule fits; pasted, it lets resume settle the relocation with
// every file kept. Renamed by hand to the destination before git moved it
// (what a git worktree move killed between its rename and its rewrite of
// the admin entry leaves), resume registers it there itself and completes;
// before, it stepped back to the source, where nothing was.
func TestRelocateHandMovedDuringKill(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, point string
		move        func(s rlScene) string // moves the tree, returns where it is
		want        machine.Outcome
	}{
		{"back-to-source-by-hand", "relocate/after-move", func(s rlScene) string {
			if err := os.Rename(s.dst, s.src); err != nil {
				s.r.TB.Fatal(err)
			}
			return s.src
		}, machine.OutcomeSteppedBack},
		{"on-with-git", "relocate/after-move", func(s rlScene) string {
			other := filepath.Join(s.r.Root, "other place")
			s.r.Git("worktree", "move", s.dst, other)
			return other
		}, machine.OutcomeRelocated},
		{"to-destination-by-hand", "relocate/after-intent", func(s rlScene) string {
			if err := os.MkdirAll(filepath.Dir(s.dst), 0o755); err != nil {
				s.r.TB.Fatal(err)
			}
			if err := os.Rename(s.src, s.dst); err != nil {
				s.r.TB.Fatal(err)
			}
			return s.dst
		}, machine.OutcomeRelocated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := rlNewScene(t)
			clitest.MustBeKilled(t, s.r, tc.point, "relocate", s.id, "--to", s.dst)
			at := tc.move(s)
			if tc.name == "to-destination-by-hand" {
				rs := clitest.DecodeResult[clitest.ItemsResult[steps.ResumeItem]](t, clitest.MustCustody(t, s.r, 0, "resume", "--json"), "resume").Items
				if len(rs) != 1 || rs[0].Outcome != machine.OutcomeRelocated {
					t.Fatalf("resume with the tree renamed to %s: want %s relocated, got %+v", at, s.id, rs)
				}
				s.end(t)
				clitest.Healthy(t, s.r)
				return
			}
			res := clitest.Custody(t, s.r, "resume", "--json")
			rs := clitest.DecodeResult[clitest.ItemsResult[steps.ResumeItem]](t, res, "resume").Items
			if res.Code != 3 || len(rs) != 1 || rs[0].Refusal == nil || rs[0].Refusal.Code != machine.CodeResumeUnmatched {
				t.Fatalf("resume with the tree at %s: want resume-unmatched, got\n%s", at, res)
			}
			retry := rs[0].Refusal.Retry
			if !strings.HasPrefix(retry, "git worktree ") {
				t.Fatalf("resume's retry %q is not the git command that puts the tree back:\n%s", retry, res)
			}
			if d := clitest.DecodeResult[output.DoctorResult](t, clitest.Custody(t, s.r, "doctor", "--json"), "doctor"); len(d.Stuck) != 1 || d.Stuck[0].Settle != retry {
				t.Errorf("doctor: want %s stuck with %q to settle it, got %+v", s.id, retry, d.Stuck)
			}
			cmd := exec.Command("sh", "-c", retry)
			cmd.Dir, cmd.Env = s.r.Dir, s.r.Env()
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("the retry %q failed: %v\n%s", retry, err, out)
			}
			rs = clitest.DecodeResult[clitest.ItemsResult[steps.ResumeItem]](t, clitest.MustCustody(t, s.r, 0, "resume", "--json"), "resume").Items
			if len(rs) != 1 || rs[0].Outcome != tc.want {
				t.Fatalf("resume after the retry: want %s %s, got %+v", s.id, tc.want, rs)
			}
			where := s.dst
			if tc.want == machine.OutcomeSteppedBack {
				where = s.src
			}
			rlActiveAt(t, s, where)
			if d := s.snap.Diff(s.r.Snap(where)); d != "" {
				t.Errorf("the tree at %s differs from the tree before the move:\n%s", where, d)
			}
			clitest.Healthy(t, s.r)
		})
	}
}

// TestRelocateProcessEntersAfterCheck: a process that starts working in
// the tree after relocate checked it, before git moves it, stops the move
// (a program holding the tree's old path would write where the tree no
// longer is): the record steps back, the tree stays, and the retry is the
// relocate itself, which moves the tree once the process has ended.
func TestRelocateProcessEntersAfterCheck(t *testing.T) {
	t.Parallel()
	s := rlNewScene(t)
	release, wait := clitest.Paused(t, s.r, "relocate/before-move", "relocate", s.id, "--to", s.dst, "--json")
	h := s.r.Hold(s.src, "sleep", "60")
	release()
	res := wait()
	if res.Code != 3 {
		t.Fatalf("relocate with a process that entered the tree meanwhile: want exit 3, got\n%s", res)
	}
	out := clitest.DecodeResult[steps.RelocateResult](t, res, "relocate")
	if out.Refusal == nil || out.Refusal.Code != machine.CodeRelocationFailed || !strings.Contains(out.Refusal.Message, "(sleep)") {
		t.Fatalf("want a relocation-failed refusal naming the process, got %+v", out)
	}
	rlActiveAt(t, s, s.src)
	if _, err := os.Lstat(s.dst); !os.IsNotExist(err) {
		t.Errorf("a move not made left something at %s (lstat: %v)", s.dst, err)
	}
	h.Stop()
	args := strings.Fields(out.Refusal.Retry)
	if len(args) < 2 || args[0] != "custody" || args[1] != "relocate" {
		t.Fatalf("retry %q is not the relocate", out.Refusal.Retry)
	}
	clitest.MustCustody(t, s.r, 0, args[1:]...)
	s.end(t)
	clitest.Healthy(t, s.r)
}

// TestRelocateHalfMovedForeignGitfile: the moved directory at the
// destination, unregistered, whose .git file a person pointed elsewhere,
// is not registered by resume: the intent stays, resume refuses naming
// the admin entry, and nothing is changed.
func TestRelocateHalfMovedForeignGitfile(t *testing.T) {
	t.Parallel()
	s := rlNewScene(t)
	clitest.MustBeKilled(t, s.r, "relocate/after-intent", "relocate", s.id, "--to", s.dst)
	if err := os.MkdirAll(filepath.Dir(s.dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(s.src, s.dst); err != nil {
		t.Fatal(err)
	}
	s.r.WriteFile(s.dst, ".git", "gitdir: "+filepath.Join(s.r.Root, "elsewhere.git")+"\n")
	snap := s.r.Snap(s.dst)
	res := clitest.Custody(t, s.r, "resume", "--json")
	rs := clitest.DecodeResult[clitest.ItemsResult[steps.ResumeItem]](t, res, "resume").Items
	if res.Code != 3 || len(rs) != 1 || rs[0].Refusal == nil || rs[0].Refusal.Code != machine.CodeResumeUnmatched ||
		!strings.Contains(rs[0].Refusal.Message, "does not name the admin entry") {
		t.Fatalf("resume: want resume-unmatched naming the admin entry, got\n%s", res)
	}
	if rec := clitest.ListRecord(t, s.r, s.id); rec.State != "relocating" || rec.Intent == nil {
		t.Errorf("record %+v, want still relocating under its intent", rec)
	}
	if d := snap.Diff(s.r.Snap(s.dst)); d != "" {
		t.Errorf("resume changed the directory at the destination:\n%s", d)
	}
}
