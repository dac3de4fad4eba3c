package remotes

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/internal/gitsandbox"
	"github.com/custody-sh/custody/observe/proof"
)

// TestLocalRemotePath: git's rules for which URLs read a local path, and
// which path: file:// whatever the host, percent escapes decoded (a broken
// escape kept), relative paths against the directory git runs in; network
// URLs, scp-like addresses and transport helpers are not local.
func TestLocalRemotePath(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		url, want string
		local     bool
	}{
		{"/srv/repo", "/srv/repo", true},
		{"/srv/repo/", "/srv/repo", true},
		{".", "/base", true},
		{"../other/.git", "/other/.git", true},
		{"./sub:x", "/base/sub:x", true},
		{"file:///srv/repo", "/srv/repo", true},
		{"file://localhost/srv/repo", "/srv/repo", true},
		{"file://any.host/srv/repo", "/srv/repo", true},
		{"file://user:secret@localhost/srv/repo", "/srv/repo", true},
		{"file:///srv/%72ep%6F", "/srv/repo", true},
		{"file:///srv%2Frepo", "/srv/repo", true},
		{"file:///srv/100%zz", "/srv/100%zz", true},
		{"file:///srv/a%2", "/srv/a%2", true},
		{"file:////srv//repo", "/srv/repo", true},
		{"file://localhost%2Fsrv%2Frepo", "/srv/repo", true},
		{"file://srv%2Frepo/x", "/repo/x", true},
		{"file:%2F%2F/srv/repo", "", false},
		{"file://localhost", "", false},
		{"https://example.com/repo.git", "", false},
		{"ssh://host/srv/repo", "", false},
		{"git@example.com:repo.git", "", false},
		{"host:/srv/repo", "", false},
		{"ext::sh -c true", "", false},
		{"fd::3", "", false},
		{"", "", false},
	} {
		got, local := proof.LocalRemotePath(tc.url, "/base")
		if got != tc.want || local != tc.local {
			t.Errorf("LocalRemotePath(%q) = %q, %v; want %q, %v", tc.url, got, local, tc.want, tc.local)
		}
	}
}

// FuzzLocalRemotePath: any URL either is not local or names a clean
// absolute path; a file:// URL of a path with every byte percent-encoded
// names that path.
func FuzzLocalRemotePath(f *testing.F) {
	for _, s := range []string{"/srv/repo", "file://localhost/a%20b", "file:///%", "git@h:r", "ext::x", "../x", "file://h", "%2F"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, url string) {
		p, local := proof.LocalRemotePath(url, "/base")
		if local && (!filepath.IsAbs(p) || filepath.Clean(p) != p) {
			t.Fatalf("LocalRemotePath(%q) = %q: not a clean absolute path", url, p)
		}
		if !local && p != "" {
			t.Fatalf("LocalRemotePath(%q) = %q, not local: want no path", url, p)
		}
		path := "/" + url
		var enc strings.Builder
		for i := 0; i < len(path); i++ {
			enc.WriteString("%" + strings.ToUpper(string("0123456789abcdef"[path[i]>>4])+string("0123456789abcdef"[path[i]&15])))
		}
		got, local := proof.LocalRemotePath("file://localhost"+enc.String(), "/base")
		if !local || got != filepath.Clean(path) {
			t.Fatalf("percent-encoded %q = %q, %v; want %q", path, got, local, filepath.Clean(path))
		}
	})
}

// selfFixture is a repository with a commit only on a local branch (no
// Remote holds it) and a linked worktree.
func selfFixture(t *testing.T) (s *gitsandbox.Sandbox, dir, local, linked string) {
	s = gitsandbox.NewSandbox(t)
	dir = s.NewOrigin()
	s.Git(dir, "checkout", "-q", "-b", "custody/x")
	local = s.CommitFile(dir, "only-here", "unpushed\n")
	s.Git(dir, "checkout", "-q", "main")
	linked = filepath.Join(s.Root, "linked")
	s.Git(dir, "worktree", "add", "-q", "-b", "custody/linked", linked, "custody/x")
	return s, dir, local, linked
}

