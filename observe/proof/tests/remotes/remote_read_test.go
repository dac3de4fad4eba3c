package remotes

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/internal/gitsandbox"
	"github.com/custody-sh/custody/observe/proof"
)

// failureOf returns the failure v records for remote.
func failureOf(v *proof.RemoteView, remote string) (machine.RemoteFailure, bool) {
	for _, f := range v.Failures {
		if f.Remote == remote {
			return f, true
		}
	}
	return machine.RemoteFailure{}, false
}

// TestAdvertiseNewlineURL: a remote URL holding a newline is one URL. `git
// Remote -v` prints it as two lines, the second of which reads as a remote
// named .worktrees/<id> — a path that, asked from the main checkout, is a
// linked tree of this very repository and advertises the tree's own
// branch. custody reads the URL from the configuration, so the only remote
// is origin, asked at the URL's exact bytes: a repository there that does
// not hold the tree's commit proves nothing, one that does proves it.
func TestAdvertiseNewlineURL(t *testing.T) {
	t.Parallel()
	s, dir, local, _ := selfFixture(t)
	tree := filepath.Join(dir, ".worktrees", "x-1a2b3c")
	s.Git(dir, "worktree", "add", "-q", "-b", "custody/x-1a2b3c", tree, local)
	pub := filepath.Join(s.Root, "pub\n.worktrees/x-1a2b3c\tfoo")
	s.Git(s.Root, "init", "-q", "--bare", pub)
	s.Git(dir, "remote", "set-url", "origin", pub)
	if out := s.Git(dir, "remote", "-v"); !strings.Contains(out, "\n.worktrees/x-1a2b3c\tfoo (fetch)") {
		t.Fatalf("git remote -v does not print the disguised line this test is about:\n%s", out)
	}
	repo := s.Discover(dir)
	v := s.Advertise(repo)
	if !cmp.Equal(v.Remotes, []string{"origin"}) || len(v.Failures) > 0 {
		t.Fatalf("remotes %q, failures %+v; want origin alone, answering", v.Remotes, v.Failures)
	}
	if p := s.Prove(repo, local, v); p != nil {
		t.Fatalf("a commit only in this repository is proven: %+v", *p)
	}
	if v.Push == nil || v.Push.Remote != "origin" || v.Push.Proves != "origin" {
		t.Errorf("push target %+v, want origin", v.Push)
	}
	s.Git(dir, "push", "-q", "origin", "custody/x")
	v = s.Advertise(repo)
	if p := s.Prove(repo, local, v); p == nil || p.Remote != "origin" || p.Ref != "refs/heads/custody/x" {
		t.Errorf("pushed to origin's URL, the commit is proven by %+v; want origin's refs/heads/custody/x", p)
	}
	// A newline URL that is this repository (a symlink so named), and one
	// where nothing is: each a failure of its own remote, in one line.
	alias := filepath.Join(s.Root, "alias\n.worktrees/x-1a2b3c\tfoo")
	if err := os.MkdirAll(filepath.Dir(alias), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, alias); err != nil {
		t.Fatal(err)
	}
	s.Git(dir, "remote", "add", "loop", alias)
	s.Git(dir, "remote", "add", "gone", filepath.Join(s.Root, "gone\n.worktrees/x-1a2b3c\tfoo"))
	v = s.Advertise(repo)
	if !cmp.Equal(v.Remotes, []string{"origin", "loop", "gone"}) {
		t.Errorf("remotes %q, want origin, loop, gone", v.Remotes)
	}
	for r, want := range map[string]string{"loop": "is this repository itself", "gone": "exit 128"} {
		if f, ok := failureOf(v, r); !ok || !strings.Contains(f.Error, want) || strings.Contains(f.Error, "\n") {
			t.Errorf("remote %s: failure %+v; want one line saying %q", r, f, want)
		}
	}
}

