package observe

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/gitfiles"
)

// TestContentWalkFindsWhatNestedGitFinds: the content walk's nested .git
// search (contentAndNested) gives exactly what nestedGit's own walk gives
// — the same entries, details and order — over a linked worktree holding
// nested repositories in untracked and ignored directories, inside a
// registered submodule and below its root, a .git symlink, a .git
// directory holding a ".git" of its own, and unreadable directories; and
// content accounting is what ContentCached alone gives.
func TestContentWalkFindsWhatNestedGitFinds(t *testing.T) {
	t.Parallel()
	repo, cache := cacheRepo(t, map[string]string{"src/main.go": "package main\n", ".gitignore": "node_modules/\nbuild/\n"})
	wt := filepath.Join(t.TempDir(), "wt")
	cacheGit(t, repo, "worktree", "add", "-q", "-b", "wt", wt)
	sub := filepath.Join(wt, "sub")
	cacheGit(t, wt, "init", "-q", sub)
	if err := os.WriteFile(filepath.Join(sub, "file.txt"), []byte("s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cacheGit(t, sub, "add", "file.txt")
	cacheGit(t, sub, "commit", "-q", "-m", "sub")
	cacheGit(t, wt, "update-index", "--add", "--cacheinfo", "160000,"+cacheGit(t, sub, "rev-parse", "HEAD")+",sub")
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(wt, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a/b/.git/HEAD", "ref: refs/heads/main\n")
	write("a/b/.git/inner/.git", "gitdir: /nowhere\n")
	write("a/c.txt", "c\n")
	write("node_modules/dep/.git/HEAD", "ref: refs/heads/main\n")
	write("node_modules/dep/index.js", "x\n")
	write("build/x/y/.git", "gitdir: /nowhere\n")
	write("sub/deep/.git/HEAD", "ref: refs/heads/main\n")
	if err := os.Symlink("/nowhere", filepath.Join(wt, "link", ".git")); err != nil {
		if err := os.MkdirAll(filepath.Join(wt, "link"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("/nowhere", filepath.Join(wt, "link", ".git")); err != nil {
			t.Fatal(err)
		}
	}
	if os.Geteuid() != 0 {
		for _, d := range []string{"locked", "node_modules/locked"} {
			write(d+"/inner/.git", "gitdir: /nowhere\n")
			p := filepath.Join(wt, filepath.FromSlash(d))
			if err := os.Chmod(p, 0); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = os.Chmod(p, 0o755) })
		}
	}
	st, err := ParseStatus([]byte(cacheGit(t, wt, statusArgs...)))
	if err != nil {
		t.Fatal(err)
	}
	ents, err := gitfiles.ParseLsFiles([]byte(cacheGit(t, wt, "ls-files", "-v", "-s", "-z")))
	if err != nil {
		t.Fatal(err)
	}
	gitlinks := stageZeroGitlinks(ents)
	if len(gitlinks) != 1 {
		t.Fatalf("fixture: gitlinks %v, want sub", gitlinks)
	}
	wantNested := nestedGit(wt, gitlinks)
	wantContent, wantDiscarded := ContentCached(wt, nil, "", st, false, true, ents, nil, machine.Patterns{})

	content, discarded, nested := contentAndNested(wt, cache, "wt", st, false, ents, nil, machine.Patterns{})
	if diff := cmp.Diff(wantNested, nested(wt, gitlinks)); diff != "" {
		t.Errorf("nested .git entries of the shared walk (-nestedGit +shared):\n%s", diff)
	}
	if diff := cmp.Diff(wantContent, content, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("content of the shared walk (-ContentCached +shared):\n%s", diff)
	}
	if diff := cmp.Diff(wantDiscarded, discarded, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("discarded of the shared walk (-ContentCached +shared):\n%s", diff)
	}
	if n := len(wantNested); n < 5 {
		t.Errorf("fixture: nestedGit found only %d entries, want the planted ones: %+v", n, wantNested)
	}
	// Directories too deep to open (ENAMETOOLONG, whoever runs the test),
	// one below an untracked directory and one below an ignored one.
	for _, d := range []string{"a", "node_modules"} {
		tooDeep(t, filepath.Join(wt, d))
	}
	wantNested = nestedGit(wt, gitlinks)
	_, _, nested = contentAndNested(wt, cache, "wt", st, false, ents, nil, machine.Patterns{})
	if diff := cmp.Diff(wantNested, nested(wt, gitlinks)); diff != "" {
		t.Errorf("nested .git entries beside directories too deep to read (-nestedGit +shared):\n%s", diff)
	}
	failed := 0
	for _, h := range wantNested {
		if h.Code == machine.CodeObservationFailed {
			failed++
		}
	}
	if failed != 2 {
		t.Errorf("fixture: %d directories too deep to read, want 2", failed)
	}
	// Another root or other submodules than the walk's: walked again.
	if diff := cmp.Diff(nestedGit(wt, nil), nested(wt, nil)); diff != "" {
		t.Errorf("nested without the submodule (-nestedGit +shared):\n%s", diff)
	}
}

// tooDeep makes directories below dir until their path is longer than
// the system can open, with a .git at the bottom.
func tooDeep(t *testing.T, dir string) {
	t.Helper()
	name := strings.Repeat("d", 200)
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	for cur := dir; len(cur) < 4096+len(name); cur = filepath.Join(cur, name) {
		if err := r.Mkdir(name, 0o755); err != nil {
			t.Fatal(err)
		}
		next, err := r.OpenRoot(name)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		r = next
	}
	if err := r.Mkdir(".git", 0o755); err != nil {
		t.Fatal(err)
	}
	r.Close()
}
