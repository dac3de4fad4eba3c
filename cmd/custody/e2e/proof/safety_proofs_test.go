package proof

// Removal safety, end to end, for the proofs plan accepts: commits
// published elsewhere (among thousands of advertised refs too), local refs
// that prove nothing, tags, root commits and remotes that are dead or
// unavailable. Each kept case asserts the refusal code plan gives and
// that plan and apply leave every byte, every ref and the registration of
// the kept tree as they were; each removable case asserts the proof and a
// verified removal. Every helper here is prefixed sf.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
)

// TestSafetyManyAdvertisedRefs: origin advertises thousands of refs
// (refs/pull/*) whose objects are missing locally; plan fetches them into
// no ref and still proves a tree published on one of them.
func TestSafetyManyAdvertisedRefs(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.NewTree(t, r, "pr")
	r.Commit(path, "pr.txt", "pull request\n")
	r.PushRef(path, "refs/pull/4242/head")
	clitest.Finish(t, r, id)
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
	clitest.NoLocalWrites(t, r, func() {
		plan, _ := clitest.PlanNow(t, r, 0)
		it := clitest.PlanItem(t, plan, id)
		if it.Action != "remove" || it.Proof == nil || it.Proof.Ref != "refs/pull/4242/head" {
			t.Errorf("plan: %s %v proof %+v, want remove proven by refs/pull/4242/head", it.Action, clitest.RefusalCodes(it.Refusals), it.Proof)
		}
	})
}

// TestSafetyPublishedElsewhere: a ref in any advertised namespace proves
// ancestry.
func TestSafetyPublishedElsewhere(t *testing.T) {
	t.Parallel()
	for _, ref := range []string{"refs/custom/x", "refs/pull/7/head", "refs/tags/v1"} {
		t.Run(strings.ReplaceAll(ref, "/", "_"), func(t *testing.T) {
			t.Parallel()
			r := clitest.InitRepo(t)
			id, path := clitest.NewTree(t, r, "pushed")
			head := r.Commit(path, "work.txt", "work\n")
			r.PushRef(path, ref)
			clitest.Finish(t, r, id)
			it := clitest.RemoveNow(t, r, id, "ancestry")
			if it.Proof.Ref != ref || it.Proof.Tip != head || it.Proof.Remote != "origin" {
				t.Errorf("proof %+v, want %s at %s on origin", it.Proof, ref, head)
			}
			clitest.AssertRemoved(t, r, id, path, true)
		})
	}
}

// TestSafetyLocalRefsDoNotProve: a local remote-tracking ref, a local tag,
// a replace ref or a graft that makes HEAD look published to git proves
// nothing to custody.
func TestSafetyLocalRefsDoNotProve(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		make func(r *fixtures.Repo, head string)
		// sanity is a git command that, believing the local state, calls
		// head published (exit 0 and some output).
		sanity []string
	}{
		{"RemoteTracking", func(r *fixtures.Repo, head string) {
			r.Git("update-ref", "refs/remotes/origin/fake", head)
		}, []string{"branch", "-r", "--contains", "HEAD"}},
		{"LocalTag", func(r *fixtures.Repo, head string) {
			r.Git("tag", "v9", head)
		}, []string{"tag", "--contains", "HEAD"}},
		{"ReplaceRef", func(r *fixtures.Repo, head string) {
			// Replace origin's new main with a commit whose parents are
			// its real parent and head.
			tip := r.AdvanceMain("advancer", "other.txt", "other\n")
			r.Git("fetch", "-q", "origin")
			fake := r.Git("commit-tree", tip+"^{tree}", "-p", tip+"^", "-p", head, "-m", "fake")
			r.Git("replace", tip, fake)
		}, []string{"branch", "-r", "--contains", "HEAD"}},
		{"Graft", func(r *fixtures.Repo, head string) {
			tip := r.AdvanceMain("advancer", "other.txt", "other\n")
			r.Git("fetch", "-q", "origin")
			parent := r.Git("rev-parse", tip+"^")
			r.WriteFile(filepath.Join(r.Dir, ".git", "info"), "grafts", tip+" "+parent+" "+head+"\n")
		}, []string{"branch", "-r", "--contains", "HEAD"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := clitest.InitRepo(t)
			id, path := clitest.NewTree(t, r, "local")
			head := r.Commit(path, "work.txt", "work only here\n")
			clitest.Finish(t, r, id)
			tc.make(r, head)
			if out, err := r.TryGitIn(path, tc.sanity...); err != nil || strings.TrimSpace(out) == "" {
				t.Fatalf("fixture: git does not believe %s is published (%v): %q", head, err, out)
			}
			it := clitest.KeptThrough(t, r, id, path, "unpushed-commits")
			if it.Proof != nil {
				t.Errorf("local state proved %s: %+v", id, it.Proof)
			}
		})
	}
}