// TestAdvertiseOddRemoteNamesAndURLs: remote names with dots, spaces,
// shell characters, a leading dash and bytes that are not UTF-8, and URLs
// with spaces and such bytes, are each asked exactly: each proves the
// Commit pushed to it alone.
func TestAdvertiseOddRemoteNamesAndURLs(t *testing.T) {
	t.Parallel()
	s, dir, local, _ := selfFixture(t)
	for i, c := range []struct{ name, dir string }{
		{"a.b", "dotted.git"},
		{"with space", "with space.git"},
		{"semi;colon$(touch x)", "plain.git"},
		{"-dash", "dash.git"},
		{"bytes\xff", "b\xfeytes and space.git"},
	} {
		bare := filepath.Join(s.Root, "names", c.dir)
		s.Git(s.Root, "init", "-q", "--bare", bare)
		s.Git(dir, "push", "-q", bare, "custody/x")
		s.Git(dir, "remote", "remove", "origin")
		s.Git(dir, "config", "remote."+c.name+".url", bare)
		repo := s.Discover(dir)
		v := s.Advertise(repo)
		if len(v.Failures) > 0 || !cmp.Equal(v.Remotes, []string{c.name}) {
			t.Errorf("%d %q: remotes %q, failures %+v", i, c.name, v.Remotes, v.Failures)
		}
		if p := s.Prove(repo, local, v); p == nil || p.Remote != c.name {
			t.Errorf("%d %q: proof %+v, want one by the remote", i, c.name, p)
		}
		s.Git(dir, "config", "--remove-section", "remote."+c.name)
		s.Git(dir, "remote", "add", "origin", s.Remote)
	}
}

// TestAdvertiseRewrittenURL: a URL that url.<base>.insteadOf rewrites is
// identified as git reads it: rewritten to this repository it is refused
// (as it is when another remote's name is given as the URL and that
// Remote is this repository), rewritten to another it proves.
func TestAdvertiseRewrittenURL(t *testing.T) {
	t.Parallel()
	s, dir, local, _ := selfFixture(t)
	s.Git(dir, "config", "url."+dir+"/.insteadOf", "self:")
	s.Git(dir, "config", "url."+s.Root+"/.insteadOf", "pub:")
	s.Git(dir, "remote", "add", "disguise", "self:.git")
	s.Git(dir, "remote", "add", "loop", ".")
	s.Git(dir, "remote", "add", "nick", "loop")
	repo := s.Discover(dir)
	v := s.Advertise(repo)
	for _, r := range []string{"disguise", "loop", "nick"} {
		if f, ok := failureOf(v, r); !ok || !strings.Contains(f.Error, "is this repository itself") {
			t.Errorf("remote %s: failure %+v, want it refused as this repository", r, f)
		}
	}
	if p := s.Prove(repo, local, v); p != nil {
		t.Errorf("a commit only here is proven: %+v", *p)
	}
	for _, r := range []string{"disguise", "loop", "nick"} {
		s.Git(dir, "remote", "remove", r)
	}
	s.Git(dir, "push", "-q", "origin", "custody/x")
	s.Git(dir, "remote", "set-url", "origin", "pub:origin.git")
	v = s.Advertise(repo)
	if p := s.Prove(repo, local, v); p == nil || p.Remote != "origin" || len(v.Failures) > 0 {
		t.Errorf("origin rewritten to the real origin: proof %+v, failures %+v", p, v.Failures)
	}
}