// assertNotProven registers url as remote "disguise-00" of dir and checks
// that Advertise names it as a failure (with want in the message) and
// offers none of its tips, and that Prove does not prove local with it.
func assertNotProven(t *testing.T, s *gitsandbox.Sandbox, dir, local, url, want string) {
	t.Helper()
	assertNoneProven(t, s, dir, local, want, url)
}

// assertNoneProven is assertNotProven for several URLs at once, each its
// own remote (disguise-00, disguise-01, …) of one advertisement: each is
// named as a failure and offers no tip, and Prove, with all of them
// there, does not prove local (a tip any one of them offered would).
func assertNoneProven(t *testing.T, s *gitsandbox.Sandbox, dir, local, want string, urls ...string) {
	t.Helper()
	names := map[string]string{}
	for i, url := range urls {
		name := fmt.Sprintf("disguise-%02d", i)
		names[name] = url
		s.Git(dir, "remote", "add", name, url)
		defer s.Git(dir, "remote", "remove", name)
	}
	repo := s.Discover(dir)
	v := s.Advertise(repo)
	for _, tip := range v.Tips {
		if url, ok := names[tip.Remote]; ok {
			t.Errorf("url %s: tip %s %s offered as proof", url, tip.Ref, tip.Commit)
		}
	}
	for name, url := range names {
		named := false
		for _, f := range v.Failures {
			// The failure names the remote, and its message the remote
			// or the URL that was asked.
			if f.Remote == name && strings.Contains(f.Error, want) && (strings.Contains(f.Error, name) || strings.Contains(f.Error, url)) {
				named = true
			}
		}
		if !named {
			t.Errorf("url %s: failures %+v; want remote %s named with %q", url, v.Failures, name, want)
		}
	}
	if p := s.Prove(repo, local, v); p != nil {
		t.Errorf("urls %q: a commit only in this repository is proven: %+v", urls, *p)
	}
}

// TestAdvertiseSelfInDisguise: a remote that is this repository proves
// nothing, however its URL spells it: a symlink to the checkout or to .git,
// file:// with an empty, localhost or other host, percent-encoded,
// relative paths, the main checkout and its .git, a `NAME` that git opens
// as NAME.git, a linked worktree and its admin dir, a directory whose .git
// file points here, a git dir of its own whose objects directory is
// this repository's, and one whose refs directory is.
func TestAdvertiseSelfInDisguise(t *testing.T) {
	t.Parallel()
	s, dir, local, linked := selfFixture(t)
	if err := os.Symlink(dir, filepath.Join(s.Root, "alias")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, ".git"), filepath.Join(s.Root, "gitalias")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, ".git"), filepath.Join(s.Root, "suffixed.git")); err != nil {
		t.Fatal(err)
	}
	s.Write(filepath.Join(s.Root, "gitfile"), ".git", "gitdir: "+filepath.Join(dir, ".git")+"\n")
	for _, fake := range []string{"fakerefs.git", "fakeobjects.git"} {
		s.Git(s.Root, "init", "-q", "--bare", fake)
	}
	for fake, sub := range map[string]string{"fakerefs.git": "refs", "fakeobjects.git": "objects"} {
		p := filepath.Join(s.Root, fake, sub)
		if err := os.RemoveAll(p); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(dir, ".git", sub), p); err != nil {
			t.Fatal(err)
		}
	}
	s.Write(filepath.Join(s.Root, "gitfile-rel"), ".git", "gitdir: ../repo/.git\n")
	var enc strings.Builder
	for _, c := range []byte(dir) {
		if c == '/' {
			enc.WriteString("%2F")
		} else {
			enc.WriteString("%" + strings.ToUpper(string("0123456789abcdef"[c>>4])+string("0123456789abcdef"[c&15])))
		}
	}
	const self = "is this repository itself"
	urls := []string{
		filepath.Join(s.Root, "alias"),
		filepath.Join(s.Root, "gitalias"),
		"file://" + filepath.Join(s.Root, "alias"),
		"file://" + dir,
		"file://localhost" + dir,
		"file://localhost" + dir + "/.git",
		"file://elsewhere.example" + dir,
		"file://localhost" + strings.Replace(dir, "/repo", "/%72%65%70%6F", 1),
		"file://" + enc.String(),
		".",
		"./.git",
		"../repo",
		"../alias/.git",
		dir,
		dir + "/.git",
		dir + "/",
		filepath.Join(s.Root, "suffixed"),
		linked,
		"file://" + linked,
		filepath.Join(dir, ".git", "worktrees", "linked"),
		filepath.Join(s.Root, "gitfile"),
		"file://" + filepath.Join(s.Root, "gitfile-rel"),
		filepath.Join(s.Root, "fakeobjects.git"),
		filepath.Join(s.Root, "fakerefs.git"),
	}
	assertNoneProven(t, s, dir, local, self, urls...)
}

