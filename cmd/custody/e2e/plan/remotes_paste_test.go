//go:build unix

package plan

// Remotes read as git stores them, end to end: for a remote URL holding a
// newline, a shallow remote, a pushurl (the fork setup), a relative URL
// with a space, a rewritten URL and a remote with odd characters in its
// name, plan keeps a tree whose commit nothing proves (never proving it
// against the tree itself or its own repository), its retry is pasted
// through /bin/sh in the directory custody ran in, what it did is
// checked, and plan then proves the tree by the remote the advice named.
// Helpers are prefixed rp.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
)

// rpTree makes a finished tree with one commit only on its branch, and
// returns its id, path, branch and HEAD.
func rpTree(t *testing.T, r *fixtures.Repo, name string) (id, path, branch, head string) {
	t.Helper()
	id, path = clitest.NewTree(t, r, name)
	head = r.Commit(path, "work.txt", "only here: "+name+"\n")
	branch = r.GitIn(path, "symbolic-ref", "--short", "HEAD")
	clitest.Finish(t, r, id)
	return id, path, branch, head
}

// rpItem plans (the plan is made: exit 0) and returns the item at path.
func rpItem(t *testing.T, r *fixtures.Repo, path string) machine.PlanItem {
	t.Helper()
	p := clitest.DecodeResult[machine.Plan](t, clitest.MustCustody(t, r, 0, "plan", "--json"), "plan")
	it := clitest.PlanItemAt(p, path)
	if it == nil {
		t.Fatalf("plan has no item for %s: %+v", path, p.Items)
	}
	return *it
}

// rpKept requires it to be kept for code, with no proof, and returns that
// refusal.
func rpKept(t *testing.T, it machine.PlanItem, code machine.Code) machine.Refusal {
	t.Helper()
	if it.Action != machine.ActionKeep || it.Proof != nil {
		t.Fatalf("%s: action %s, proof %+v; want it kept without proof", it.Path, it.Action, it.Proof)
	}
	for _, ref := range it.Refusals {
		if ref.Code == code {
			return ref
		}
	}
	t.Fatalf("%s: refusals %v, want %s:\n%+v", it.Path, clitest.RefusalCodes(it.Refusals), code, it.Refusals)
	return machine.Refusal{}
}

// rpPaste runs retry through /bin/sh in dir, as a person pasting it would,
// and requires it to succeed.
func rpPaste(t *testing.T, r *fixtures.Repo, dir, retry string) clitest.Result {
	t.Helper()
	sh := clitest.RunBin(t, "/bin/sh", r, dir, nil, "-c", retry)
	t.Logf("pasted in %s: %q\n%s", dir, retry, sh)
	if sh.Code != 0 {
		t.Fatalf("the retry %q failed when pasted in %s:\n%s", retry, dir, sh)
	}
	return sh
}

// rpProvedBy plans again and requires the tree at path to be removable by
// remote's advertisement.
func rpProvedBy(t *testing.T, r *fixtures.Repo, path, remote string) {
	t.Helper()
	it := rpItem(t, r, path)
	if it.Action != machine.ActionRemove || it.Proof == nil || it.Proof.Remote != remote {
		t.Fatalf("after the retry, %s: action %s, proof %+v, refusals %+v; want removal proved by %s", path, it.Action, it.Proof, it.Refusals, remote)
	}
}

// rpAdvertises requires the repository at gitDir to hold branch at head.
func rpAdvertises(t *testing.T, r *fixtures.Repo, gitDir, branch, head string) {
	t.Helper()
	if got := r.Git("--git-dir="+gitDir, "rev-parse", "--verify", "-q", "refs/heads/"+branch); got != head {
		t.Fatalf("%s holds %s at %q, want %s", gitDir, branch, got, head)
	}
}

// TestRemoteNewlineURL: origin's URL holds a newline, so `git remote -v`
// prints a line that reads as a remote named .worktrees/<id> — the tree
// itself, which advertises its own branch. custody asks origin at the
// URL's exact bytes (a repository there that does not hold the commit):
// the tree is kept, no message speaks of a remote .worktrees/…, and the
// push retry, pasted, pushes to that URL; plan then proves the tree by
// origin.
func TestRemoteNewlineURL(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path, branch, head := rpTree(t, r, "newline")
	pub := filepath.Join(r.Root, "pub\n.worktrees/"+id+"\tx")
	r.Git("init", "-q", "--bare", pub)
	r.Git("remote", "set-url", "origin", pub)
	if out := r.Git("remote", "-v"); !strings.Contains(out, "\n.worktrees/"+id+"\tx (fetch)") {
		t.Fatalf("git remote -v does not print the line this test is about:\n%s", out)
	}
	ref := rpKept(t, rpItem(t, r, path), machine.CodeUnpushedCommits)
	if want := "git -C " + machine.QuoteArg(path) + " push -u origin " + machine.QuoteArg(branch); ref.Retry != want {
		t.Errorf("retry %q, want %q", ref.Retry, want)
	}
	if out := clitest.MustCustody(t, r, 0, "plan", "--verbose").Stdout; strings.Contains(out, "remote .worktrees") {
		t.Errorf("plan speaks of a remote .worktrees/…:\n%s", out)
	}
	rpPaste(t, r, r.Dir, ref.Retry)
	rpAdvertises(t, r, pub, branch, head)
	rpProvedBy(t, r, path, "origin")
}