// TestAdvertiseMultipleURLs: a remote with several url values is fetched
// from the first, and only the first is asked: a second that is this
// repository does not stop the first from proving (a push reaches both),
// and a first that is this repository is refused whatever follows it.
func TestAdvertiseMultipleURLs(t *testing.T) {
	t.Parallel()
	s, dir, local, linked := selfFixture(t)
	s.Git(dir, "push", "-q", "origin", "custody/x")
	s.Git(dir, "remote", "set-url", "--add", "origin", linked)
	repo := s.Discover(dir)
	v := s.Advertise(repo)
	if p := s.Prove(repo, local, v); p == nil || p.Remote != "origin" || len(v.Failures) > 0 {
		t.Errorf("origin's first url holds the commit: proof %+v, failures %+v", p, v.Failures)
	}
	s.Git(dir, "push", "-q", "origin", "--delete", "custody/x")
	s.Git(dir, "remote", "remove", "origin")
	s.Git(dir, "config", "--add", "remote.origin.url", dir)
	s.Git(dir, "config", "--add", "remote.origin.url", s.Remote)
	v = s.Advertise(repo)
	if f, ok := failureOf(v, "origin"); !ok || !strings.Contains(f.Error, "is this repository itself") {
		t.Errorf("origin's first url is this repository: failure %+v", f)
	}
	if p := s.Prove(repo, local, v); p != nil {
		t.Errorf("a commit only here is proven: %+v", *p)
	}
}

// shallowFixture is selfFixture with custody/x two commits above main
// (mid, then local) and a shallow bare clone of custody/x, depth 1,
// registered as remote mirror: it holds local, whose parent mid is past
// its boundary.
func shallowFixture(t *testing.T) (s *gitsandbox.Sandbox, dir, mid, local, mirror string) {
	s, dir, _, _ = selfFixture(t)
	s.Git(dir, "checkout", "-q", "custody/x")
	mid = s.Rev(dir, "HEAD")
	local = s.CommitFile(dir, "second", "also only here\n")
	s.Git(dir, "checkout", "-q", "main")
	mirror = filepath.Join(s.Root, "mirror.git")
	s.Git(s.Root, "clone", "-q", "--bare", "--depth", "1", "--branch", "custody/x", "file://"+dir, mirror)
	if sh := s.Git(mirror, "rev-parse", "--is-shallow-repository"); sh != "true" {
		t.Fatalf("mirror is not shallow: %s", sh)
	}
	s.Git(dir, "remote", "add", "mirror", mirror)
	return s, dir, mid, local, mirror
}

// TestAdvertiseShallowRemote: a shallow local remote proves only the
// history it holds. Its tip, whose parent lies past its boundary and on no
// other remote, is not proven by it, nor is that parent (which ancestry
// in this repository's full history would have proven); once the parent
// is published on origin, the tip is proven by the mirror.
func TestAdvertiseShallowRemote(t *testing.T) {
	t.Parallel()
	s, dir, mid, local, _ := shallowFixture(t)
	repo := s.Discover(dir)
	v := s.Advertise(repo)
	if len(v.Failures) > 0 {
		t.Fatalf("failures %+v", v.Failures)
	}
	for _, h := range []string{local, mid} {
		if p := s.Prove(repo, h, v); p != nil {
			t.Errorf("%s, whose history the shallow mirror lacks, is proven: %+v", h, *p)
		}
		if p, err := proof.Ancestry(t.Context(), s.G, repo, h, v); err != nil || p != nil {
			t.Errorf("Ancestry(%s) = %+v, %v; want no proof", h, p, err)
		}
	}
	if v.Push == nil || v.Push.Remote != "origin" {
		t.Errorf("push target %+v, want origin (the mirror is shallow)", v.Push)
	}
	s.Git(dir, "push", "-q", "origin", mid+":refs/heads/mid")
	v = s.Advertise(repo)
	if p := s.Prove(repo, local, v); p == nil || p.Remote != "mirror" || p.Kind != machine.ProofAncestry {
		t.Errorf("mid on origin, local on the mirror: proof %+v, want ancestry on mirror", p)
	}
}

