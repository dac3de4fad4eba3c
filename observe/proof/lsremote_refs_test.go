package proof

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/observe/internal/realgit"
)

// TestRefsOnlyIsWhatRefsPrints: of one remote's advertisement, the lines
// refsOnly keeps of `ls-remote --symref` parse to exactly the refs `ls-remote
// --refs` prints, and symrefHead finds HEAD's branch in the same output: a
// remote with branches of odd names, light and annotated tags, a symref
// other than HEAD, a one-level ref and names git refuses written straight
// into its packed-refs.
func TestRefsOnlyIsWhatRefsPrints(t *testing.T) {
	t.Parallel()
	g := realgit.NewParserGit(t)
	root := realgit.ParserRoot(t)
	repo := filepath.Join(root, "repo")
	g.Run(root, "init", "-q", "-b", "trunk", repo)
	realgit.WriteParserFile(t, filepath.Join(repo, "a.txt"), "a\n")
	g.Run(repo, "add", ".")
	g.Run(repo, "commit", "-q", "-m", "init")
	g.Run(repo, "branch", "feat/ä")
	g.Run(repo, "branch", "x@y")
	g.Run(repo, "tag", "light")
	g.Run(repo, "tag", "-a", "-m", "annotated", "v1")
	bare := filepath.Join(root, "remote.git")
	g.Run(root, "clone", "-q", "--bare", repo, bare)
	head := g.Rev(repo, "HEAD")
	g.Run(bare, "update-ref", "refs/onelevel", head)
	g.Run(bare, "symbolic-ref", "refs/remotes/up/HEAD", "refs/heads/trunk")
	g.Run(bare, "update-ref", "refs/remotes/up/trunk", head)
	g.Run(bare, "pack-refs", "--all")
	packed := filepath.Join(bare, "packed-refs")
	b, err := os.ReadFile(packed)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"refs/heads/a..b", "refs/heads/.hidden", "refs/heads/x.lock", "refs/heads/end.", "refs/heads/at@{1}", "refs/heads/star*", "refs/heads/q?"} {
		b = append(b, []byte(head+" "+bad+"\n")...)
	}
	if err := os.WriteFile(packed, b, 0o644); err != nil {
		t.Fatal(err)
	}

	want, err := ParseLsRemote(g.Run(repo, "ls-remote", "--refs", bare))
	if err != nil {
		t.Fatal(err)
	}
	both := g.Run(repo, "ls-remote", "--symref", bare)
	got, err := ParseLsRemote(refsOnly(both))
	if err != nil {
		t.Fatalf("refsOnly kept a line --refs never prints: %v\n%s", err, both)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("refs (-ls-remote --refs +refsOnly of --symref):\n%s", d)
	}
	if len(want) < 7 {
		t.Errorf("the remote advertised only %d refs: %v", len(want), want)
	}
	if h := symrefHead(both); h != "refs/heads/trunk" {
		t.Errorf("HEAD points at %q, want refs/heads/trunk", h)
	}
}

// TestRefnameOKIsGits: refnameOK takes exactly the names `git
// check-ref-format` (no options) takes.
func TestRefnameOKIsGits(t *testing.T) {
	t.Parallel()
	for _, name := range []string{
		"heads/main", "heads/feat/ä", "tags/v1", "onelevel", "@", "heads/@", "heads/a@b", "heads/x@{1}", "heads/x@", "heads/{x}",
		"heads/a..b", "heads/.a", "heads/a.", "heads/a./b", "heads/a.lock", "heads/a.lock/b", "heads/a.locked", "heads//a", "/heads/a", "heads/a/",
		"heads/sp ace", "heads/tab\tx", "heads/del\x7f", "heads/ctl\x01", "heads/~t", "heads/c^", "heads/c:d", "heads/q?", "heads/s*",
		"heads/[b", "heads/b]", "heads/back\\slash", "heads/\xff\xfe", "heads/semi;colon", "heads/-dash", "heads/.", "heads/..", "a/b/c/d",
	} {
		err := exec.Command("git", "check-ref-format", name).Run()
		if _, exit := err.(*exec.ExitError); err != nil && !exit {
			t.Fatal(err)
		}
		if got, git := refnameOK(name), err == nil; got != git {
			t.Errorf("refnameOK(%q) = %v, git check-ref-format says %v", name, got, git)
		}
	}
}
