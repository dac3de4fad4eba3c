package apply

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
)

// What dies with a tree, member by member of its admin entry
// (<common>/worktrees/<id>/), with core.logAllRefUpdates=false so that no
// reflog names what a test makes: a commit (or object) named only by one
// member either survives the removal, reachable from custody's recovery
// refs (and through a git gc --prune=now after it), or keeps the tree
// with a typed refusal. Helpers are prefixed ae.

// aeOrphan makes, in the tree at path, a commit on HEAD that no ref, no
// reflog and no pseudoref names (git commit-tree writes only the object).
// With conflict set it changes conflict.txt to "theirs" against HEAD's
// parent, so that merging, picking or applying it conflicts with a HEAD
// that changed conflict.txt too.
func aeOrphan(t *testing.T, r *fixtures.Repo, path, name string) string {
	t.Helper()
	return strings.TrimSpace(r.GitIn(path, "commit-tree", "HEAD^{tree}", "-p", "HEAD", "-m", "only "+name+" names this"))
}

// aeConflicting makes, in the tree at path, a commit no name holds that
// changes conflict.txt to "theirs", then commits conflict.txt "ours" on
// the tree's branch: merging, picking, reverting or applying it conflicts.
func aeConflicting(t *testing.T, r *fixtures.Repo, path, name string) string {
	t.Helper()
	r.Commit(path, "conflict.txt", "base\n")
	theirs := r.Commit(path, "conflict.txt", "theirs of "+name+"\n")
	r.GitIn(path, "reset", "-q", "--hard", "HEAD~1")
	r.GitIn(path, "update-ref", "-d", "ORIG_HEAD")
	r.Commit(path, "conflict.txt", "ours\n")
	return theirs
}

// aeNamedByNothing fails unless no ref reaches commit (the member under
// test is its only name).
func aeNamedByNothing(t *testing.T, r *fixtures.Repo, commit, what string) {
	t.Helper()
	if refs := strings.TrimSpace(r.Git("for-each-ref", "--contains", commit)); refs != "" {
		t.Fatalf("fixture %s: %s is reachable from refs:\n%s", what, commit, refs)
	}
}

// aeKeptBy fails unless object (of type typ) exists and a recovery ref of
// id reaches it: for a commit, one that contains it; else one naming it.
func aeKeptBy(t *testing.T, r *fixtures.Repo, id, object, typ string) {
	t.Helper()
	want := strings.TrimSuffix(typ, " in tree")
	if got, err := r.TryGitIn(r.Dir, "cat-file", "-t", object); err != nil || strings.TrimSpace(got) != want {
		t.Errorf("%s: object %s is %q (%v), want a %s", id, object, got, err, want)
		return
	}
	prefix := "refs/custody/recovered/" + id + "/"
	switch typ {
	case "blob in tree":
		return
	case "commit":
		if refs := r.Git("for-each-ref", "--contains", object, prefix); strings.TrimSpace(refs) == "" {
			t.Errorf("%s: no recovery ref reaches %s (refs:\n%s)", id, object, r.Refs())
		}
		return
	}
	if got, err := r.TryGitIn(r.Dir, "rev-parse", "--verify", "-q", prefix+object); err != nil || strings.TrimSpace(got) != object {
		t.Errorf("%s: recovery ref %s%s = %q (%v) (refs:\n%s)", id, prefix, object, got, err, r.Refs())
	}
}

// aeWorld is a repository (core.logAllRefUpdates=false) whose trees are
// each made to hold one admin entry member: those in gone must be removed
// with what the member names kept, those in stay kept with a refusal.
type aeWorld struct {
	t    *testing.T
	r    *fixtures.Repo
	gone []aeRemoved
	stay []aeHeld
}

// aeKept is an object a removal must keep: of type typ, reachable from
// the tree's recovery refs ("blob in tree": present, through a kept tree).
type aeKept struct{ object, typ string }

// aeRemoved is a tree the plan must remove, what must be kept of it, and
// the copies (name below recovered/<id>, and content) it must leave.
type aeRemoved struct {
	id, path string
	keep     []aeKept
	copies   map[string]string
}