// TestAdvertisePushTarget: where a retry's push goes. A plain origin is
// pushed by name; a relative origin by its absolute path (a push from
// inside a tree would read the relative URL from there); an origin whose
// pushurl is a fork no remote reads gets the fork added as a remote first;
// with a remote that reads the fork, origin is pushed by name and that
// Remote proves; with origin's push disabled, the remote that pushes where
// it reads is chosen; a pushInsteadOf rewrite names the same repository;
// an origin whose second url is a linked tree of this repository (a push
// there fails: its branch is checked out) is pushed by its first URL;
// with a shallow mirror alone nothing is advised, and why says so.
func TestAdvertisePushTarget(t *testing.T) {
	t.Parallel()
	s, dir, _, linked := selfFixture(t)
	fork := filepath.Join(s.Root, "fork.git")
	s.Git(s.Root, "init", "-q", "--bare", fork)
	repo := s.Discover(dir)
	for _, c := range []struct {
		name   string
		config [][2]string
		want   machine.PushTarget
	}{
		{"plain", nil, machine.PushTarget{Remote: "origin", Proves: "origin"}},
		{"relative", [][2]string{{"remote.origin.url", "../origin.git"}}, machine.PushTarget{URL: s.Remote, Proves: "origin"}},
		{"pushurl", [][2]string{{"remote.origin.pushurl", fork}}, machine.PushTarget{Remote: "origin", URL: fork, AddAs: "fork", Proves: "fork"}},
		{"pushurl read", [][2]string{{"remote.origin.pushurl", fork}, {"remote.mine.url", fork}}, machine.PushTarget{Remote: "origin", Proves: "mine"}},
		{"pushurl taken", [][2]string{{"remote.origin.pushurl", fork}, {"remote.fork.url", "/nonexistent/x.git"}, {"remote.fork.pushurl", "DISABLE"}},
			machine.PushTarget{Remote: "origin", URL: fork, AddAs: "fork-2", Proves: "fork-2"}},
		{"disabled", [][2]string{{"remote.origin.pushurl", "DISABLE"}, {"remote.mine.url", fork}}, machine.PushTarget{Remote: "mine", Proves: "mine"}},
		{"pushinsteadof", [][2]string{{"url.file://" + s.Root + "/.pushInsteadOf", s.Root + "/"}}, machine.PushTarget{Remote: "origin", Proves: "origin"}},
		{"second url here", [][2]string{{"+remote.origin.url", linked}}, machine.PushTarget{URL: s.Remote, Proves: "origin"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _ = s.TryGit(dir, "config", "--remove-section", "remote.origin")
			s.Git(dir, "remote", "add", "origin", s.Remote)
			for _, kv := range c.config {
				if key, add := strings.CutPrefix(kv[0], "+"); add {
					s.Git(dir, "config", "--add", key, kv[1])
				} else {
					s.Git(dir, "config", key, kv[1])
				}
			}
			defer func() {
				for _, kv := range c.config {
					key := strings.TrimPrefix(kv[0], "+")
					sec := key[:strings.LastIndexByte(key, '.')]
					_, _ = s.TryGit(dir, "config", "--remove-section", sec)
				}
			}()
			v := s.Advertise(repo)
			if v.Push == nil {
				t.Fatal("no push target")
			}
			if diff := cmp.Diff(c.want, *v.Push); diff != "" {
				t.Errorf("push target (-want +got):\n%s\nfailures %+v", diff, v.Failures)
			}
		})
	}
	_, _ = s.TryGit(dir, "config", "--remove-section", "remote.origin")
	mirror := filepath.Join(s.Root, "mirror.git")
	s.Git(s.Root, "clone", "-q", "--bare", "--depth", "1", "file://"+dir, mirror)
	s.Git(dir, "remote", "add", "mirror", mirror)
	v := s.Advertise(repo)
	if v.Push == nil || *v.Push != (machine.PushTarget{Why: v.Push.Why}) || !strings.Contains(v.Push.Why, "shallow remote mirror") {
		t.Errorf("a shallow mirror alone: push target %+v, want none, saying it is shallow", v.Push)
	}
}
