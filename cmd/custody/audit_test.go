package main

// Audit of issues 2 and 3 against the binary: each test here drives custody
// the way a careful, adversarial user would and asserts what DESIGN.md and
// the issue texts promise. Tests named TestAudit*Bug* fail on the code as
// audited and describe the defect they catch; the others close coverage
// gaps and pass. Helpers come from safety_test.go (sf*) and
// crash_test.go / concurrency_test.go (cs*); new ones carry the prefix au.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/store"
)

// auWrapGit writes dir/git, a shell script that runs body when git is
// asked for `worktree remove` and the real git otherwise. In body, $last is
// the removal target and REALGIT the real git. It returns dir for PATH.
func auWrapGit(t *testing.T, r *fixtures.Repo, name, body string) string {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(r.Root, "au-git-"+name)
	script := fmt.Sprintf(`#!/bin/sh
REALGIT=%q
prev=
for a in "$@"; do
	if [ "$prev" = worktree ] && [ "$a" = remove ]; then
		for last in "$@"; do :; done
		%s
	fi
	prev=$a
done
exec "$REALGIT" "$@"
`, real, body)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// auStart starts custody in r.Dir with extra environment, without waiting.
func auStart(t *testing.T, r *fixtures.Repo, extra []string, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(custodyBin, args...)
	cmd.Dir = r.Dir
	cmd.Env = append(r.Env(), extra...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return cmd, &out, &errb
}

// auWaitCatches waits until process pid has installed a handler for sig
// (SigCgt in /proc/<pid>/status), so a signal sent next is not fatal by
// default.
func auWaitCatches(t *testing.T, pid int, sig syscall.Signal) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		for _, l := range strings.Split(string(b), "\n") {
			if hex, ok := strings.CutPrefix(l, "SigCgt:"); ok {
				var mask uint64
				if _, err := fmt.Sscanf(strings.TrimSpace(hex), "%x", &mask); err == nil && mask&(1<<(uint(sig)-1)) != 0 {
					return
				}
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("process %d never caught signal %v", pid, sig)
}

// auWait waits for cmd and returns its exit code (-1 when killed).
func auWait(cmd *exec.Cmd) int {
	err := cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -2
	}
	return 0
}

// ---------------------------------------------------------------------------
// Bugs.

// TestAuditBugSquashProofOfCancellingCommits: a branch that added a file and
// then reverted it was never pushed or merged anywhere; the file's content
// exists only in the tree's two unique commits. Because the commits cancel
// out, HEAD's tree equals the merge base's, so `git merge-tree` of HEAD into
// any advertised tip trivially yields the tip's tree and custody grants a
// squash-merged proof: plan removes the tree and apply deletes the branch,
// losing the only copy of that work. DESIGN §1: removal needs a proof that
// "every commit and every byte" is recoverable elsewhere. Expected: kept as
// unpushed-commits. Cause: observe/proof.go squashMerged/changesPublished
// accept an empty base..HEAD diff (nothing was published at all).
func TestAuditBugSquashProofOfCancellingCommits(t *testing.T) {
	t.Parallel()
	r := sfRepo(t)
	id, path := newTree(t, r, "undone")
	r.Commit(path, "feature.txt", "work that exists nowhere else\n")
	r.GitIn(path, "revert", "--no-edit", "HEAD")
	sfFinish(t, r, id)
	it := sfKeptThrough(t, r, id, path, "unpushed-commits")
	if it.Proof != nil {
		t.Errorf("proof %+v for commits no remote has", it.Proof)
	}
}

// TestAuditBugSquashMergedIntoNonMainDefaultBranch: origin's default branch
// is "develop" (its HEAD), not main/master/trunk. A tree squash-merged into
// develop is removable while develop is origin's only branch; once origin
// also carries 20 other people's branches whose names sort before
// "develop", the same tree is kept as unpushed-commits. Issue 3 asks that
// one tip "(default branches first)" be tried; custody ranks only the names
// main/master/trunk first (observe/remote.go tipRank) and then tries only
// the first maxProofTips=16 distinct tips (observe/proof.go candidateTips),
// so the remote's real default branch falls outside the candidates. The
// squash-merged branch is never reclaimed: the complaint issue 3 exists to
// fix. Expected: the remote's HEAD branch counts as a default branch.
func TestAuditBugSquashMergedIntoNonMainDefaultBranch(t *testing.T) {
	t.Parallel()
	r := sfRepo(t)
	r.Git("push", "-q", "origin", "main:refs/heads/develop")
	r.GitIn(r.Remote, "symbolic-ref", "HEAD", "refs/heads/develop")
	r.Git("push", "-q", "origin", "--delete", "main")

	id, path := newTree(t, r, "feat")
	r.Commit(path, "a.txt", "one\n")
	r.Commit(path, "b.txt", "two\n")
	sfFinish(t, r, id)

	clone := filepath.Join(r.Root, "squasher")
	r.GitIn(r.Root, "clone", "-q", "-b", "develop", r.Remote, clone)
	base := r.Head(clone)
	r.GitIn(clone, "fetch", "-q", r.Dir, "refs/heads/custody/"+id)
	r.GitIn(clone, "merge", "-q", "--squash", "FETCH_HEAD")
	r.GitIn(clone, "commit", "-q", "-m", "squash of "+id)
	r.GitIn(clone, "push", "-q", "origin", "HEAD:refs/heads/develop")

	plan, _ := sfPlanAny(t, r)
	if it := planItem(t, plan, id); it.Action != "remove" || it.Proof == nil || it.Proof.Kind != "squash-merged" {
		t.Fatalf("control: with develop alone on origin, %s is %s %v (proof %+v), want remove squash-merged", id, it.Action, refusalCodes(it.Refusals), it.Proof)
	}

	// Other people's open branches, each a distinct commit, all sorting
	// before "develop".
	for i := 0; i < 20; i++ {
		c := r.GitIn(clone, "commit-tree", "-p", base, "-m", fmt.Sprintf("agent %d", i), base+"^{tree}")
		r.GitIn(clone, "push", "-q", "origin", c+fmt.Sprintf(":refs/heads/agent-%02d", i))
	}
	plan, _ = sfPlanAny(t, r)
	if it := planItem(t, plan, id); it.Action != "remove" || it.Proof == nil || it.Proof.Kind != "squash-merged" {
		t.Errorf("with 20 more branches on origin, %s is %s %v (proof %+v); want remove with a squash-merged proof on origin's default branch develop",
			id, it.Action, refusalCodes(it.Refusals), it.Proof)
	}
}

// TestAuditBugInterruptWhileWaitingForLock: another process holds the state
// file; the user runs `custody list --lock-timeout 8s` and presses Ctrl-C
// (SIGINT) after half a second. custody catches SIGINT
// (cmd/custody/app.go signal.NotifyContext) but the wait for the lock
// (store/store.go open: bbolt's Timeout loop) does not watch the context,
// so the interrupt is ignored and custody waits out the full 8s, then
// reports lock-timeout. (A FIFO at the state path hangs custody forever the
// same way: SIGINT and SIGTERM are both swallowed.) Expected: custody stops
// promptly, exit 1, nothing changed.
func TestAuditBugInterruptWhileWaitingForLock(t *testing.T) {
	t.Parallel()
	r := fixtures.New(t, fixtures.Options{})
	mustCustody(t, r, 0, "init")
	state := filepath.Join(r.Dir, ".git", "custody", "state.db")
	release := csHoldLock(t, state)
	defer release()
	cmd, _, errb := auStart(t, r, nil, "list", "--lock-timeout", "8s")
	auWaitCatches(t, cmd.Process.Pid, syscall.SIGINT)
	time.Sleep(300 * time.Millisecond) // now waiting for the lock
	start := time.Now()
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	code := auWait(cmd)
	took := time.Since(start)
	if took > 4*time.Second {
		t.Errorf("custody ignored SIGINT while waiting for the state lock: it exited %s later (exit %d):\n%s", took.Round(time.Millisecond), code, errb)
	}
	if code != 1 {
		t.Errorf("interrupted list: exit %d, want 1", code)
	}
}

// TestAuditBugInterruptedApplyClaimsNothingChanged: the user presses Ctrl-C
// while apply's `git worktree remove` runs. git (deliberately not
// cancelled) removes the tree, then apply returns the context error and
// custody exits 1 with only "context canceled": docs/exit-codes.md and the
// README say exit 1 means "nothing was changed", yet the tree is gone, and
// the removal is not reported. Cause: steps/apply.go returns (res, err) and
// cmd/custody/apply_cmd.go drops res on error. Expected: an exit status
// other than 1 (or the tree still there), and output naming what was
// removed or left pending.
func TestAuditBugInterruptedApplyClaimsNothingChanged(t *testing.T) {
	t.Parallel()
	r := sfRepo(t)
	id, path := sfRemovable(t, r, "interrupted")
	_, file := sfPlanNow(t, r, 0)
	marker := filepath.Join(r.Root, "remove-started")
	slow := auWrapGit(t, r, "slow", fmt.Sprintf(`: > %q; sleep 1; exec "$REALGIT" "$@"`, marker))
	cmd, out, errb := auStart(t, r, []string{sfPathEnv(slow)}, "apply", file)
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("git worktree remove never started:\n%s\n%s", out, errb)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	code := auWait(cmd)
	_, lerr := os.Lstat(path)
	gone := errors.Is(lerr, fs.ErrNotExist)
	if code == 1 && gone {
		t.Errorf("interrupted apply exits 1 (\"error; nothing was changed\") although %s was removed:\nstdout:\n%s\nstderr:\n%s", path, out, errb)
	}
	if gone && !strings.Contains(out.String()+errb.String(), id) {
		t.Errorf("interrupted apply removed %s but its output does not name %s:\nstdout:\n%s\nstderr:\n%s", path, id, out, errb)
	}
	// Whatever it said, the next command settles it.
	mustCustody(t, r, 0, "resume")
	sfAssertRemoved(t, r, id, path, true)
}

// TestAuditBugResumeAfterPartialGitRemove: apply's `git worktree remove`
// dies part way (here it deletes one tracked file and the whole run is
// SIGKILLed, as a power loss or an OOM kill of the group would). Resume
// sees the path present and registered with the recorded device+inode and
// HEAD, picks retry-removal, re-observes a tracked file "deleted", calls the
// tree stale ("changed since plan") and retreats it to finished: the intent
// is gone, the half-deleted tree is kept forever as tracked-changes, and
// the journal blames a change the user never made. DESIGN §4: a run killed
// at any instant resumes to the same outcome (removed), and "resume never
// guesses: an observation that fits no rule is a typed refusal". The retreat
// guard machine/guards.go treeIntact ("nothing has been removed") checks
// only path, registration, device+inode and HEAD, not the content. Expected:
// the record does not end finished with a tree that differs from the one
// plan reviewed.
func TestAuditBugResumeAfterPartialGitRemove(t *testing.T) {
	t.Parallel()
	r := sfRepo(t)
	id, path := newTree(t, r, "partial")
	for i := 1; i <= 3; i++ {
		r.WriteFile(path, fmt.Sprintf("f%d.txt", i), fmt.Sprintf("%d\n", i))
	}
	r.CommitAll(path, "three files")
	r.Push(path, "pub/partial")
	sfFinish(t, r, id)
	_, file := sfPlanNow(t, r, 0)
	before := r.Snap(path)
	dying := auWrapGit(t, r, "dying", `rm -f -- "$last/f1.txt"; kill -9 $PPID; exit 1`)
	res := runBin(t, custodyBin, r, r.Dir, []string{sfPathEnv(dying)}, "apply", file, "--json")
	if res.Code != -1 {
		t.Fatalf("apply was not killed: %s", res)
	}
	rres := custody(t, r, "resume", "--json")
	st := sfRecordState(t, r, id)
	_, lerr := os.Lstat(path)
	if st == "finished" && lerr == nil && before.Diff(r.Snap(path)) != "" {
		t.Errorf("resume retreated %s to finished although custody's own interrupted removal had already deleted part of it (%s); resume said:\n%s",
			id, strings.ReplaceAll(before.Diff(r.Snap(path)), "\n", ", "), rres.Stdout)
	}
}

// TestAuditBugMovedWorktreeDeadEnd: a person moves a managed, finished tree
// with `git worktree move`. git still registers it under the record's admin
// key, with custody's ready marker. Plan keeps the record as
// worktree-missing with the retry `custody doctor`, and lists the moved
// tree as foreign ("a worktree custody did not make") with the retry
// `custody adopt PATH`. Neither retry does anything: doctor says OK (exit
// 0; steps/doctor.go never looks at worktrees) and adopt is refused with
// "already in custody" (exit 1). DESIGN §1.7: every refusal names the
// command that retries. Expected: doctor reports the missing tree, and the
// moved tree's suggested command does not fail.
func TestAuditBugMovedWorktreeDeadEnd(t *testing.T) {
	t.Parallel()
	r := sfRepo(t)
	id, path := newTree(t, r, "moved")
	sfFinish(t, r, id)
	dst := filepath.Join(r.Root, "moved-here")
	r.Git("worktree", "move", path, dst)

	plan, _ := sfPlanAny(t, r)
	it := planItem(t, plan, id)
	if it.Action != "keep" || it.Refusal == nil {
		t.Fatalf("plan: %+v", it)
	}
	if it.Refusal.Retry == "custody doctor" {
		if res := custody(t, r, "doctor"); res.Code == 0 {
			t.Errorf("plan keeps %s [%s] and says to run custody doctor, but doctor finds nothing (exit 0):\n%s", id, it.Refusal.Code, res.Stdout)
		}
	}
	if mv := planItemAt(plan, dst); mv != nil && mv.Refusal != nil && strings.HasPrefix(mv.Refusal.Retry, "custody adopt ") {
		if res := custody(t, r, "adopt", dst); res.Code == 1 {
			t.Errorf("plan lists the moved tree %s as %s [%s] with the retry %q, which fails:\n%s",
				dst, mv.ID, mv.Refusal.Code, mv.Refusal.Retry, res.Stderr)
		}
	}
}

// TestAuditBugShowJSONLacksIntent: issue 2 says `show` --json gives one
// record with {state, intent, evidence, journal} (and `list` gives intent:
// null when there is none). show omits the intent member entirely when the
// record carries none (machine.Record's `json:"intent,omitempty"`), so a
// script reading result.intent gets a missing key. Expected: "intent"
// present (null when none), as in list.
func TestAuditBugShowJSONLacksIntent(t *testing.T) {
	t.Parallel()
	r := sfRepo(t)
	id, _ := newTree(t, r, "shown")
	m := decodeResult[rawResult](t, mustCustody(t, r, 0, "show", id, "--json"), "show")
	for _, k := range []string{"state", "intent", "evidence", "journal"} {
		if _, ok := m[k]; !ok {
			t.Errorf("show --json result has no %q member (members: %v)", k, auKeys(m))
		}
	}
}

func auKeys(m map[string]json.RawMessage) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestAuditBugRepositoryPathWithNewline: git handles a repository whose path
// holds a newline, and custody parses `worktree list -z` and `status -z` so
// that such paths work; but observe/repo.go Discover splits `git rev-parse
// --git-common-dir --is-bare-repository --is-inside-work-tree` on "\n", so
// every command fails with the misleading "git rev-parse printed 4 lines,
// want 3 [ambiguous-repository]". Expected: init and new work, as they do
// for paths with spaces and non-ASCII characters.
func TestAuditBugRepositoryPathWithNewline(t *testing.T) {
	t.Parallel()
	r := fixtures.New(t, fixtures.Options{Name: "two\nlines"})
	if res := custody(t, r, "init"); res.Code != 0 {
		t.Fatalf("init in %q: %s", r.Dir, res)
	}
	res := mustCustody(t, r, 0, "new", "x", "--json")
	nr := decodeResult[steps.NewResult](t, res, "new")
	if !strings.HasPrefix(nr.Path, r.Dir+string(os.PathSeparator)) {
		t.Errorf("new made %q, not under %q", nr.Path, r.Dir)
	}
}

// ---------------------------------------------------------------------------
// Coverage gaps (these pass).

// TestAuditLeases: issue 2 — a live lease refuses finish; an expired lease
// lets plan treat an active tree as finished, and apply removes it (firing
// expire first). Leases are written straight into the store (no command
// acquires them yet).
func TestAuditLeases(t *testing.T) {
	t.Parallel()
	r := sfRepo(t)
	live, _ := newTree(t, r, "live")
	expired, expPath := newTree(t, r, "expired")
	st, err := store.Open(filepath.Join(r.Dir, ".git", "custody", "state.db"), 5*time.Second, false)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, l := range []machine.Lease{
		{Record: live, Holder: "agent-1", Expires: now.Add(time.Hour)},
		{Record: expired, Holder: "agent-2", Expires: now.Add(-time.Minute)},
	} {
		if err := st.PutLease(l); err != nil {
			t.Fatal(err)
		}
	}
	res := custody(t, r, "finish", live, "--json")
	if res.Code != 3 {
		t.Fatalf("finish under a live lease: want exit 3, got %s", res)
	}
	fo := decodeResult[itemsResult[steps.Outcome]](t, res, "finish")
	if len(fo.Items) != 1 || fo.Items[0].Refusal == nil || fo.Items[0].Refusal.Code != "lease-live" {
		t.Errorf("finish under a live lease: %+v, want refused [lease-live]", fo.Items)
	}
	if s := sfRecordState(t, r, live); s != "active" {
		t.Errorf("%s is %s after a refused finish", live, s)
	}

	plan, file := sfPlanAny(t, r)
	if it := planItem(t, plan, expired); it.Action != "remove" || it.Proof == nil {
		t.Errorf("active tree with an expired lease: %s %v, want remove", it.Action, refusalCodes(it.Refusals))
	}
	if it := planItem(t, plan, live); it.Action != "keep" || !hasCode(it.Refusals, "lease-live") {
		t.Errorf("active tree with a live lease: %s %v, want keep [lease-live]", it.Action, refusalCodes(it.Refusals))
	}
	a := sfApply(t, r, file, 0)
	if o := applyOutcome(t, a, expired); o.Outcome != "removed" {
		t.Errorf("apply: %+v", o)
	}
	sfAssertRemoved(t, r, expired, expPath, true)
}

// TestAuditNewEdgeCases: names that are all punctuation or path-like become
// safe ids under the managed root; --from an annotated tag resolves to the
// commit it tags; an unborn HEAD is a clear unknown-revision error that
// makes nothing.
func TestAuditNewEdgeCases(t *testing.T) {
	t.Parallel()
	r := sfRepo(t)
	root := filepath.Join(r.Dir, ".worktrees") + string(os.PathSeparator)
	for _, name := range []string{"!!!", "../../escape", "/abs/path", "a\nb", "…", ".."} {
		nr := decodeResult[steps.NewResult](t, mustCustody(t, r, 0, "new", "--json", "--", name), "new")
		if !strings.HasPrefix(nr.Path, root) || strings.Contains(nr.Path[len(root):], string(os.PathSeparator)) || !machine.ValidID(nr.ID) {
			t.Errorf("new %q: id %q path %q", name, nr.ID, nr.Path)
		}
		if nr.Branch != "custody/"+nr.ID {
			t.Errorf("new %q: branch %q", name, nr.Branch)
		}
	}
	first := r.Head(r.Dir)
	r.Git("tag", "-a", "-m", "annotated", "v9", first)
	r.Commit(r.Dir, "later.txt", "later\n")
	nr := decodeResult[steps.NewResult](t, mustCustody(t, r, 0, "new", "tagged", "--from", "v9", "--json"), "new")
	if nr.Head != first || r.Head(nr.Path) != first {
		t.Errorf("--from an annotated tag: head %s (tree at %s), want the tagged commit %s", nr.Head, r.Head(nr.Path), first)
	}

	empty := fixtures.New(t, fixtures.Options{NoRemote: true})
	empty.Git("update-ref", "-d", "HEAD")
	mustCustody(t, empty, 0, "init")
	res := mustCustody(t, empty, 1, "new", "x", "--json")
	if b := decodeError(t, res); b.Code != "unknown-revision" {
		t.Errorf("new with an unborn HEAD: %+v", b)
	}
	if ents, _ := os.ReadDir(filepath.Join(empty.Dir, ".worktrees")); len(ents) != 0 {
		t.Errorf("new with an unborn HEAD left %d entries in the managed root", len(ents))
	}
}

// TestAuditDetachedWithProofAndBranchKept: a tree whose HEAD was detached
// onto published work while its branch holds an unpushed commit is
// removable (HEAD is proven), but the branch is kept, since it moved away
// from the proven commit, and its commit survives.
func TestAuditDetachedWithProofAndBranchKept(t *testing.T) {
	t.Parallel()
	r := sfRepo(t)
	id, path := newTree(t, r, "detach")
	unpushed := r.Commit(path, "mine.txt", "only on the branch\n")
	r.GitIn(path, "checkout", "-q", "--detach", "HEAD~1")
	sfFinish(t, r, id)
	sfRemoveNow(t, r, id, "ancestry")
	sfAssertRemoved(t, r, id, path, false)
	if tip := r.BranchTip("custody/" + id); tip != unpushed {
		t.Errorf("branch custody/%s is at %q, want the unpushed %s", id, tip, unpushed)
	}
	s := showRecord(t, r, id)
	if s.Evidence.BranchOutcome != "kept" || s.Evidence.BranchReason == "" {
		t.Errorf("evidence: branch %q (%q), want kept with a reason", s.Evidence.BranchOutcome, s.Evidence.BranchReason)
	}
}

// TestAuditManyAdvertisedRefs: origin advertises thousands of refs
// (refs/pull/*) whose objects are missing locally; plan fetches them into no
// ref and still proves a tree published on one of them.
func TestAuditManyAdvertisedRefs(t *testing.T) {
	t.Parallel()
	r := sfRepo(t)
	id, path := newTree(t, r, "pr")
	r.Commit(path, "pr.txt", "pull request\n")
	r.PushRef(path, "refs/pull/4242/head")
	sfFinish(t, r, id)
	base := r.Head(r.Dir)
	var in strings.Builder
	for i := 0; i < 3000; i++ {
		msg := fmt.Sprintf("pr %d\n", i)
		fmt.Fprintf(&in, "commit refs/pull/%d/merge\ncommitter Fixture <fixture@example.com> 1700000000 +0000\ndata %d\n%sfrom %s\n\n", i, len(msg), msg, base)
	}
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir = r.Remote
	cmd.Env = r.Env()
	cmd.Stdin = strings.NewReader(in.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("fast-import: %v\n%s", err, out)
	}
	if n := len(strings.Split(r.Git("ls-remote", "--refs", "origin"), "\n")); n < 3000 {
		t.Fatalf("origin advertises %d refs, want over 3000", n)
	}
	sfNoLocalWrites(t, r, func() {
		plan, _ := sfPlanNow(t, r, 0)
		it := planItem(t, plan, id)
		if it.Action != "remove" || it.Proof == nil || it.Proof.Ref != "refs/pull/4242/head" {
			t.Errorf("plan: %s %v proof %+v, want remove proven by refs/pull/4242/head", it.Action, refusalCodes(it.Refusals), it.Proof)
		}
	})
}

// TestAuditBugResumeRollbackForceRemovesUserWork: `custody new` is killed
// right after `git worktree add` (failpoint new/after-add). The tree exists,
// registered, on its branch; `custody list` shows its path, and a person
// starts working in it (uncommitted notes). Later a required resource's
// create fails (here: a flag file makes it exit 1), and the next custody
// command's automatic resume activates the record, provisions resources,
// and on the failure rolls back with `git worktree remove --force`
// (steps/new.go rollback, "forced: nothing in it is a person's yet"): the
// person's uncommitted work is deleted. Issue 3: "Only non-forced git
// worktree remove"; DESIGN: nothing a person wrote is ever lost. Expected:
// the notes survive (the tree is kept, with a refusal).
func TestAuditBugResumeRollbackForceRemovesUserWork(t *testing.T) {
	t.Parallel()
	r := fixtures.New(t, fixtures.Options{})
	flag := filepath.Join(r.Root, "resource-broken")
	r.WriteFile(r.Dir, "custody.toml", fmt.Sprintf("[resources.db]\ncreate = '''test ! -e %s'''\ndestroy = 'true'\nrequired = true\n", flag))
	mustCustody(t, r, 0, "init")
	res := runBin(t, failpointBin, r, r.Dir, []string{"CUSTODY_FAILPOINT=new/after-add"}, "new", "crashed")
	if res.Code != -1 {
		t.Fatalf("new was not killed at new/after-add: %s", res)
	}
	ents, err := os.ReadDir(filepath.Join(r.Dir, ".worktrees"))
	if err != nil || len(ents) != 1 {
		t.Fatalf("managed root after the crash: %v %v", ents, err)
	}
	path := filepath.Join(r.Dir, ".worktrees", ents[0].Name())
	r.WriteFile(path, "notes.txt", "a person's uncommitted work\n")
	r.WriteFile(flag, "", "")
	res = custody(t, r, "resume", "--json")
	b, err := os.ReadFile(filepath.Join(path, "notes.txt"))
	if err != nil || string(b) != "a person's uncommitted work\n" {
		t.Errorf("resume destroyed uncommitted work in %s (%v); resume said:\n%s", path, err, res)
	}
}

// TestAuditBugUnknownOlderSchemaAccepted: issue 2 — "an unknown schema
// version ... gives a clear one-paragraph error and exit 1, and changes
// nothing". Only schema 1 exists, yet store/store.go checkLayout refuses
// only versions above it: a state file claiming schema 0 or -7 is read and
// written as if it were schema 1 (`custody new` succeeds and adds a record
// to it). Expected: exit 1, a schema error, the file unchanged.
func TestAuditBugUnknownOlderSchemaAccepted(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"0", "-7"} {
		t.Run("schema"+v, func(t *testing.T) {
			t.Parallel()
			r := fixtures.New(t, fixtures.Options{})
			mustCustody(t, r, 0, "init")
			state := filepath.Join(r.Dir, ".git", "custody", "state.db")
			badSetMeta(t, state, "schema", v)
			before := csDigest(t, state)
			for _, args := range [][]string{{"list", "--json"}, {"new", "x", "--json"}} {
				res := custody(t, r, args...)
				if res.Code != 1 {
					t.Errorf("custody %s with schema %s: exit %d, want 1 (unknown schema)\n%s", strings.Join(args, " "), v, res.Code, res)
				}
			}
			if csDigest(t, state) != before {
				t.Errorf("the state file with unknown schema %s was changed", v)
			}
		})
	}
}

// TestAuditNewFromInsideLinkedTree: issue 2 — `custody new` starts from
// the main checkout's HEAD, even when run inside another managed tree whose
// HEAD has moved on.
func TestAuditNewFromInsideLinkedTree(t *testing.T) {
	t.Parallel()
	r := sfRepo(t)
	_, path := newTree(t, r, "first")
	moved := r.Commit(path, "x.txt", "x\n")
	res := runBin(t, custodyBin, r, path, nil, "new", "second", "--json")
	if res.Code != 0 {
		t.Fatalf("new inside a linked tree: %s", res)
	}
	nr := decodeResult[steps.NewResult](t, res, "new")
	if main := r.Head(r.Dir); nr.Head != main || nr.Head == moved || r.Head(nr.Path) != main {
		t.Errorf("new inside a linked tree started from %s, want the main checkout's HEAD %s", nr.Head, main)
	}
	if !strings.HasPrefix(nr.Path, filepath.Join(r.Dir, ".worktrees")+string(os.PathSeparator)) {
		t.Errorf("new inside a linked tree made %s, not under the main checkout's managed root", nr.Path)
	}
}

// TestAuditBugExpiredLeaseKeptExitsZero: an active tree whose lease expired
// is treated as finished by plan (issue 2); when such a tree is kept (here:
// an untracked file), plan must exit 3 like for any kept finished tree
// (docs/exit-codes.md: "3 ... a kept finished tree in plan"). plan_cmd.go
// counts only items whose state is "finished" as pending, so plan exits 0
// and a script reading the status takes the repository for settled.
func TestAuditBugExpiredLeaseKeptExitsZero(t *testing.T) {
	t.Parallel()
	r := sfRepo(t)
	id, path := newTree(t, r, "expired")
	r.WriteFile(path, "notes.txt", "unsaved\n")
	st, err := store.Open(filepath.Join(r.Dir, ".git", "custody", "state.db"), 5*time.Second, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.PutLease(machine.Lease{Record: id, Holder: "agent-9", Expires: time.Now().Add(-time.Minute)}); err != nil {
		t.Fatal(err)
	}
	res := custody(t, r, "plan", "--json")
	p := decodeResult[machine.Plan](t, res, "plan")
	if it := planItem(t, p, id); it.Action != "keep" || !hasCode(it.Refusals, "untracked-files") {
		t.Fatalf("plan: %s %v, want keep [untracked-files]", it.Action, refusalCodes(it.Refusals))
	}
	if res.Code != 3 {
		t.Errorf("plan keeps lease-expired %s (treated as finished) but exits %d, want 3", id, res.Code)
	}
}
