package observe_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
)

// sandbox is a set of repositories in one temporary directory, built with
// the real git in an isolated, deterministic environment. Fixture commands
// get their environment explicitly (never t.Setenv), so tests using a
// sandbox may run in parallel.
type sandbox struct {
	t    fixtureT
	root string
	home string
	tick int
	// g is the observe.Git under test. observe.Git runs git with the test
	// process's environment plus its own fixed variables; TestMain pins
	// that environment's HOME and global configuration, so the user's
	// ~/.gitconfig cannot change what is observed.
	g *observe.Git
	// remote is the bare repository registered as origin by newOrigin.
	remote string
}

// fixtureT is what a sandbox needs of its test: a *testing.T, or TestMain's
// stand-in while it builds the templates tests copy.
type fixtureT interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

func newSandbox(t *testing.T) *sandbox {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return newSandboxAt(t, root)
}

// newSandboxAt makes a sandbox in root, an empty directory named by its
// resolved path.
func newSandboxAt(t fixtureT, root string) *sandbox {
	t.Helper()
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	if gitPath, err = filepath.Abs(gitPath); err != nil {
		t.Fatal(err)
	}
	s := &sandbox{t: t, root: root, home: filepath.Join(root, "home")}
	if err := os.MkdirAll(filepath.Join(root, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(s.home, 0o755); err != nil {
		t.Fatal(err)
	}
	s.g = observe.NewGit(&observe.Runner{})
	s.g.Bin = gitPath
	return s
}

// env is the environment of one fixture git command; every command gets a
// later timestamp, so commits are distinct and runs reproducible.
func (s *sandbox) env() []string {
	s.tick++
	date := fmt.Sprintf("@%d +0000", 1767225600+s.tick)
	env := []string{
		"HOME=" + s.home,
		"XDG_CONFIG_HOME=" + filepath.Join(s.home, ".config"),
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Sandbox", "GIT_AUTHOR_EMAIL=sandbox@example.invalid", "GIT_AUTHOR_DATE=" + date,
		"GIT_COMMITTER_NAME=Sandbox", "GIT_COMMITTER_EMAIL=sandbox@example.invalid", "GIT_COMMITTER_DATE=" + date,
		"GIT_EDITOR=true", "GIT_SEQUENCE_EDITOR=true", "GIT_MERGE_AUTOEDIT=no", "GIT_TERMINAL_PROMPT=0",
		"LC_ALL=C", "TZ=UTC",
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "PATH" || k == "TMPDIR" || k == "GOCOVERDIR" {
			env = append(env, kv)
		}
	}
	return env
}

// gitRaw runs git in dir and returns its untouched stdout; a failure fails
// the test.
func (s *sandbox) gitRaw(dir string, args ...string) []byte {
	s.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = s.env()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		s.t.Fatalf("git %s (in %s): %v\n%s", strings.Join(args, " "), dir, err, stderr.String())
	}
	return out
}

// git runs git in dir and returns its stdout without the final newline.
func (s *sandbox) git(dir string, args ...string) string {
	s.t.Helper()
	return strings.TrimRight(string(s.gitRaw(dir, args...)), "\n")
}

// tryGit runs git in dir and returns its combined output and error.
func (s *sandbox) tryGit(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = s.env()
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// gitFails runs a git command that must stop with a non-zero exit (a
// conflict), failing the test if it succeeds.
func (s *sandbox) gitFails(dir string, args ...string) {
	s.t.Helper()
	if out, err := s.tryGit(dir, args...); err == nil {
		s.t.Fatalf("git %s (in %s) succeeded, want it to stop:\n%s", strings.Join(args, " "), dir, out)
	}
}

func (s *sandbox) write(dir, name, content string) {
	s.t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		s.t.Fatal(err)
	}
}

// commitFile writes one file, commits everything in dir and returns HEAD.
func (s *sandbox) commitFile(dir, name, content string) string {
	s.t.Helper()
	s.write(dir, name, content)
	return s.commitAll(dir, "change "+name)
}

// commitAll commits everything in dir and returns the new commit: two git
// commands, the commit's id read from the summary line git prints
// ("[main 0123…] msg", in full with core.abbrev=no).
func (s *sandbox) commitAll(dir, msg string) string {
	s.t.Helper()
	s.git(dir, "add", "-A")
	out := s.git(dir, "-c", "core.abbrev=no", "commit", "-m", msg)
	first, _, _ := strings.Cut(out, "\n")
	if inside, _, ok := strings.Cut(strings.TrimPrefix(first, "["), "] "); ok && strings.HasPrefix(first, "[") {
		if f := strings.Fields(inside); len(f) > 0 && (len(f[len(f)-1]) == 40 || len(f[len(f)-1]) == 64) {
			return f[len(f)-1]
		}
	}
	s.t.Fatalf("git commit (in %s) printed %q, not a summary naming the commit", dir, out)
	return ""
}

func (s *sandbox) rev(dir, rev string) string {
	s.t.Helper()
	return s.git(dir, "rev-parse", "--verify", "-q", rev)
}

// newOrigin makes the bare repository origin.git and a clone "repo" with one
// commit (README) on main, pushed. It returns the clone. The pair is a copy
// of the one TestMain built (originTemplate): the same commit, made by
// copying files instead of by seven git commands.
func (s *sandbox) newOrigin() string {
	s.t.Helper()
	if originTemplate != nil {
		return s.copyOrigin(originTemplate)
	}
	s.remote = filepath.Join(s.root, "origin.git")
	s.git(s.root, "init", "-q", "--bare", "-b", "main", s.remote)
	dir := filepath.Join(s.root, "repo")
	s.git(s.root, "init", "-q", "-b", "main", dir)
	s.commitFile(dir, "README", "fixture\n")
	s.git(dir, "remote", "add", "origin", s.remote)
	s.git(dir, "push", "-q", "-u", "origin", "main")
	return dir
}

// copyOrigin copies from's origin.git and clone "repo" into s, whose root
// holds neither, and points the clone's origin at the copy. The copy's
// commits are from's, and its fixture commands go on from from's clock.
// It returns the clone.
func (s *sandbox) copyOrigin(from *sandbox) string {
	s.t.Helper()
	for _, name := range []string{"origin.git", "repo"} {
		if err := copyTree(filepath.Join(from.root, name), filepath.Join(s.root, name)); err != nil {
			s.t.Fatal(err)
		}
	}
	s.remote = filepath.Join(s.root, "origin.git")
	s.tick = from.tick
	dir := filepath.Join(s.root, "repo")
	s.git(dir, "remote", "set-url", "origin", s.remote)
	return dir
}

func (s *sandbox) discover(dir string) observe.Repo {
	s.t.Helper()
	repo, err := observe.Discover(context.Background(), s.g, dir)
	if err != nil {
		s.t.Fatalf("Discover(%s): %v", dir, err)
	}
	return repo
}

func (s *sandbox) advertise(repo observe.Repo) *observe.RemoteView {
	s.t.Helper()
	v, err := observe.Advertise(context.Background(), s.g, repo)
	if err != nil {
		s.t.Fatalf("Advertise: %v", err)
	}
	return v
}

func (s *sandbox) prove(repo observe.Repo, head string, v *observe.RemoteView) *machine.Proof {
	s.t.Helper()
	p, err := observe.Prove(context.Background(), s.g, repo, head, v)
	if err != nil {
		s.t.Fatalf("Prove(%s): %v", head, err)
	}
	return p
}

// proofOpts compare proofs with the covered commits in any order.
var proofOpts = cmp.Options{cmpopts.SortSlices(func(a, b string) bool { return a < b }), cmpopts.EquateEmpty()}

func checkProof(t *testing.T, name string, got, want *machine.Proof) {
	t.Helper()
	if d := cmp.Diff(want, got, proofOpts); d != "" {
		t.Errorf("%s: proof mismatch (-want +got):\n%s", name, d)
	}
}

func tipRefs(v *observe.RemoteView) []string {
	var out []string
	for _, t := range v.Tips {
		out = append(out, t.Remote+" "+t.Ref)
	}
	return out
}

func TestProveAncestry(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	dir := s.newOrigin()
	c1 := s.commitFile(dir, "one", "1\n")
	c2 := s.commitFile(dir, "two", "2\n")
	s.git(dir, "push", "-q", "origin", "main")

	// x1 <- x2, advertised only as refs/custom/x.
	s.git(dir, "checkout", "-q", "--detach", c2)
	x1 := s.commitFile(dir, "x", "1\n")
	x2 := s.commitFile(dir, "x", "2\n")
	s.git(dir, "push", "-q", "origin", "HEAD:refs/custom/x")
	// A pull request head.
	s.git(dir, "checkout", "-q", "--detach", c2)
	pr := s.commitFile(dir, "pr", "1\n")
	s.git(dir, "push", "-q", "origin", "HEAD:refs/pull/7/head")
	// An annotated tag: --refs advertises the tag object, not the commit.
	s.git(dir, "checkout", "-q", "--detach", c2)
	tagged := s.commitFile(dir, "tagged", "1\n")
	s.git(dir, "tag", "-a", "-m", "release", "v1")
	s.git(dir, "push", "-q", "origin", "refs/tags/v1")
	tagObj := s.rev(dir, "refs/tags/v1")
	// Known only here: the remote-tracking ref of a branch the remote has
	// since deleted, and local tags never pushed.
	s.git(dir, "checkout", "-q", "--detach", c2)
	local := s.commitFile(dir, "local", "1\n")
	s.git(dir, "push", "-q", "origin", "HEAD:refs/heads/gone")
	s.git(s.remote, "update-ref", "-d", "refs/heads/gone")
	s.git(dir, "tag", "local-light", local)
	s.git(dir, "tag", "-a", "-m", "local", "local-annotated", local)
	s.git(dir, "checkout", "-q", "main")
	if s.rev(dir, "refs/remotes/origin/gone") != local {
		t.Fatal("fixture: the stale remote-tracking ref is missing")
	}

	repo := s.discover(dir)
	v := s.advertise(repo)
	if d := cmp.Diff([]string{"origin"}, v.Remotes); d != "" {
		t.Errorf("Remotes (-want +got):\n%s", d)
	}
	if len(v.Failures) != 0 {
		t.Errorf("Failures = %+v, want none", v.Failures)
	}
	// Default branch first; only what the remote advertises, never the
	// local remote-tracking ref or the local tags.
	wantTips := []string{"origin refs/heads/main", "origin refs/tags/v1", "origin refs/custom/x", "origin refs/pull/7/head"}
	if d := cmp.Diff(wantTips, tipRefs(v)); d != "" {
		t.Errorf("advertised tips (-want +got):\n%s", d)
	}

	ancestry := func(ref, tip, head string) *machine.Proof {
		return &machine.Proof{Kind: machine.ProofAncestry, Remote: "origin", Ref: ref, Tip: tip, Head: head}
	}
	tests := []struct {
		name string
		head string
		want *machine.Proof
	}{
		{"head is the advertised main", c2, ancestry("refs/heads/main", c2, c2)},
		{"head behind main", c1, ancestry("refs/heads/main", c2, c1)},
		{"head is a custom ref's tip", x2, ancestry("refs/custom/x", x2, x2)},
		{"head only below a custom ref", x1, ancestry("refs/custom/x", x2, x1)},
		{"head is a pull request head", pr, ancestry("refs/pull/7/head", pr, pr)},
		// The tip is what was advertised: the tag object.
		{"head under an advertised annotated tag", tagged, ancestry("refs/tags/v1", tagObj, tagged)},
		{"head only under a local remote-tracking ref and local tags", local, nil},
	}
	for _, tc := range tests {
		checkProof(t, tc.name, s.prove(repo, tc.head, v), tc.want)
	}
	// Without any advertised tip nothing is proof, whatever is local.
	checkProof(t, "empty view", s.prove(repo, c1, &observe.RemoteView{Remotes: []string{"origin"}}), nil)
	checkProof(t, "nil view", s.prove(repo, c1, nil), nil)
}

func TestProvePatchEquivalent(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	dir := s.newOrigin()
	base := s.rev(dir, "HEAD")

	// feat: a new file, a change to an existing one, a binary change.
	s.git(dir, "checkout", "-q", "-b", "feat")
	a1 := s.commitFile(dir, "feat/new.txt", "new\n")
	a2 := s.commitFile(dir, "README", "fixture\nmore\n")
	a3 := s.commitFile(dir, "feat/blob.bin", "\x00\x01\x02binary\x00\xff\n")
	// part: only its first commit gets published.
	s.git(dir, "checkout", "-q", "-b", "part", base)
	b1 := s.commitFile(dir, "part/one", "1\n")
	b2 := s.commitFile(dir, "part/two", "2\n")

	// The rebase merge: main advances, then the commits are cherry-picked
	// onto it and pushed.
	s.git(dir, "checkout", "-q", "main")
	s.commitFile(dir, "main-only", "m\n")
	s.git(dir, "cherry-pick", a1, a2, a3, b1)
	s.git(dir, "push", "-q", "origin", "main")
	tip := s.rev(dir, "HEAD")

	repo := s.discover(dir)
	v := s.advertise(repo)
	pe := func(head string, commits ...string) *machine.Proof {
		return &machine.Proof{Kind: machine.ProofPatchEquivalent, Remote: "origin", Ref: "refs/heads/main", Tip: tip, Head: head, Commits: commits}
	}
	checkProof(t, "rebase-merged branch", s.prove(repo, a3, v), pe(a3, a1, a2, a3))
	checkProof(t, "rebase-merged branch, earlier head", s.prove(repo, a2, v), pe(a2, a1, a2))
	checkProof(t, "published first commit", s.prove(repo, b1, v), pe(b1, b1))
	// b2 was never published: neither patch-equivalent nor squash-merged.
	checkProof(t, "partly published branch", s.prove(repo, b2, v), nil)
}

func TestProveWhitespaceOnlyDifference(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	dir := s.newOrigin()
	s.commitFile(dir, "code.txt", "a\nb\nc\n")
	s.git(dir, "push", "-q", "origin", "main")

	s.git(dir, "checkout", "-q", "-b", "ws")
	w1 := s.commitFile(dir, "code.txt", "a\nB\nc\n")
	s.git(dir, "checkout", "-q", "main")
	s.commitFile(dir, "other", "o\n")
	// Published with a trailing space the branch does not have.
	s.write(dir, "code.txt", "a\nB \nc\n")
	s.commitAll(dir, "change code.txt")
	s.git(dir, "push", "-q", "origin", "main")
	// git's own --cherry-pick ignores whitespace and calls w1 published:
	// the fixture really needs the verbatim patch-id check.
	if out := s.git(dir, "rev-list", "--cherry-pick", "--right-only", "--no-merges", "main..."+w1); out != "" {
		t.Fatalf("fixture: rev-list --cherry-pick does not consider the whitespace variant equal: %q", out)
	}

	repo := s.discover(dir)
	// The line "B" the branch wrote is published nowhere (main has "B "):
	// not patch-equivalent, and merging w1 into main conflicts on that line,
	// so no squash-merged proof either.
	checkProof(t, "whitespace-only difference", s.prove(repo, w1, s.advertise(repo)), nil)

	// Once main's tree holds exactly the branch's line, every change w1
	// makes is published: squash-merged is right, and still not
	// patch-equivalent (no commit on main has w1's exact patch).
	s.commitFile(dir, "code.txt", "a\nB\nc\n")
	s.git(dir, "push", "-q", "origin", "main")
	tip := s.rev(dir, "HEAD")
	want := &machine.Proof{Kind: machine.ProofSquashMerged, Remote: "origin", Ref: "refs/heads/main", Tip: tip, Head: w1,
		Base: s.git(dir, "merge-base", "main", w1), Commits: []string{w1}}
	checkProof(t, "whitespace fixed on main later", s.prove(repo, w1, s.advertise(repo)), want)
}

// TestProvePatchEquivalenceDefeated: a merge, root or empty unique commit
// defeats patch equivalence, even when every patch is on main.
func TestProvePatchEquivalenceDefeated(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	dir := s.newOrigin()
	base := s.rev(dir, "HEAD")

	// merged: a1 plus a merge of side (s1).
	s.git(dir, "checkout", "-q", "-b", "side", base)
	s1 := s.commitFile(dir, "merge/side", "s\n")
	s.git(dir, "checkout", "-q", "-b", "merged", base)
	a1 := s.commitFile(dir, "merge/mine", "m\n")
	s.git(dir, "merge", "-q", "--no-ff", "-m", "merge side", "side")
	mg := s.rev(dir, "HEAD")
	// evil: like merged, but the merge commit adds a file of its own.
	s.git(dir, "checkout", "-q", "-b", "side2", base)
	s2 := s.commitFile(dir, "evil/side", "s\n")
	s.git(dir, "checkout", "-q", "-b", "evil", base)
	e1 := s.commitFile(dir, "evil/mine", "m\n")
	s.git(dir, "merge", "-q", "--no-ff", "--no-commit", "side2")
	s.write(dir, "evil/only-in-merge", "unpublished\n")
	evil := s.commitAll(dir, "evil merge")
	// root: an orphan branch whose one commit adds a file.
	s.git(dir, "switch", "-q", "--orphan", "rootb")
	r1 := s.commitFile(dir, "root/file", "r\n")
	// empty: a real commit, then an empty one.
	s.git(dir, "checkout", "-q", "-b", "empty", base)
	p1 := s.commitFile(dir, "empty/file", "e\n")
	s.git(dir, "commit", "-q", "--allow-empty", "-m", "empty")
	em := s.rev(dir, "HEAD")

	// Every non-empty, non-merge patch above is published on main.
	s.git(dir, "checkout", "-q", "main")
	s.commitFile(dir, "main/advance", "m\n")
	s.git(dir, "cherry-pick", a1, s1, e1, s2, r1, p1)
	s.git(dir, "push", "-q", "origin", "main")
	tip := s.rev(dir, "HEAD")

	repo := s.discover(dir)
	v := s.advertise(repo)
	pe := func(head string, commits ...string) *machine.Proof {
		return &machine.Proof{Kind: machine.ProofPatchEquivalent, Remote: "origin", Ref: "refs/heads/main", Tip: tip, Head: head, Commits: commits}
	}
	squash := func(head string, commits ...string) *machine.Proof {
		return &machine.Proof{Kind: machine.ProofSquashMerged, Remote: "origin", Ref: "refs/heads/main", Tip: tip, Head: head,
			Base: base, Commits: commits}
	}
	// The same commits without the defeating one are patch-equivalent.
	checkProof(t, "a1 alone", s.prove(repo, a1, v), pe(a1, a1))
	checkProof(t, "p1 alone", s.prove(repo, p1, v), pe(p1, p1))
	// A merge among the unique commits: not patch-equivalent. Every change
	// the merge brings is on main, so the tree check rightly proves it
	// squash-merged.
	checkProof(t, "merge commit", s.prove(repo, mg, v), squash(mg, a1, s1, mg))
	// An evil merge holds a change no remote has: nothing proves it.
	checkProof(t, "evil merge", s.prove(repo, evil, v), nil)
	// A root commit: not patch-equivalent, and unrelated histories do not
	// merge, so nothing proves it although its patch is on main.
	checkProof(t, "root commit", s.prove(repo, r1, v), nil)
	// An empty commit: not patch-equivalent; it changes nothing, so the
	// tree check proves the branch squash-merged.
	checkProof(t, "empty commit", s.prove(repo, em, v), squash(em, p1, em))
}

func TestProveSquashMerged(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	dir := s.newOrigin()
	var big []string
	for i := 1; i <= 20; i++ {
		big = append(big, fmt.Sprintf("line %d", i))
	}
	bigFile := func(edit map[int]string) string {
		lines := append([]string(nil), big...)
		for i, l := range edit {
			lines[i-1] = l
		}
		return strings.Join(lines, "\n") + "\n"
	}
	s.commitFile(dir, "big.txt", bigFile(nil))
	s.git(dir, "push", "-q", "origin", "main")
	base := s.rev(dir, "HEAD")

	// sq: three commits, squash-merged whole.
	s.git(dir, "checkout", "-q", "-b", "sq", base)
	sq1 := s.commitFile(dir, "sq/a.txt", "a\n")
	sq2 := s.commitFile(dir, "README", "fixture\nsquashed\n")
	sq3 := s.commitFile(dir, "sq/b.txt", "b\n")
	// drop: three commits; the squash drops the change to line 18, far from
	// the others, so the merge is clean but not the tip's tree.
	s.git(dir, "checkout", "-q", "-b", "drop", base)
	d1 := s.commitFile(dir, "big.txt", bigFile(map[int]string{2: "line two"}))
	d2 := s.commitFile(dir, "big.txt", bigFile(map[int]string{2: "line two", 18: "line eighteen"}))
	d3 := s.commitFile(dir, "drop/new.txt", "x\ny\n")
	// adj: the squash drops a line in the middle of an added file: the
	// merge conflicts.
	s.git(dir, "checkout", "-q", "-b", "adj", base)
	s.commitFile(dir, "adj/list.txt", "one\ntwo\nthree\n")
	j2 := s.commitFile(dir, "adj/other", "o\n")

	s.git(dir, "checkout", "-q", "main")
	s.commitFile(dir, "main/advance", "m\n")
	s.git(dir, "merge", "-q", "--squash", "sq")
	s.commitAll(dir, "squash sq")
	s.git(dir, "merge", "-q", "--squash", "drop")
	s.write(dir, "big.txt", bigFile(map[int]string{2: "line two"}))
	s.commitAll(dir, "squash drop, without line 18")
	s.git(dir, "merge", "-q", "--squash", "adj")
	s.write(dir, "adj/list.txt", "one\nthree\n")
	s.commitAll(dir, "squash adj, without two")
	s.git(dir, "push", "-q", "origin", "main")
	tip := s.rev(dir, "HEAD")

	repo := s.discover(dir)
	v := s.advertise(repo)
	squash := func(head string, commits ...string) *machine.Proof {
		return &machine.Proof{Kind: machine.ProofSquashMerged, Remote: "origin", Ref: "refs/heads/main", Tip: tip, Head: head,
			Base: base, Commits: commits}
	}
	checkProof(t, "squash of three commits", s.prove(repo, sq3, v), squash(sq3, sq1, sq2, sq3))
	checkProof(t, "squash that dropped a line (clean merge)", s.prove(repo, d3, v), nil)
	checkProof(t, "squash that dropped a line (conflict)", s.prove(repo, j2, v), nil)
	// d1's own change (line 2) is published: proven, while d2 is not.
	checkProof(t, "the published part of a partly squashed branch", s.prove(repo, d1, v), squash(d1, d1))
	checkProof(t, "the unpublished line", s.prove(repo, d2, v), nil)
}

// forEachRef lists every ref of the repository at dir with its value.
func (s *sandbox) forEachRef(dir string) string {
	s.t.Helper()
	return s.git(dir, "for-each-ref", "--format=%(refname) %(objectname) %(symref)")
}

func TestAdvertiseFetchesMissingObjectsIntoNoRef(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	dir := s.newOrigin()
	base := s.rev(dir, "HEAD")
	// feat: pushed from here, rebase-merged from another clone, then
	// deleted on the remote (this clone keeps its remote-tracking ref).
	s.git(dir, "checkout", "-q", "-b", "feat")
	f1 := s.commitFile(dir, "feat/1", "1\n")
	f2 := s.commitFile(dir, "feat/2", "2\n")
	s.git(dir, "push", "-q", "origin", "feat")
	// g: pushed from here; the other clone builds on it.
	s.git(dir, "checkout", "-q", "-b", "g", base)
	g1 := s.commitFile(dir, "g/1", "1\n")
	s.git(dir, "push", "-q", "origin", "g")
	s.git(dir, "checkout", "-q", "main")

	other := filepath.Join(s.root, "other")
	s.git(s.root, "clone", "-q", s.remote, other)
	s.commitFile(other, "other/advance", "a\n")
	s.git(other, "cherry-pick", f1, f2)
	s.git(other, "push", "-q", "origin", "main", ":refs/heads/feat")
	tip := s.rev(other, "HEAD")
	s.git(other, "checkout", "-q", "-b", "g", "origin/g")
	g2 := s.commitFile(other, "g/2", "2\n")
	s.git(other, "push", "-q", "origin", "g")
	for _, c := range []string{tip, g2} {
		if _, err := s.tryGit(dir, "cat-file", "-e", c); err == nil {
			t.Fatalf("fixture: %s is already present locally", c)
		}
	}

	fetchHead := filepath.Join(dir, ".git", "FETCH_HEAD")
	before := s.forEachRef(dir)
	repo := s.discover(dir)
	v := s.advertise(repo)
	if d := cmp.Diff(before, s.forEachRef(dir)); d != "" {
		t.Errorf("Advertise changed local refs (-before +after):\n%s", d)
	}
	if _, err := os.Lstat(fetchHead); err == nil {
		t.Errorf("Advertise wrote %s", fetchHead)
	}
	if len(v.Failures) != 0 {
		t.Errorf("Failures = %+v, want none", v.Failures)
	}
	for _, c := range []string{tip, g2} {
		if out, err := s.tryGit(dir, "cat-file", "-e", c+"^{commit}"); err != nil {
			t.Errorf("advertised commit %s was not fetched: %s", c, out)
		}
	}
	if d := cmp.Diff([]string{"origin refs/heads/main", "origin refs/heads/g"}, tipRefs(v)); d != "" {
		t.Errorf("advertised tips (-want +got):\n%s", d)
	}

	checkProof(t, "rebase-merged from another clone", s.prove(repo, f2, v),
		&machine.Proof{Kind: machine.ProofPatchEquivalent, Remote: "origin", Ref: "refs/heads/main", Tip: tip, Head: f2, Commits: []string{f1, f2}})
	checkProof(t, "built upon by another clone", s.prove(repo, g1, v),
		&machine.Proof{Kind: machine.ProofAncestry, Remote: "origin", Ref: "refs/heads/g", Tip: g2, Head: g1})
	if d := cmp.Diff(before, s.forEachRef(dir)); d != "" {
		t.Errorf("Prove changed local refs (-before +after):\n%s", d)
	}
}

func TestAdvertiseRemoteThatDoesNotAnswer(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	dir := s.newOrigin()
	c1 := s.rev(dir, "HEAD")
	c2 := s.commitFile(dir, "two", "2\n")
	s.git(dir, "push", "-q", "origin", "main")
	s.git(dir, "remote", "add", "dead", filepath.Join(s.root, "no", "such", "repo.git"))
	notGit := filepath.Join(s.root, "not-a-repo")
	if err := os.Mkdir(notGit, 0o755); err != nil {
		t.Fatal(err)
	}
	s.git(dir, "remote", "add", "notgit", notGit)

	repo := s.discover(dir)
	v := s.advertise(repo)
	remotes := append([]string(nil), v.Remotes...)
	sort.Strings(remotes)
	if d := cmp.Diff([]string{"dead", "notgit", "origin"}, remotes); d != "" {
		t.Errorf("Remotes (-want +got):\n%s", d)
	}
	var failed []string
	for _, f := range v.Failures {
		failed = append(failed, f.Remote)
		if f.Error == "" {
			t.Errorf("failure of %s has no error", f.Remote)
		}
	}
	sort.Strings(failed)
	if d := cmp.Diff([]string{"dead", "notgit"}, failed); d != "" {
		t.Errorf("Failures (-want +got):\n%s", d)
	}
	if d := cmp.Diff(v.Failures, v.Evidence().Unavailable); d != "" {
		t.Errorf("Evidence().Unavailable differs from Failures:\n%s", d)
	}
	if d := cmp.Diff([]string{"origin refs/heads/main"}, tipRefs(v)); d != "" {
		t.Errorf("advertised tips (-want +got):\n%s", d)
	}
	checkProof(t, "proof from the remote that answered", s.prove(repo, c1, v),
		&machine.Proof{Kind: machine.ProofAncestry, Remote: "origin", Ref: "refs/heads/main", Tip: c2, Head: c1})
}

// TestProveIgnoresNonCommitTips: a remote may advertise a tag of a blob or a
// tree (git.git itself has one). Such a tip proves nothing, and must not keep
// the other tips from proving head.
func TestProveIgnoresNonCommitTips(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	dir := s.newOrigin()
	base := s.rev(dir, "HEAD")
	s.write(s.root, "key.asc", "-----BEGIN PGP PUBLIC KEY BLOCK-----\n")
	blob := s.git(dir, "hash-object", "-w", filepath.Join(s.root, "key.asc"))
	s.git(dir, "tag", "gpg-key", blob)
	s.git(dir, "push", "-q", "origin", "refs/tags/gpg-key")

	// x1 only below refs/custom/x.
	s.git(dir, "checkout", "-q", "--detach", base)
	x1 := s.commitFile(dir, "x", "1\n")
	x2 := s.commitFile(dir, "x", "2\n")
	s.git(dir, "push", "-q", "origin", "HEAD:refs/custom/x")
	// sq: squash-merged into main.
	s.git(dir, "checkout", "-q", "-b", "sq", base)
	s.commitFile(dir, "sq/a", "a\n")
	sq2 := s.commitFile(dir, "sq/b", "b\n")
	s.git(dir, "checkout", "-q", "main")
	s.git(dir, "merge", "-q", "--squash", "sq")
	s.commitAll(dir, "squash sq")
	s.git(dir, "push", "-q", "origin", "main")
	tip := s.rev(dir, "HEAD")

	repo := s.discover(dir)
	v := s.advertise(repo)
	// The blob tag is advertised but names no commit: Advertise drops it.
	if d := cmp.Diff([]string{"origin refs/heads/main", "origin refs/custom/x"}, tipRefs(v)); d != "" {
		t.Fatalf("advertised tips (-want +got):\n%s", d)
	}
	tests := []struct {
		name string
		head string
		want *machine.Proof
	}{
		{"ancestry through a tip ranked after the blob tag", x1,
			&machine.Proof{Kind: machine.ProofAncestry, Remote: "origin", Ref: "refs/custom/x", Tip: x2, Head: x1}},
		{"squash-merged with a blob tag advertised", sq2,
			&machine.Proof{Kind: machine.ProofSquashMerged, Remote: "origin", Ref: "refs/heads/main", Tip: tip, Head: sq2,
				Base: base, Commits: []string{s.rev(dir, "sq~1"), sq2}}},
	}
	for _, tc := range tests {
		got, err := observe.Prove(context.Background(), s.g, repo, tc.head, v)
		if err != nil {
			t.Errorf("%s: Prove: %v", tc.name, err)
			continue
		}
		checkProof(t, tc.name, got, tc.want)
	}
}

// TestGitErrorNamesTheFailure: the environment observe.Git sets
// (GIT_GRAFT_FILE=/dev/null) makes every commit-reading git print an
// eight-line deprecation hint on stderr before its real error. An error
// from observe.Git, which shows stderr's first line, must still say what
// failed.
func TestGitErrorNamesTheFailure(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	dir := s.newOrigin()
	missing := strings.Repeat("1", 40)
	_, err := s.g.Observe(context.Background(), dir, "merge-base", "--is-ancestor", "HEAD", missing)
	if err == nil {
		t.Fatal("merge-base against a missing commit succeeded")
	}
	if msg := err.Error(); strings.Contains(msg, "hint:") || !strings.Contains(msg, "fatal:") {
		t.Errorf("error = %q, want git's own \"fatal: ...\" line, not a hint", msg)
	}
}

// TestProveSquashIgnoresMergeDrivers: a repository may configure a merge
// driver that keeps one side (the common `merge=ours` recipe: a
// .gitattributes line plus merge.ours.driver=true). git merge-tree runs it,
// so merging head into the tip "yields the tip's tree" although head's
// change to that file is published nowhere. The squash check must not let
// configured drivers decide: a branch whose only change is lost that way is
// not squash-merged.
func TestProveSquashIgnoresMergeDrivers(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	dir := s.newOrigin()
	s.write(dir, ".gitattributes", "settings.txt merge=ours\n")
	s.commitFile(dir, "settings.txt", "base\n")
	s.git(dir, "push", "-q", "origin", "main")
	s.git(dir, "config", "merge.ours.driver", "true")

	s.git(dir, "checkout", "-q", "-b", "work")
	work := s.commitFile(dir, "settings.txt", "the branch's work, on no remote\n")
	s.git(dir, "checkout", "-q", "main")
	s.commitFile(dir, "settings.txt", "main's own change\n")
	s.git(dir, "push", "-q", "origin", "main")
	if out, err := s.tryGit(dir, "grep", "-q", "branch's work", "main", "--"); err == nil {
		t.Fatalf("fixture: main has the branch's work: %s", out)
	}

	repo := s.discover(dir)
	checkProof(t, "change kept out by a merge driver", s.prove(repo, work, s.advertise(repo)), nil)
}

// TestProvePatchEquivalentWithUserLogConfig: configuration that changes
// `git log`'s output must not change the proof. With log.abbrevCommit=true
// the "commit <id>" lines patch-id reads are abbreviated, and patch-id
// attributes every patch to commit 0000...: a rebase-merged branch is no
// longer found patch-equivalent.
func TestProvePatchEquivalentWithUserLogConfig(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	dir := s.newOrigin()
	s.git(dir, "checkout", "-q", "-b", "feat")
	a1 := s.commitFile(dir, "feat/1", "1\n")
	a2 := s.commitFile(dir, "feat/2", "2\n")
	s.git(dir, "checkout", "-q", "main")
	s.commitFile(dir, "main-only", "m\n")
	s.git(dir, "cherry-pick", a1, a2)
	s.git(dir, "push", "-q", "origin", "main")
	tip := s.rev(dir, "HEAD")
	want := &machine.Proof{Kind: machine.ProofPatchEquivalent, Remote: "origin", Ref: "refs/heads/main", Tip: tip, Head: a2, Commits: []string{a1, a2}}

	repo := s.discover(dir)
	v := s.advertise(repo)
	checkProof(t, "default configuration", s.prove(repo, a2, v), want)
	for _, kv := range [][2]string{
		{"log.abbrevCommit", "true"},
		{"log.decorate", "full"},
		{"log.showSignature", "true"},
		{"diff.noprefix", "true"},
		{"diff.mnemonicPrefix", "true"},
		{"color.ui", "always"},
	} {
		s.git(dir, "config", kv[0], kv[1])
		checkProof(t, kv[0]+"="+kv[1], s.prove(repo, a2, v), want)
		s.git(dir, "config", "--unset", kv[0])
	}
}

// TestAdvertiseSelfRemote: a remote whose URL is this very repository
// (`git remote add self .`, or the path of the main checkout) advertises
// the local branches. Those are local refs, which are never proof: a commit
// only on a local branch must not be proven by it.
func TestAdvertiseSelfRemote(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	dir := s.newOrigin()
	s.git(dir, "checkout", "-q", "-b", "custody/x")
	local := s.commitFile(dir, "only-here", "unpushed\n")
	s.git(dir, "checkout", "-q", "main")
	for _, url := range []string{".", dir, "file://" + dir} {
		s.git(dir, "remote", "add", "self", url)
		repo := s.discover(dir)
		v, err := observe.Advertise(context.Background(), s.g, repo)
		if err != nil {
			t.Fatalf("Advertise: %v", err)
		}
		p, err := observe.Prove(context.Background(), s.g, repo, local, v)
		if err != nil {
			t.Errorf("url %s: Prove: %v", url, err)
		} else if p != nil {
			t.Errorf("url %s: a commit only on a local branch is proven by the repository itself: %+v", url, *p)
		}
		s.git(dir, "remote", "remove", "self")
	}
}
