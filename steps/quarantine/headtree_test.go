package quarantine

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/hostio"
)

// TestHeadTreeListing: a quarantine manifest reads HEAD's entries from the
// tree's index only when they hash to the tree id git gave for HEAD, and
// then lists exactly what `git ls-tree -r` lists; a staged file, a staged
// mode, an unknown tree id, a wrong tree id or a bad admin key send the
// listing to git.
func TestHeadTreeListing(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		change func(git func(args ...string) string, wt string)
		key    func(key string) string
		trees  func(head, tree string) map[string]string
		ok     bool
	}{
		{name: "index is HEAD's", ok: true},
		{name: "a file staged since", change: func(git func(...string) string, wt string) {
			if err := os.WriteFile(filepath.Join(wt, "new.txt"), []byte("new\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			git("-C", wt, "add", "new.txt")
		}},
		{name: "a mode staged since", change: func(git func(...string) string, wt string) {
			git("-C", wt, "update-index", "--chmod=+x", "a.txt")
		}},
		{name: "tree unknown", trees: func(string, string) map[string]string { return nil }},
		{name: "another commit's tree", trees: func(head, _ string) map[string]string {
			return map[string]string{head: "4b825dc642cb6eb9a060e54bf8d69288fbee4904"}
		}},
		{name: "admin key is a path", key: func(string) string { return "../wt" }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			main := filepath.Join(root, "main")
			git := func(args ...string) string {
				t.Helper()
				cmd := exec.Command("git", args...)
				cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+root,
					"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
				}
				return strings.TrimSpace(string(out))
			}
			git("init", "-q", "-b", "main", main)
			for _, f := range []string{"a.txt", "dir/b.txt", "dir/deep/c.txt", "dir.x"} {
				p := filepath.Join(main, filepath.FromSlash(f))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(f+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Symlink("a.txt", filepath.Join(main, "link")); err != nil {
				t.Fatal(err)
			}
			git("-C", main, "add", "-A")
			git("-C", main, "commit", "-q", "-m", "initial")
			wt := filepath.Join(root, "wt")
			git("-C", main, "worktree", "add", "-q", "-b", "wt", wt)
			head, tree := git("-C", main, "rev-parse", "HEAD"), git("-C", main, "rev-parse", "HEAD^{tree}")
			if c.change != nil {
				c.change(git, wt)
			}
			e := &Env{Repo: hostio.Repo{CommonDir: filepath.Join(main, ".git"), MainCheckout: main}}
			e.Git = hostio.NewGit(&hostio.Runner{})
			trees := CommitTrees(context.Background(), e, []string{head, head})
			if diff := cmp.Diff(map[string]string{head: tree}, trees); diff != "" {
				t.Fatalf("commitTrees (-git +custody):\n%s", diff)
			}
			if c.trees != nil {
				trees = c.trees(head, tree)
			}
			key := "wt"
			if c.key != nil {
				key = c.key(key)
			}
			got, ok := HeadTree{AdminKey: key, Trees: trees}.listing(e, head)
			if ok != c.ok {
				t.Fatalf("listing from the index: %v, want %v", ok, c.ok)
			}
			if !ok {
				return
			}
			want, err := gitfiles.ParseLsTree([]byte(git("-C", main, "ls-tree", "-r", "-z", "--full-tree", head)))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("listing (-git ls-tree +index):\n%s", diff)
			}
		})
	}
}