// TestAdvertiseSelfBindMount: a bind mount of this repository (and of its
// .git) is the same directory by device and inode, so it proves nothing.
// It needs mount --bind (root, and a kernel that allows it).
func TestAdvertiseSelfBindMount(t *testing.T) {
	t.Parallel()
	s, dir, local, _ := selfFixture(t)
	for i, src := range []string{dir, filepath.Join(dir, ".git")} {
		mnt := filepath.Join(s.Root, "bind"+string(rune('a'+i)))
		if err := os.Mkdir(mnt, 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("mount", "--bind", src, mnt).CombinedOutput(); err != nil {
			t.Skipf("mount --bind is not available here (%v: %s)", err, strings.TrimSpace(string(out)))
		}
		t.Cleanup(func() { _ = exec.Command("umount", mnt).Run() })
		assertNotProven(t, s, dir, local, mnt, "is this repository itself")
		assertNotProven(t, s, dir, local, "file://localhost"+mnt, "is this repository itself")
	}
}

// TestAdvertiseAnotherRepositoryProves: a local remote that is another
// repository (reached through a symlink, or by file://) still proves: the
// identity check does not refuse every local remote.
func TestAdvertiseAnotherRepositoryProves(t *testing.T) {
	t.Parallel()
	s, dir, local, _ := selfFixture(t)
	s.Git(dir, "push", "-q", "origin", "custody/x")
	if err := os.Symlink(s.Remote, filepath.Join(s.Root, "origin-alias.git")); err != nil {
		t.Fatal(err)
	}
	for _, url := range []string{filepath.Join(s.Root, "origin-alias.git"), "file://localhost" + s.Remote, filepath.Join(s.Root, "origin-alias")} {
		s.Git(dir, "remote", "set-url", "origin", url)
		repo := s.Discover(dir)
		v := s.Advertise(repo)
		if len(v.Failures) > 0 {
			t.Errorf("url %s: failures %+v, want none", url, v.Failures)
		}
		if p := s.Prove(repo, local, v); p == nil {
			t.Errorf("url %s: origin holds %s, yet it is not proven", url, local)
		}
	}
}

// TestAdvertiseBorrowedObjects: a local remote whose objects/info/
// alternates reaches this repository's object store holds some commits only
// through it. A `clone --shared` of this repository (which has the local
// branch only through alternates) and a `--reference` clone pushed to (the
// push sends nothing the alternate has) prove nothing; the same clones
// repacked with every object in their own store (alternates still
// configured) prove.
func TestAdvertiseBorrowedObjects(t *testing.T) {
	t.Parallel()
	s, dir, local, _ := selfFixture(t)
	shared := filepath.Join(s.Root, "shared.git")
	s.Git(s.Root, "clone", "-q", "--bare", "--shared", dir, shared)
	ref := filepath.Join(s.Root, "reference.git")
	s.Git(s.Root, "clone", "-q", "--bare", "--reference", dir, s.Remote, ref)
	s.Git(dir, "push", "-q", ref, "custody/x")
	chained := filepath.Join(s.Root, "chained.git")
	s.Git(s.Root, "clone", "-q", "--bare", "--shared", shared, chained)
	for _, url := range []string{shared, "file://localhost" + ref, chained} {
		assertNotProven(t, s, dir, local, url, "borrows this repository's objects")
	}
	for _, bare := range []string{shared, ref} {
		s.Git(bare, "repack", "-q", "-a", "-d")
		if _, err := os.Stat(filepath.Join(bare, "objects", "info", "alternates")); err != nil {
			t.Fatalf("%s: alternates gone after repack: %v", bare, err)
		}
		s.Git(dir, "remote", "add", "whole", bare)
		repo := s.Discover(dir)
		v := s.Advertise(repo)
		if len(v.Failures) > 0 {
			t.Errorf("%s repacked: failures %+v, want none", bare, v.Failures)
		}
		if p := s.Prove(repo, local, v); p == nil || p.Remote != "whole" {
			t.Errorf("%s repacked holds %s itself, yet it is not proven by it: %+v", bare, local, p)
		}
		s.Git(dir, "remote", "remove", "whole")
	}
}

// TestAdvertiseHungRemoteBounded: a remote that never answers (a transport
// helper that sleeps, or an ssh command that does) costs one wait of the
// Remote deadline, all remotes asked at once, and is named with the
// deadline; the remote that answers still proves.
func TestAdvertiseHungRemoteBounded(t *testing.T) {
	t.Parallel()
	s := gitsandbox.NewSandbox(t)
	dir := s.NewOrigin()
	s.Git(dir, "remote", "add", "slow", "ssh://hung-too.example.invalid/other.git")
	s.Git(dir, "remote", "add", "slowssh", "ssh://hung.example.invalid/repo.git")
	s.Git(dir, "config", "core.sshCommand", "sleep 60 #")
	repo := s.Discover(dir)
	g := *s.G
	g.RemoteTimeout = time.Second
	start := time.Now()
	v, err := proof.Advertise(context.Background(), &g, repo)
	took := time.Since(start)
	if err != nil {
		t.Fatalf("Advertise: %v", err)
	}
	if took > 20*time.Second {
		t.Errorf("Advertise took %s with two hung remotes and a 1s deadline; want one bounded wait", took)
	}
	for _, name := range []string{"slow", "slowssh"} {
		found := false
		for _, f := range v.Failures {
			if f.Remote == name && strings.Contains(f.Error, "no answer within 1s") {
				found = true
			}
		}
		if !found {
			t.Errorf("failures %+v; want %s named with its 1s deadline", v.Failures, name)
		}
	}
	if p := s.Prove(repo, s.Rev(dir, "main"), v); p == nil || p.Remote != "origin" {
		t.Errorf("main is on origin, which answered; proof %+v", p)
	}
	// The same command advertising again (a final observation) does not
	// wait for them again, and still names them.
	v, err = proof.Advertise(context.Background(), &g, repo)
	if err != nil {
		t.Fatalf("second Advertise: %v", err)
	}
	if len(v.Failures) != 2 || !strings.Contains(v.Failures[0].Error, "no answer within 1s") ||
		!strings.Contains(v.Failures[1].Error, "asked once in this command") {
		t.Errorf("second Advertise failures %+v; want both remotes named, not asked again", v.Failures)
	}
	// A new Git (the next command) asks them again: at least one wait.
	fresh := *hostio.NewGit(g.Runner)
	fresh.Bin, fresh.RemoteTimeout = g.Bin, g.RemoteTimeout
	start = time.Now()
	v, err = proof.Advertise(context.Background(), &fresh, repo)
	if err != nil || time.Since(start) < time.Second || len(v.Failures) != 2 || strings.Contains(v.Failures[0].Error, "asked once") {
		t.Errorf("a new Git: %v after %s, failures %+v; want the remotes asked again (one 1s wait)", err, time.Since(start), v.Failures)
	}
}

// FuzzParseAlternates: any alternates file parses without panic; what it
// lists has no empty line and no comment, and a file of plain lines lists
// them as they are.
func FuzzParseAlternates(f *testing.F) {
	for _, s := range []string{"/a/objects\n", "# c\n\n../b\n", "\"/q\\tx\"\n", "\"broken\n", "x"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		dirs, ok := proof.ParseAlternates(b)
		if !ok {
			return
		}
		for _, d := range dirs {
			if d == "" && !strings.Contains(string(b), `""`) {
				t.Fatalf("ParseAlternates(%q) lists an empty directory", b)
			}
		}
		if !strings.ContainsAny(string(b), "\"#\r") {
			var want []string
			for _, l := range strings.Split(string(b), "\n") {
				if l != "" {
					want = append(want, l)
				}
			}
			if strings.Join(dirs, "\n") != strings.Join(want, "\n") {
				t.Fatalf("ParseAlternates(%q) = %q, want %q", b, dirs, want)
			}
		}
	})
}