// aeHeld is a tree kept with code, whose refusal names names; objects must
// still be there after plan and apply.
type aeHeld struct {
	id, path, code, names string
	objects               []string
}

func aeNew(t *testing.T) *aeWorld {
	t.Helper()
	r := clitest.InitRepo(t)
	r.Git("config", "core.logAllRefUpdates", "false")
	r.Git("config", "extensions.worktreeConfig", "true")
	return &aeWorld{t: t, r: r}
}

// admin is the admin entry of tree id.
func (w *aeWorld) admin(id string) string { return filepath.Join(w.r.Dir, ".git", "worktrees", id) }

// write writes content at p, making its directory.
func (w *aeWorld) write(p, content string) {
	w.t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

// check plans once and applies that plan: every tree in gone is removed
// (and what it named survives a git gc --prune=now), every tree in stay is
// kept by plan and apply with its code, its admin entry and what the
// member names still there.
func (w *aeWorld) check() {
	t, r := w.t, w.r
	t.Helper()
	plan, file := clitest.PlanNow(t, r, 0)
	for _, g := range w.gone {
		if it := clitest.PlanItem(t, plan, g.id); it.Action != "remove" {
			t.Errorf("%s: plan says %s (%v), want remove", g.id, it.Action, it.Refusals)
		}
	}
	for _, s := range w.stay {
		it := clitest.PlanItem(t, plan, s.id)
		var says string
		for _, rf := range it.Refusals {
			if string(rf.Code) == s.code {
				says = rf.Message + " " + rf.Path
			}
		}
		if it.Action != "keep" || !strings.Contains(says, s.names) {
			t.Errorf("%s: plan says %s with %+v, want keep with %s naming %s", s.id, it.Action, it.Refusals, s.code, s.names)
		}
	}
	a := clitest.Apply(t, r, file, 0)
	for _, g := range w.gone {
		if o := clitest.ApplyOutcome(t, a, g.id); o.Outcome != "removed" {
			t.Errorf("apply %s: %+v", g.id, o)
		}
	}
	for _, s := range w.stay {
		for _, o := range a.Items {
			if o.ID == s.id {
				t.Errorf("apply acted on kept %s: %+v", s.id, o)
			}
		}
		if _, err := os.Lstat(s.path); err != nil {
			t.Errorf("%s: the tree was not kept: %v", s.id, err)
		}
		if _, err := os.Lstat(w.admin(s.id)); err != nil {
			t.Errorf("%s: the admin entry was not kept: %v", s.id, err)
		}
		for _, o := range s.objects {
			if _, err := r.TryGitIn(s.path, "cat-file", "-e", o); err != nil {
				t.Errorf("%s: %s is gone: %v", s.id, o, err)
			}
		}
	}
	if len(w.gone) == 0 {
		return
	}
	r.Git("gc", "-q", "--prune=now")
	for _, g := range w.gone {
		clitest.AssertRemoved(t, r, g.id, g.path, true)
		for _, k := range g.keep {
			aeKeptBy(t, r, g.id, k.object, k.typ)
		}
		for name, want := range g.copies {
			got, err := os.ReadFile(filepath.Join(r.Dir, ".git", "custody", "recovered", g.id, filepath.FromSlash(name)))
			if err != nil || string(got) != want {
				t.Errorf("%s: kept %s = %q (%v), want %q", g.id, name, got, err, want)
			}
		}
	}
}

// TestAdminEntryMembersKept: what only ORIG_HEAD, FETCH_HEAD (a commit,
// and an annotated tag) or AUTO_MERGE (a commit, and a tree) names is kept
// under recovery refs, and survives a git gc; the trees go.
func TestAdminEntryMembersKept(t *testing.T) {
	t.Parallel()
	w := aeNew(t)
	r := w.r
	{
		id, path := clitest.Removable(t, r, "orig")
		lost := r.Commit(path, "lost.txt", "undone by a reset\n")
		r.GitIn(path, "reset", "-q", "--hard", "HEAD~1")
		aeNamedByNothing(t, r, lost, "ORIG_HEAD")
		w.gone = append(w.gone, aeRemoved{id: id, path: path, keep: []aeKept{{lost, "commit"}}})
	}
	{
		id, path := clitest.Removable(t, r, "fetched")
		lost := aeOrphan(t, r, path, "FETCH_HEAD")
		r.Git("branch", "tmp-fetched", lost)
		r.GitIn(path, "fetch", "-q", r.Dir, "refs/heads/tmp-fetched")
		r.Git("branch", "-D", "tmp-fetched")
		aeNamedByNothing(t, r, lost, "FETCH_HEAD")
		w.gone = append(w.gone, aeRemoved{id: id, path: path, keep: []aeKept{{lost, "commit"}}})
	}
	{
		id, path := clitest.Removable(t, r, "fetchtag")
		lost := aeOrphan(t, r, path, "a fetched tag")
		r.Git("tag", "-a", "-m", "a tag only FETCH_HEAD names", "tmp-tag", lost)
		tag := strings.TrimSpace(r.Git("rev-parse", "refs/tags/tmp-tag"))
		r.GitIn(path, "fetch", "-q", "--no-tags", r.Dir, "refs/tags/tmp-tag")
		r.Git("tag", "-d", "tmp-tag")
		aeNamedByNothing(t, r, lost, "FETCH_HEAD's tag")
		w.gone = append(w.gone, aeRemoved{id: id, path: path, keep: []aeKept{{tag, "tag"}, {lost, "commit"}}})
	}
	{
		id, path := clitest.Removable(t, r, "automerge")
		lost := aeOrphan(t, r, path, "AUTO_MERGE")
		w.write(filepath.Join(w.admin(id), "AUTO_MERGE"), lost+"\n")
		w.gone = append(w.gone, aeRemoved{id: id, path: path, keep: []aeKept{{lost, "commit"}}})
	}
	{
		id, path := clitest.Removable(t, r, "automergetree")
		// A tree of its own: one blob no commit holds, under a name.
		b := strings.TrimSpace(runGitInput(t, r, path, "conflicted <<<<<<< ours\n", "hash-object", "-w", "--stdin"))
		tree := strings.TrimSpace(runGitInput(t, r, path, "100644 blob "+b+"\tmerged.txt\n", "mktree"))
		w.write(filepath.Join(w.admin(id), "AUTO_MERGE"), tree+"\n")
		w.gone = append(w.gone, aeRemoved{id: id, path: path, keep: []aeKept{{tree, "tree"}, {b, "blob in tree"}}})
	}
	w.check()
}

// TestAdminEntryReflogsAndTextsKept: what only logs/HEAD, or the reflog of
// a per-worktree ref since deleted, names is kept under recovery refs;
// a person's texts (MERGE_MSG, info/sparse-checkout) are copied; the
// trees go.
func TestAdminEntryReflogsAndTextsKept(t *testing.T) {
	t.Parallel()
	w := aeNew(t)
	r := w.r
	{
		id, path := clitest.Removable(t, r, "headlog")
		lost := r.Commit(path, "lost.txt", "named by logs/HEAD alone\n")
		r.GitIn(path, "-c", "core.logAllRefUpdates=true", "reset", "-q", "--hard", "HEAD~1")
		// The reset's own log line names lost as its old value; the commit
		// before it wrote none (logAllRefUpdates=false then).
		r.GitIn(path, "update-ref", "-d", "ORIG_HEAD")
		if log, err := os.ReadFile(filepath.Join(w.admin(id), "logs", "HEAD")); err != nil || !strings.Contains(string(log), lost) {
			t.Fatalf("fixture: logs/HEAD does not name %s: %q (%v)", lost, log, err)
		}
		_ = os.Remove(filepath.Join(r.Dir, ".git", "logs", "refs", "heads", "custody", id))
		aeNamedByNothing(t, r, lost, "logs/HEAD")
		w.gone = append(w.gone, aeRemoved{id: id, path: path, keep: []aeKept{{lost, "commit"}}})
	}
	{
		id, path := clitest.Removable(t, r, "reflogonly")
		lost := aeOrphan(t, r, path, "a per-worktree reflog")
		r.GitIn(path, "-c", "core.logAllRefUpdates=true", "update-ref", "--create-reflog", "refs/worktree/tmp", lost)
		r.GitIn(path, "-c", "core.logAllRefUpdates=true", "update-ref", "refs/worktree/tmp", "HEAD")
		// The ref goes (as a crash might take it), its reflog stays.
		if err := os.Remove(filepath.Join(w.admin(id), "refs", "worktree", "tmp")); err != nil {
			t.Fatal(err)
		}
		aeNamedByNothing(t, r, lost, "logs/refs/worktree/tmp")
		w.gone = append(w.gone, aeRemoved{id: id, path: path, keep: []aeKept{{lost, "commit"}}})
	}
	{
		id, path := clitest.Removable(t, r, "texts")
		w.write(filepath.Join(w.admin(id), "MERGE_MSG"), "a message not yet used\n")
		r.GitIn(path, "sparse-checkout", "set", "--no-cone", "/*")
		r.GitIn(path, "sparse-checkout", "disable")
		pat, err := os.ReadFile(filepath.Join(w.admin(id), "info", "sparse-checkout"))
		if err != nil {
			t.Fatalf("fixture: no info/sparse-checkout: %v", err)
		}
		w.gone = append(w.gone, aeRemoved{id: id, path: path, copies: map[string]string{
			"MERGE_MSG": "a message not yet used\n", "info/sparse-checkout": string(pat)}})
	}

	w.check()
}

// TestAdminEntryOperationsKeepTheTree: MERGE_HEAD, CHERRY_PICK_HEAD,
// REVERT_HEAD, a bisect (and a bisect's leftover BISECT_LOG alone),
// rebase-merge/ and rebase-apply/, each the only name of a commit, keep
// the tree as operation-in-progress through plan and apply.
func TestAdminEntryOperationsKeepTheTree(t *testing.T) {
	t.Parallel()
	w := aeNew(t)
	r := w.r
	{
		id, path := clitest.Removable(t, r, "merging")
		lost := aeOrphan(t, r, path, "MERGE_HEAD")
		r.GitIn(path, "merge", "-q", "--no-ff", "--no-commit", lost)
		w.stay = append(w.stay, aeHeld{id, path, "operation-in-progress", "merge", []string{lost}})
	}
	{
		id, path := clitest.NewTree(t, r, "picking")
		lost := aeConflicting(t, r, path, "picking")
		r.Push(path, "pub/picking")
		clitest.Finish(t, r, id)
		if _, err := r.TryGitIn(path, "cherry-pick", lost); err == nil {
			t.Fatal("fixture: the cherry-pick did not stop")
		}
		w.stay = append(w.stay, aeHeld{id, path, "operation-in-progress", "cherry-pick", []string{lost}})
	}
	{
		id, path := clitest.NewTree(t, r, "reverting")
		lost := aeConflicting(t, r, path, "reverting")
		r.Push(path, "pub/reverting")
		clitest.Finish(t, r, id)
		if _, err := r.TryGitIn(path, "revert", "--no-edit", lost); err == nil {
			t.Fatal("fixture: the revert did not stop")
		}
		w.stay = append(w.stay, aeHeld{id, path, "operation-in-progress", "revert", []string{lost}})
	}
	{
		id, path := clitest.Removable(t, r, "bisecting")
		lost := aeOrphan(t, r, path, "a bisect")
		r.GitIn(path, "bisect", "start", "--no-checkout", lost, "HEAD")
		w.stay = append(w.stay, aeHeld{id, path, "operation-in-progress", "bisect", []string{lost}})
	}
	{
		id, path := clitest.Removable(t, r, "bisectlog")
		lost := aeOrphan(t, r, path, "BISECT_LOG")
		w.write(filepath.Join(w.admin(id), "BISECT_LOG"), "# bad: ["+lost+"] only BISECT_LOG names this\ngit bisect bad "+lost+"\n")
		w.stay = append(w.stay, aeHeld{id, path, "operation-in-progress", "BISECT_LOG", []string{lost}})
	}
	{
		id, path := clitest.NewTree(t, r, "rebasing")
		r.Commit(path, "rebasing.txt", "the tree's work\n")
		r.Push(path, "pub/rebasing")
		clitest.Finish(t, r, id)
		lost := aeOrphan(t, r, path, "rebase-merge")
		// lost holds HEAD's tree already: the rebase stops on the edit, or
		// on the pick that is now empty; either way it is in progress.
		_, _ = r.TryGitIn(path, "-c", "sequence.editor=sed -i 1s/^pick/edit/", "rebase", "-q", "-i", "--onto", lost, "HEAD~1")
		if _, err := os.Stat(filepath.Join(w.admin(id), "rebase-merge")); err != nil {
			t.Fatalf("fixture: no rebase in progress: %v", err)
		}
		w.stay = append(w.stay, aeHeld{id, path, "operation-in-progress", "rebase-merge", []string{lost}})
	}
	{
		id, path := clitest.NewTree(t, r, "applying")
		lost := aeConflicting(t, r, path, "applying")
		r.Push(path, "pub/applying")
		clitest.Finish(t, r, id)
		patch := r.GitIn(path, "format-patch", "-1", "--stdout", lost)
		if _, err := runGitInputErr(r, path, patch, "am", "-q"); err == nil {
			t.Fatal("fixture: git am did not stop")
		}
		w.stay = append(w.stay, aeHeld{id, path, "operation-in-progress", "rebase-apply", []string{lost}})
	}
	w.check()
}

// TestAdminEntryOthersKeepTheTree: a per-worktree ref (refs/worktree/x),
// git lock files (HEAD.lock, one in logs/), and members git does not put
// there today (FUTURE_HEAD, reftable/, info/exclude) keep the tree with a
// typed refusal through plan and apply.
func TestAdminEntryOthersKeepTheTree(t *testing.T) {
	t.Parallel()
	w := aeNew(t)
	r := w.r
	{
		id, path := clitest.Removable(t, r, "wtref")
		lost := aeOrphan(t, r, path, "refs/worktree/x")
		r.GitIn(path, "update-ref", "refs/worktree/x", lost)
		w.stay = append(w.stay, aeHeld{id, path, "per-worktree-ref", "refs/worktree/x", []string{lost}})
	}
	{
		id, path := clitest.Removable(t, r, "headlock")
		w.write(filepath.Join(w.admin(id), "HEAD.lock"), strings.TrimSpace(r.GitIn(path, "rev-parse", "HEAD"))+"\n")
		w.stay = append(w.stay, aeHeld{id, path, "admin-lock-file", "HEAD.lock", nil})
	}
	{
		id, path := clitest.Removable(t, r, "loglock")
		w.write(filepath.Join(w.admin(id), "logs", "refs", "worktree", "y.lock"), "")
		w.stay = append(w.stay, aeHeld{id, path, "admin-lock-file", "logs/refs/worktree/y.lock", nil})
	}
	{
		id, path := clitest.Removable(t, r, "future")
		lost := aeOrphan(t, r, path, "FUTURE_HEAD")
		w.write(filepath.Join(w.admin(id), "FUTURE_HEAD"), lost+"\n")
		w.stay = append(w.stay, aeHeld{id, path, "unknown-admin-file", "FUTURE_HEAD", []string{lost}})
	}
	{
		id, path := clitest.Removable(t, r, "reftable")
		w.write(filepath.Join(w.admin(id), "reftable", "tables.list"), "0x000000000001-0x000000000001-0123abcd.ref\n")
		w.stay = append(w.stay, aeHeld{id, path, "unknown-admin-file", "reftable", nil})
	}
	{
		id, path := clitest.Removable(t, r, "infoexclude")
		w.write(filepath.Join(w.admin(id), "info", "exclude"), "*.keep\n")
		w.stay = append(w.stay, aeHeld{id, path, "unknown-admin-file", "info/exclude", nil})
	}
	w.check()
}

// runGitInput runs git in dir with stdin and fails the test on error.
func runGitInput(t *testing.T, r *fixtures.Repo, dir, stdin string, args ...string) string {
	t.Helper()
	out, err := runGitInputErr(r, dir, stdin, args...)
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return out
}

// runGitInputErr runs git in dir with stdin.
func runGitInputErr(r *fixtures.Repo, dir, stdin string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = r.Env()
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestAdminEntryMemberDuringRemoval: members that come into the admin
// entry while the tree is being removed (after the final observation,
// before the entry is dropped) are kept or keep the entry. An ORIG_HEAD
// naming a new commit and an unknown FUTURE_HEAD are written while apply
// is held right after the tree went: the entry stays, the record keeps its
// intent with unknown-admin-file, whose retry (pasted) moves the member
// aside and resumes; the resume keeps ORIG_HEAD's commit and settles.
func TestAdminEntryMemberDuringRemoval(t *testing.T) {
	t.Parallel()
	w := aeNew(t)
	r := w.r
	id, path := clitest.Removable(t, r, "window")
	lost := aeOrphan(t, r, path, "an ORIG_HEAD written during the removal")
	future := aeOrphan(t, r, path, "a FUTURE_HEAD written during the removal")
	_, file := clitest.PlanNow(t, r, 0)

	dir := t.TempDir()
	cmd := exec.Command(clitest.FailpointBin(), "apply", file, "--json")
	cmd.Dir = r.Dir
	cmd.Env = append(r.Env(), "CUSTODY_PAUSE=apply/after-remove", "CUSTODY_PAUSE_DIR="+dir)
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	clitest.WaitFile(t, filepath.Join(dir, "paused"), 60*time.Second)
	if _, err := os.Lstat(path); err == nil {
		t.Fatalf("the tree is still at %s at apply/after-remove", path)
	}
	w.write(filepath.Join(w.admin(id), "ORIG_HEAD"), lost+"\n")
	w.write(filepath.Join(w.admin(id), "FUTURE_HEAD"), future+"\n")
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	a := clitest.DecodeResult[steps.ApplyResult](t, clitest.Result{Stdout: out.String(), Code: cmd.ProcessState.ExitCode()}, "apply")
	o := clitest.ApplyOutcome(t, a, id)
	if o.Outcome == "removed" || o.Refusal == nil || o.Refusal.Code != machine.CodeUnknownAdminFile ||
		o.Refusal.Path != filepath.Join(w.admin(id), "FUTURE_HEAD") {
		t.Fatalf("apply with FUTURE_HEAD written during the removal: %+v, want unknown-admin-file naming it", o)
	}
	if _, err := os.Lstat(filepath.Join(w.admin(id), "FUTURE_HEAD")); err != nil {
		t.Fatalf("the admin entry was dropped: %v", err)
	}
	if st := clitest.RecordState(t, r, id); st != "removing" {
		t.Errorf("record %s is %q, want removing (its intent kept)", id, st)
	}

	retry := o.Refusal.Retry
	if !strings.HasSuffix(retry, " && custody resume") {
		t.Fatalf("retry %q does not resume", retry)
	}
	paste := exec.Command("sh", "-c", retry)
	paste.Dir, paste.Env = r.Dir, append(r.Env(), clitest.PathEnv(filepath.Dir(clitest.Bin())))
	if b, err := paste.CombinedOutput(); err != nil {
		t.Fatalf("the retry %q failed: %v\n%s", retry, err, b)
	}
	clitest.AssertRemoved(t, r, id, path, true)
	aside := filepath.Join(r.Dir, ".git", "custody", "admin-files", id, "FUTURE_HEAD")
	if b, err := os.ReadFile(aside); err != nil || string(b) != future+"\n" {
		t.Errorf("FUTURE_HEAD moved aside = %q (%v), want %s", b, err, future)
	}
	r.Git("gc", "-q", "--prune=now")
	aeKeptBy(t, r, id, lost, "commit")
}