// TestSafetyAnnotatedTag: a commit published only through an annotated tag
// (ls-remote --refs advertises the tag object, not the commit) is proven
// by ancestry.
func TestSafetyAnnotatedTag(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.NewTree(t, r, "tagged")
	head := r.Commit(path, "work.txt", "work\n")
	r.GitIn(path, "tag", "-a", "-m", "release", "v2")
	r.GitIn(path, "push", "-q", "origin", "refs/tags/v2")
	r.Git("tag", "-d", "v2") // only the remote has it
	clitest.Finish(t, r, id)
	it := clitest.RemoveNow(t, r, id, "ancestry")
	if it.Proof.Ref != "refs/tags/v2" || it.Proof.Head != head {
		t.Errorf("proof %+v, want ancestry of %s on refs/tags/v2", it.Proof, head)
	}
	clitest.AssertRemoved(t, r, id, path, true)
}

// TestSafetyRootCommit: the tree's branch was reset to a root commit whose
// tree another root commit on origin has too. A root unique commit defeats
// patch equivalence, and unrelated histories do not merge: kept.
func TestSafetyRootCommit(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.NewTree(t, r, "rooted")
	r.WriteFile(path, "solo.txt", "from scratch\n")
	r.GitIn(path, "add", "solo.txt")
	tree := r.GitIn(path, "write-tree")
	root := r.GitIn(path, "commit-tree", tree, "-m", "root of the tree")
	r.GitIn(path, "reset", "-q", "--hard", root)
	twin := r.GitIn(path, "commit-tree", tree, "-m", "the same content, another root")
	r.GitIn(path, "push", "-q", "origin", twin+":refs/heads/twin")
	clitest.Finish(t, r, id)
	it := clitest.KeptThrough(t, r, id, path, "unpushed-commits")
	if it.Proof != nil {
		t.Errorf("a root commit proved %s: %+v", id, it.Proof)
	}
}

// TestSafetySelfRemote: a remote that is this repository itself (by any
// spelling) advertises its local branches, including the tree's own branch
// that removal would delete: never proof.
func TestSafetySelfRemote(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		url  func(r *fixtures.Repo, path string) string
	}{
		{"Dot", func(r *fixtures.Repo, path string) string { return "." }},
		{"Path", func(r *fixtures.Repo, path string) string { return r.Dir }},
		{"FileURL", func(r *fixtures.Repo, path string) string { return "file://" + r.Dir + "/.git" }},
		{"Worktree", func(r *fixtures.Repo, path string) string { return path }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := clitest.InitRepo(t)
			id, path := clitest.NewTree(t, r, "self")
			r.Commit(path, "precious.txt", "only here\n")
			clitest.Finish(t, r, id)
			r.Git("remote", "add", "loop", tc.url(r, path))
			it := clitest.KeptThrough(t, r, id, path)
			if it.Proof != nil || (!clitest.HasCode(it.Refusals, "remote-unavailable") && !clitest.HasCode(it.Refusals, "unpushed-commits")) {
				t.Errorf("a remote that is this repository proved %s: %v %+v", id, clitest.RefusalCodes(it.Refusals), it.Proof)
			}
		})
	}
}

// sfDeadRemote adds a remote that never answers.
func sfDeadRemote(r *fixtures.Repo) {
	r.Git("remote", "add", "backup", filepath.Join(r.Root, "no-such-remote.git"))
}

// TestSafetyDeadSecondRemote: origin proves the tree; a second remote that
// does not answer does not matter.
func TestSafetyDeadSecondRemote(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.Removable(t, r, "proven")
	sfDeadRemote(r)
	clitest.RemoveNow(t, r, id, "ancestry")
	clitest.AssertRemoved(t, r, id, path, true)
}

