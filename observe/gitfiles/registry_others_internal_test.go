package gitfiles

import (
	"github.com/custody-sh/custody/observe/hostio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkOtherEntries is what one assessment's observation pays to know
// the other entries naming its tree, in a registry of 1,000 entries: every
// gitdir read and every named path stat'ed once (one tree's inventory, as
// apply observes), and the lookup alone once the entries are read (plan's
// share per tree, the read being shared by all its trees). The floor is
// `git worktree list --porcelain -z` over the same registry, which any git
// command about one worktree (git worktree remove) reads too.
func BenchmarkOtherEntries(b *testing.B) {
	root := b.TempDir()
	main := filepath.Join(root, "repo")
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = main
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+root, "GIT_AUTHOR_NAME=b", "GIT_AUTHOR_EMAIL=b@b", "GIT_COMMITTER_NAME=b", "GIT_COMMITTER_EMAIL=b@b")
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("git %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	if err := os.MkdirAll(main, 0o755); err != nil {
		b.Fatal(err)
	}
	git("init", "-q")
	git("commit", "-q", "--allow-empty", "-m", "init")
	head := git("rev-parse", "HEAD")
	repo := hostio.Repo{CommonDir: filepath.Join(main, ".git"), MainCheckout: main}
	for i := range 1000 {
		tree := filepath.Join(root, "trees", "t"+strconv.Itoa(i))
		admin := repo.AdminDir("t" + strconv.Itoa(i))
		for _, d := range []string{tree, admin} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				b.Fatal(err)
			}
		}
		files := map[string]string{"gitdir": filepath.Join(tree, ".git") + "\n", "commondir": "../..\n", "HEAD": head + "\n"}
		for name, content := range files {
			if err := os.WriteFile(filepath.Join(admin, name), []byte(content), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(tree, ".git"), []byte("gitdir: "+admin+"\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	tree := filepath.Join(root, "trees", "t500")
	pi := hostio.Lstat(tree)
	id := hostio.Identity{Dev: pi.Dev, Ino: pi.Ino}
	b.Run("read-and-look-up", func(b *testing.B) {
		for b.Loop() {
			inv := Inventory{names: newAdminNames(repo), partial: true}
			if got := inv.OtherEntries(tree, "t500", "t500", true, id, true); len(got) != 0 {
				b.Fatal(got)
			}
		}
	})
	b.Run("look-up", func(b *testing.B) {
		inv := Inventory{names: newAdminNames(repo), partial: true}
		for b.Loop() {
			if got := inv.OtherEntries(tree, "t500", "t500", true, id, true); len(got) != 0 {
				b.Fatal(got)
			}
		}
	})
	b.Run("floor-git-worktree-list", func(b *testing.B) {
		for b.Loop() {
			git("worktree", "list", "--porcelain", "-z")
		}
	})
}

// FuzzParseAdminGitdir: whatever a gitdir file holds, the tree it names is
// absolute and clean, the location prune checks is absolute, and a NUL byte
// is never read past: such a file is unknown.
func FuzzParseAdminGitdir(f *testing.F) {
	for _, seed := range []string{"/r/t/.git\n", "/r/t/.git/\n", "/r/t\n", "../../t/.git\r\n", "/r/t/.git  \n", "", "\n", "/r/t/.git\x00x\n", "."} {
		f.Add([]byte(seed))
	}
	admin := filepath.FromSlash("/repo/.git/worktrees/key")
	f.Fuzz(func(t *testing.T, b []byte) {
		n, ok := parseAdminGitdir(admin, b)
		if !ok {
			if strings.TrimRight(string(b), " \t\n\v\f\r") != "" {
				t.Fatalf("%q names no path, but holds one", b)
			}
			return
		}
		if n.unreadable != "" {
			if !strings.ContainsRune(string(b), 0) {
				t.Fatalf("%q is unknown without a NUL byte", b)
			}
			return
		}
		if !filepath.IsAbs(n.path) || filepath.Clean(n.path) != n.path {
			t.Fatalf("%q names %q: not an absolute, clean tree path", b, n.path)
		}
		if !filepath.IsAbs(n.pruneAt) {
			t.Fatalf("%q: prune checks %q, not absolute", b, n.pruneAt)
		}
	})
}