// TestRemoteShallowMirror: a shallow mirror (a depth-1 clone of the tree's
// branch) advertises the tree's HEAD, but not its parent, which nothing
// else holds: the tree is kept ([unpushed-commits], the mirror answering),
// and the retry pushes to origin, not to the mirror (pushing there cannot
// fill in what lies past its boundary). Pasted, it publishes the branch on
// origin, which then proves the tree.
func TestRemoteShallowMirror(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	id, path, branch, _ := rpTree(t, r, "shallow")
	head := r.Commit(path, "more.txt", "second commit\n")
	mirror := filepath.Join(r.Root, "mirror.git")
	r.Git("clone", "-q", "--bare", "--depth", "1", "--branch", branch, "file://"+r.Dir, mirror)
	r.Git("remote", "add", "mirror", mirror)
	rpAdvertises(t, r, mirror, branch, head)
	ref := rpKept(t, rpItem(t, r, path), machine.CodeUnpushedCommits)
	if want := "git -C " + machine.QuoteArg(path) + " push -u origin " + machine.QuoteArg(branch); ref.Retry != want {
		t.Errorf("retry %q, want %q", ref.Retry, want)
	}
	rpPaste(t, r, r.Dir, ref.Retry)
	rpAdvertises(t, r, r.Remote, branch, head)
	rpProvedBy(t, r, path, "origin")
	_ = id
}

// TestRemotePushURL: origin is read from one repository and pushed to
// another (remote.origin.pushurl, the fork setup). A push to origin lands
// in the fork, which custody reads only through a remote whose URL it is.
// With none, the retry adds the fork as remote fork, then pushes to
// origin; with remote mine reading the fork, it pushes to origin and
// names mine; with origin's push disabled, it pushes to mine. Each, pasted,
// lands in the fork, and plan then proves the tree by the remote named.
func TestRemotePushURL(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		config [][2]string
		retry  string // with PATH, FORK and BRANCH standing for themselves
		proves string
	}{
		{"no remote reads the fork", [][2]string{{"remote.origin.pushurl", "FORK"}},
			"git -C PATH remote add fork FORK && git -C PATH push -u origin BRANCH", "fork"},
		{"mine reads the fork", [][2]string{{"remote.origin.pushurl", "FORK"}, {"remote.mine.url", "FORK"}},
			"git -C PATH push -u origin BRANCH", "mine"},
		{"origin's push disabled", [][2]string{{"remote.origin.pushurl", "DISABLE"}, {"remote.mine.url", "FORK"}},
			"git -C PATH push -u mine BRANCH", "mine"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := clitest.InitRepo(t)
			_, path, branch, head := rpTree(t, r, "forked")
			fork := filepath.Join(r.Root, "fork.git")
			r.Git("init", "-q", "--bare", fork)
			for _, kv := range c.config {
				r.Git("config", kv[0], strings.ReplaceAll(kv[1], "FORK", fork))
			}
			ref := rpKept(t, rpItem(t, r, path), machine.CodeUnpushedCommits)
			want := strings.NewReplacer("PATH", machine.QuoteArg(path), "FORK", machine.QuoteArg(fork), "BRANCH", machine.QuoteArg(branch)).Replace(c.retry)
			if ref.Retry != want {
				t.Errorf("retry %q, want %q", ref.Retry, want)
			}
			if !strings.Contains(ref.Message, c.proves) {
				t.Errorf("message %q does not name %s", ref.Message, c.proves)
			}
			rpPaste(t, r, r.Dir, ref.Retry)
			rpAdvertises(t, r, fork, branch, head)
			rpProvedBy(t, r, path, c.proves)
		})
	}
}