// TestAdvertiseHostileRemoteFiles: a remote whose alternates file or
// commondir is a FIFO does not hang custody (nothing blocks on opening
// it, and the remote is not asked, where git would block on it): the
// Remote is unidentified and proves nothing. A URL's credentials never reach
// the failure.
func TestAdvertiseHostileRemoteFiles(t *testing.T) {
	t.Parallel()
	s, dir, local, _ := selfFixture(t)
	fifoAlt := filepath.Join(s.Root, "fifo-alt.git")
	s.Git(s.Root, "clone", "-q", "--bare", dir, fifoAlt)
	if err := exec.Command("mkfifo", filepath.Join(fifoAlt, "objects", "info", "alternates")).Run(); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	fifoCommon := filepath.Join(s.Root, "fifo-common.git")
	s.Git(s.Root, "clone", "-q", "--bare", dir, fifoCommon)
	if err := exec.Command("mkfifo", filepath.Join(fifoCommon, "commondir")).Run(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		assertNotProven(t, s, dir, local, fifoAlt, "cannot be identified")
		assertNotProven(t, s, dir, local, fifoCommon, "cannot be identified")
		s.Git(dir, "remote", "add", "secret", "file://user:hunter2@localhost"+dir)
		v := s.Advertise(s.Discover(dir))
		for _, f := range v.Failures {
			if strings.Contains(f.Error, "hunter2") || !strings.Contains(f.Error, "file://localhost"+dir) {
				t.Errorf("failure %q: want the URL without its credentials", f.Error)
			}
		}
		if len(v.Failures) != 1 {
			t.Errorf("failures %+v, want the remote secret named", v.Failures)
		}
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("Advertise hung on a FIFO in a remote's git dir")
	}
}

