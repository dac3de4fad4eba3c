package gitfiles_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/internal/gitsandbox"
)

// discoverCase is a directory to discover from, made in a sandbox, and
// whether git's files must answer for it (fast) or it must be left to git.
type discoverCase struct {
	name string
	fast bool
	// env is set for the case alone (it runs without t.Parallel).
	env map[string]string
	// make builds the layout and returns the directory to discover from.
	make func(t *testing.T, s *gitsandbox.Sandbox) string
}

// repoAt makes a repository with one commit at root/name and returns it.
func repoAt(t *testing.T, s *gitsandbox.Sandbox, name string) string {
	t.Helper()
	dir := filepath.Join(s.Root, name)
	s.Git(s.Root, "init", "-q", "-b", "main", dir)
	s.CommitFile(dir, "README", "x\n")
	return dir
}

// linkedAt adds a linked worktree of repo at root/name and returns it.
func linkedAt(t *testing.T, s *gitsandbox.Sandbox, repo, name string, args ...string) string {
	t.Helper()
	dir := filepath.Join(s.Root, name)
	s.Git(repo, append(append([]string{"worktree", "add", "-q"}, args...), dir)...)
	return dir
}

func mkdirAll(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

var discoverCases = []discoverCase{
	{name: "main checkout", fast: true, make: func(t *testing.T, s *gitsandbox.Sandbox) string { return repoAt(t, s, "r") }},
	{name: "deep in the main checkout", fast: true, make: func(t *testing.T, s *gitsandbox.Sandbox) string {
		return mkdirAll(t, filepath.Join(repoAt(t, s, "r"), "a", "b c", "d"))
	}},
	{name: "linked tree", fast: true, make: func(t *testing.T, s *gitsandbox.Sandbox) string {
		return linkedAt(t, s, repoAt(t, s, "r"), "wt", "-b", "topic")
	}},
	{name: "in a linked tree, detached", fast: true, make: func(t *testing.T, s *gitsandbox.Sandbox) string {
		return mkdirAll(t, filepath.Join(linkedAt(t, s, repoAt(t, s, "r"), "wt", "--detach"), "sub"))
	}},
	{name: "names of odd bytes", fast: true, make: func(t *testing.T, s *gitsandbox.Sandbox) string {
		return linkedAt(t, s, repoAt(t, s, "r\xff\x01 é"), "w\xfe t", "-b", "b")
	}},
	{name: "through a symlink", fast: true, make: func(t *testing.T, s *gitsandbox.Sandbox) string {
		wt := linkedAt(t, s, repoAt(t, s, "r"), "wt", "-b", "topic")
		link := filepath.Join(s.Root, "link")
		if err := os.Symlink(wt, link); err != nil {
			t.Fatal(err)
		}
		return filepath.Join(link, ".")
	}},
	{name: "a repository nested in a tree", fast: true, make: func(t *testing.T, s *gitsandbox.Sandbox) string {
		wt := linkedAt(t, s, repoAt(t, s, "r"), "wt", "-b", "topic")
		nested := filepath.Join(wt, "nested")
		s.Git(wt, "init", "-q", nested)
		return nested
	}},
	{name: "a relative commondir", fast: true, make: func(t *testing.T, s *gitsandbox.Sandbox) string {
		wt := linkedAt(t, s, repoAt(t, s, "r"), "wt", "-b", "topic")
		admin := s.Git(wt, "rev-parse", "--absolute-git-dir")
		write(t, filepath.Join(admin, "commondir"), "../..\n")
		return wt
	}},
	{name: "a remote and a branch in the config", fast: true, make: func(t *testing.T, s *gitsandbox.Sandbox) string {
		r := repoAt(t, s, "r")
		s.Git(r, "remote", "add", "origin", "https://example.invalid/x.git")
		s.Git(r, "config", "branch.main.remote", "origin")
		return r
	}},
	{name: "no repository", make: func(t *testing.T, s *gitsandbox.Sandbox) string { return mkdirAll(t, filepath.Join(s.Root, "none")) }},
	{name: "inside the git directory", make: func(t *testing.T, s *gitsandbox.Sandbox) string {
		return filepath.Join(repoAt(t, s, "r"), ".git", "refs")
	}},
	{name: "a bare repository", make: func(t *testing.T, s *gitsandbox.Sandbox) string {
		dir := filepath.Join(s.Root, "bare.git")
		s.Git(s.Root, "init", "-q", "--bare", dir)
		return dir
	}},
	{name: "core.worktree", make: func(t *testing.T, s *gitsandbox.Sandbox) string {
		r := repoAt(t, s, "r")
		s.Git(r, "config", "core.worktree", mkdirAll(t, filepath.Join(s.Root, "elsewhere")))
		return r
	}},
	{name: "core.bare true in a checkout", make: func(t *testing.T, s *gitsandbox.Sandbox) string {
		r := repoAt(t, s, "r")
		s.Git(r, "config", "core.bare", "true")
		return r
	}},
	{name: "a separate git dir", make: func(t *testing.T, s *gitsandbox.Sandbox) string {
		dir := filepath.Join(s.Root, "sep")
		s.Git(s.Root, "init", "-q", "--separate-git-dir", filepath.Join(s.Root, "sep.git"), dir)
		return dir
	}},
	{name: "an empty .git directory below a checkout", make: func(t *testing.T, s *gitsandbox.Sandbox) string {
		sub := mkdirAll(t, filepath.Join(repoAt(t, s, "r"), "sub"))
		mkdirAll(t, filepath.Join(sub, ".git"))
		return sub
	}},
	{name: "a .git symlink", make: func(t *testing.T, s *gitsandbox.Sandbox) string {
		r := repoAt(t, s, "r")
		other := mkdirAll(t, filepath.Join(s.Root, "other"))
		if err := os.Symlink(filepath.Join(r, ".git"), filepath.Join(other, ".git")); err != nil {
			t.Fatal(err)
		}
		return other
	}},
	{name: "a HEAD file on the way up", make: func(t *testing.T, s *gitsandbox.Sandbox) string {
		sub := mkdirAll(t, filepath.Join(repoAt(t, s, "r"), "sub", "deeper"))
		write(t, filepath.Join(filepath.Dir(sub), "HEAD"), "ref: refs/heads/main\n")
		return sub
	}},
	{name: "a tree's own config", make: func(t *testing.T, s *gitsandbox.Sandbox) string {
		r := repoAt(t, s, "r")
		s.Git(r, "config", "extensions.worktreeConfig", "true")
		wt := linkedAt(t, s, r, "wt", "-b", "topic")
		s.Git(wt, "config", "--worktree", "core.worktree", r)
		return wt
	}},
	{name: "an include", make: func(t *testing.T, s *gitsandbox.Sandbox) string {
		r := repoAt(t, s, "r")
		inc := filepath.Join(s.Root, "inc")
		write(t, inc, "[core]\n\tbare = true\n")
		s.Git(r, "config", "include.path", inc)
		return r
	}},
	{name: "a format version git refuses", make: func(t *testing.T, s *gitsandbox.Sandbox) string {
		r := repoAt(t, s, "r")
		s.Git(r, "config", "core.repositoryformatversion", "7")
		return r
	}},
	{name: "a config of odd bytes", make: func(t *testing.T, s *gitsandbox.Sandbox) string {
		r := repoAt(t, s, "r")
		s.Git(r, "config", "user.name", "J\xe9r\xf4me")
		return r
	}},
	{name: "a broken config line", make: func(t *testing.T, s *gitsandbox.Sandbox) string {
		r := repoAt(t, s, "r")
		f, err := os.OpenFile(filepath.Join(r, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprint(f, "[core\n")
		f.Close()
		return r
	}},
	{name: "a gitfile naming no git directory", make: func(t *testing.T, s *gitsandbox.Sandbox) string {
		sub := mkdirAll(t, filepath.Join(repoAt(t, s, "r"), "sub"))
		write(t, filepath.Join(sub, ".git"), "gitdir: /nowhere\n")
		return sub
	}},
	{name: "a submodule", make: func(t *testing.T, s *gitsandbox.Sandbox) string {
		up := repoAt(t, s, "up")
		r := repoAt(t, s, "r")
		s.Git(r, "-c", "protocol.file.allow=always", "submodule", "add", "-q", up, "sub")
		return filepath.Join(r, "sub")
	}},
	{name: "a ceiling", env: map[string]string{"GIT_CEILING_DIRECTORIES": "/nonexistent"}, make: func(t *testing.T, s *gitsandbox.Sandbox) string {
		return repoAt(t, s, "r")
	}},
}

// TestDiscoverFromFilesAgreesWithGit: on every layout, Discover reading
// git's files answers exactly what Discover asking git answers (the same
// repository, or the same refusal), and it reads the files on exactly the
// layouts that are plain.
func TestDiscoverFromFilesAgreesWithGit(t *testing.T) {
	for _, tc := range discoverCases {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			if tc.env == nil {
				t.Parallel()
			}
			s := gitsandbox.NewSandbox(t)
			dir := tc.make(t, s)
			ctx := context.Background()
			_, _, fast := gitfiles.DiscoverFromFiles(dir)
			if fast != tc.fast {
				t.Errorf("read from git's files: %v, want %v", fast, tc.fast)
			}
			want, wantErr := gitfiles.DiscoverWith(ctx, s.G, dir, false)
			got, gotErr := gitfiles.DiscoverWith(ctx, s.G, dir, true)
			if d := cmp.Diff(fmt.Sprint(wantErr), fmt.Sprint(gotErr)); d != "" {
				t.Errorf("error (-git +files):\n%s", d)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("repository (-git +files):\n%s", d)
			}
			if tc.fast && (wantErr != nil || want == (hostio.Repo{})) {
				t.Errorf("a plain layout git does not answer: %v", wantErr)
			}
		})
	}
}

// TestDiscoverFromFilesStartsNoGit: a plain tree is discovered with no git
// process (the Git has no program to run).
func TestDiscoverFromFilesStartsNoGit(t *testing.T) {
	t.Parallel()
	s := gitsandbox.NewSandbox(t)
	wt := linkedAt(t, s, repoAt(t, s, "r"), "wt", "-b", "topic")
	g := hostio.NewGit(&hostio.Runner{})
	g.Bin = filepath.Join(s.Root, "no-such-git")
	repo, err := gitfiles.Discover(context.Background(), g, wt)
	if err != nil || repo.Toplevel != wt || repo.MainCheckout != filepath.Join(s.Root, "r") {
		t.Errorf("Discover(%s) with no git: %+v, %v", wt, repo, err)
	}
}