// TestRemoteRelativeURL: origin's URL is relative ("../with space/
// remote.git", read from the main checkout). A push run inside the tree
// would read it from the tree, where nothing is; the retry names the
// repository by its absolute path. Pasted inside the tree itself, it
// pushes to origin, which then proves the tree.
func TestRemoteRelativeURL(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	_, path, branch, head := rpTree(t, r, "relative")
	spaced := filepath.Join(r.Root, "with space", "remote.git")
	if err := os.MkdirAll(filepath.Dir(spaced), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(r.Remote, spaced); err != nil {
		t.Fatal(err)
	}
	r.Git("remote", "set-url", "origin", "../with space/remote.git")
	ref := rpKept(t, rpItem(t, r, path), machine.CodeUnpushedCommits)
	if want := "git -C " + machine.QuoteArg(path) + " push " + machine.QuoteArg(spaced) + " " + machine.QuoteArg(branch); ref.Retry != want {
		t.Errorf("retry %q, want %q", ref.Retry, want)
	}
	rpPaste(t, r, path, ref.Retry)
	rpAdvertises(t, r, spaced, branch, head)
	rpProvedBy(t, r, path, "origin")
}

// TestRemoteRewrittenURL: a url.<base>.insteadOf rewrite is followed as git
// follows it: a remote whose URL it rewrites to this repository proves
// nothing (the tree is kept, the remote named as this repository), and
// one it rewrites to the real origin is asked there; the retry, pasted,
// pushes through the same rewrite, and plan then proves the tree.
func TestRemoteRewrittenURL(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	_, path, branch, head := rpTree(t, r, "rewritten")
	r.Git("config", "url."+r.Dir+"/.insteadOf", "self:")
	r.Git("remote", "add", "loop", "self:.git")
	ref := rpKept(t, rpItem(t, r, path), machine.CodeRemoteUnavailable)
	if !strings.Contains(ref.Message, "is this repository itself") || ref.Retry != "git ls-remote --refs loop" {
		t.Errorf("refusal %+v; want loop named as this repository", ref)
	}
	r.Git("remote", "remove", "loop")
	r.Git("config", "url."+r.Root+"/.insteadOf", "pub:")
	r.Git("remote", "set-url", "origin", "pub:remote.git")
	ref = rpKept(t, rpItem(t, r, path), machine.CodeUnpushedCommits)
	rpPaste(t, r, r.Dir, ref.Retry)
	rpAdvertises(t, r, r.Remote, branch, head)
	rpProvedBy(t, r, path, "origin")
}

// TestRemoteOddName: a remote named with a dot, a space and shell
// characters is quoted in every retry. Unavailable, its ls-remote retry,
// pasted, asks that very remote (git names its URL) and runs nothing
// else; given a repository, the push retry, pasted, pushes there and plan
// proves the tree by it. Its URL holds a space and a byte that is not
// UTF-8.
func TestRemoteOddName(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	_, path, branch, head := rpTree(t, r, "odd")
	name := "team.fork $(touch injected);x"
	gone := filepath.Join(r.Root, "gone dir", "x.git")
	r.Git("remote", "remove", "origin")
	r.Git("config", "remote."+name+".url", gone)
	ref := rpKept(t, rpItem(t, r, path), machine.CodeRemoteUnavailable)
	if want := "git ls-remote --refs " + machine.QuoteArg(name); ref.Retry != want {
		t.Errorf("retry %q, want %q", ref.Retry, want)
	}
	sh := clitest.RunBin(t, "/bin/sh", r, r.Dir, nil, "-c", ref.Retry)
	if sh.Code == 0 || !strings.Contains(sh.Stderr, gone) {
		t.Errorf("the ls-remote retry of an unavailable remote: want it to ask %s and fail:\n%s", gone, sh)
	}
	if _, err := os.Lstat(filepath.Join(r.Dir, "injected")); err == nil {
		t.Errorf("pasting the retry ran a command hidden in the remote's name")
	}
	odd := filepath.Join(r.Root, "odd \xffplace.git")
	r.Git("init", "-q", "--bare", odd)
	r.Git("config", "remote."+name+".url", odd)
	ref = rpKept(t, rpItem(t, r, path), machine.CodeUnpushedCommits)
	if want := "git -C " + machine.QuoteArg(path) + " push -u " + machine.QuoteArg(name) + " " + machine.QuoteArg(branch); ref.Retry != want {
		t.Errorf("retry %q, want %q", ref.Retry, want)
	}
	rpPaste(t, r, r.Dir, ref.Retry)
	rpAdvertises(t, r, odd, branch, head)
	rpProvedBy(t, r, path, name)
}

// TestRemoteSelfURLs: a remote whose URL is the main checkout's path, or
// the tree's own path, proves nothing (kept, the remote named as this
// repository); origin with a second url that is the tree (a push there
// fails: its branch is checked out) is pushed by its first URL, and plan
// then proves the tree by origin.
func TestRemoteSelfURLs(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	_, path, branch, head := rpTree(t, r, "self")
	for _, url := range []string{r.Dir, path} {
		r.Git("remote", "add", "loop", url)
		ref := rpKept(t, rpItem(t, r, path), machine.CodeRemoteUnavailable)
		if !strings.Contains(ref.Message, "is this repository itself") {
			t.Errorf("url %s: refusal %+v; want loop named as this repository", url, ref)
		}
		r.Git("remote", "remove", "loop")
	}
	r.Git("remote", "set-url", "--add", "origin", path)
	ref := rpKept(t, rpItem(t, r, path), machine.CodeUnpushedCommits)
	if want := "git -C " + machine.QuoteArg(path) + " push " + machine.QuoteArg(r.Remote) + " " + machine.QuoteArg(branch); ref.Retry != want {
		t.Errorf("retry %q, want %q", ref.Retry, want)
	}
	rpPaste(t, r, r.Dir, ref.Retry)
	rpAdvertises(t, r, r.Remote, branch, head)
	rpProvedBy(t, r, path, "origin")
}