// TestSafetyRemoteUnavailable: nothing that answers proves the tree and one
// remote did not answer: remote-unavailable, never "not merged".
func TestSafetyRemoteUnavailable(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path := clitest.NewTree(t, r, "unproven")
	r.Commit(path, "work.txt", "work only here\n")
	clitest.Finish(t, r, id)
	sfDeadRemote(r)
	it := clitest.KeptThrough(t, r, id, path, "remote-unavailable")
	if clitest.HasCode(it.Refusals, "unpushed-commits") {
		t.Errorf("an unanswered remote was read as not merged: %v", clitest.RefusalCodes(it.Refusals))
	}
	s := clitest.ShowRecord(t, r, id)
	if s.Observation == nil || len(s.Observation.Remote.Unavailable) != 1 || s.Observation.Remote.Unavailable[0].Remote != "backup" {
		t.Errorf("show does not name the remote that did not answer: %+v", s.Observation)
	}
}

// TestSafetyUnknownIsNeverClean: when a git observation fails (a git that
// fails one subcommand), the tree is kept with a code that says so, both at
// plan and at apply of a plan made while everything worked.
func TestSafetyUnknownIsNeverClean(t *testing.T) {
	t.Parallel()
	removable := func(t *testing.T, r *fixtures.Repo) (string, string) { return clitest.Removable(t, r, "obs") }
	// custody reads a plain index itself; a split index it leaves to git
	// ls-files.
	splitIndex := func(t *testing.T, r *fixtures.Repo) (string, string) {
		id, path := removable(t, r)
		r.GitIn(path, "update-index", "--split-index")
		return id, path
	}
	// A tree that is exactly its HEAD is planned without git status
	// (decision 0185); an attributes file makes plan ask status.
	statusAsked := func(t *testing.T, r *fixtures.Repo) (string, string) {
		id, path := removable(t, r)
		if err := os.WriteFile(filepath.Join(r.Dir, ".git", "info", "attributes"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		return id, path
	}
	rebaseMerged := func(t *testing.T, r *fixtures.Repo) (string, string) {
		id, path := clitest.NewTree(t, r, "obs")
		r.Commit(path, "a.txt", "a\n")
		clitest.Finish(t, r, id)
		r.AdvanceMain("advancer", "other.txt", "someone else's work\n")
		r.RebaseMergeToMain("rebaser", "custody/"+id, nil)
		return id, path
	}
	for _, tc := range []struct {
		sub, code string
		make      func(t *testing.T, r *fixtures.Repo) (string, string)
	}{
		{"ls-files", "observation-failed", splitIndex},
		{"status", "status-failed", statusAsked},
		{"ls-remote", "remote-unavailable", removable},
		{"patch-id", "proof-failed", rebaseMerged},
	} {
		t.Run(tc.sub, func(t *testing.T) {
			t.Parallel()
			r := clitest.InitRepo(t)
			id, path := tc.make(t, r)
			good, goodFile := clitest.PlanNow(t, r, 0)
			if it := clitest.PlanItem(t, good, id); it.Action != "remove" {
				t.Fatalf("with a working git %s is not removable: %+v", id, it.Refusals)
			}
			env := clitest.PathEnv(r.FailingGit(tc.sub))
			before := clitest.SnapKeptState(t, r, id, path)

			file := clitest.PlanFile(t, r)
			res := clitest.RunBin(t, clitest.Bin(), r, r.Dir, []string{env}, "plan", "-o", file, "--json")
			if res.Code != 0 {
				t.Fatalf("plan with a failing git %s: %s (want 0: the tree is kept, and the plan made)", tc.sub, res)
			}
			plan := clitest.DecodeResult[machine.Plan](t, res, "plan")
			it := clitest.PlanItem(t, plan, id)
			if it.Action != "keep" || !clitest.HasCode(it.Refusals, tc.code) {
				t.Errorf("plan with a failing git %s: %s %v, want keep with %s", tc.sub, it.Action, clitest.RefusalCodes(it.Refusals), tc.code)
			}
			clitest.Apply(t, r, file, 0, env)
			before.Check(t, r, id, "after plan and apply with a failing git")

			a := clitest.Apply(t, r, goodFile, 3, env)
			if o := clitest.ApplyOutcome(t, a, id); o.Outcome == "removed" || o.Refusal == nil {
				t.Errorf("apply of a good plan with a failing git %s: %+v", tc.sub, o)
			}
			before.Check(t, r, id, "after applying the good plan with a failing git")
		})
	}
}