// TestAdvertiseExtTransportNeverRuns: an ext:: remote is a shell command
// Git would run to reach it. Even with protocol.ext.allow=always in the
// repository's configuration, asking it runs nothing — neither a command
// that would make a file nor one that would serve this very repository as
// a disguised remote — and it proves nothing.
func TestAdvertiseExtTransportNeverRuns(t *testing.T) {
	t.Parallel()
	s, dir, local, _ := selfFixture(t)
	s.Git(dir, "config", "protocol.ext.allow", "always")
	canary := filepath.Join(s.Root, "canary")
	for _, url := range []string{
		"ext::sh -c touch% " + canary,
		"ext::sh -c touch% " + canary + "%;git-upload-pack% " + dir,
		"ext::git-upload-pack " + dir,
	} {
		assertNotProven(t, s, dir, local, url, "not allowed")
		if _, err := os.Lstat(canary); err == nil {
			t.Fatalf("asking the remote %s ran its command", url)
		}
	}
}

// TestAdvertiseExtTransportNeverRunsWithCallerConfig: the same, with
// protocol.ext.allow=always handed down in GIT_CONFIG_PARAMETERS (what
// `git -c` sets for the processes it starts, and which git reads after
// GIT_CONFIG_COUNT's entries): custody's git never sees it. Not parallel:
// it sets the process environment.
func TestAdvertiseExtTransportNeverRunsWithCallerConfig(t *testing.T) {
	t.Setenv("GIT_CONFIG_PARAMETERS", "'protocol.ext.allow'='always'")
	s, dir, local, _ := selfFixture(t)
	canary := filepath.Join(s.Root, "canary")
	for _, url := range []string{
		"ext::sh -c touch% " + canary,
		"ext::sh -c touch% " + canary + "%;git-upload-pack% " + dir,
	} {
		assertNotProven(t, s, dir, local, url, "not allowed")
		if _, err := os.Lstat(canary); err == nil {
			t.Fatalf("asking the remote %s ran its command", url)
		}
	}
}
