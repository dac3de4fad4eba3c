package gitfiles_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/internal/gitsandbox"
)

// TestIndexTreeIDMatchesWriteTree: the tree id custody computes from an
// index file's entries is the one `git write-tree` writes from that index,
// for names whose order differs between files and directories, an
// executable, a symlink, a gitlink, a staged change and a sha256
// repository; CommitTrees gives each commit's tree as git resolves it and
// leaves out one git lacks. An unmerged index has no tree id.
func TestIndexTreeIDMatchesWriteTree(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		init  []string
		setup func(s *gitsandbox.Sandbox, wt string)
		// same: the index still lists HEAD's tree.
		same bool
	}{
		{name: "as checked out", same: true},
		{name: "sha256", init: []string{"--object-format=sha256"}, same: true},
		{name: "staged change", setup: func(s *gitsandbox.Sandbox, wt string) {
			s.Write(wt, "a.b", "changed\n")
			s.Git(wt, "add", "a.b")
		}},
		{name: "staged new file", setup: func(s *gitsandbox.Sandbox, wt string) {
			s.Write(wt, "a/new.txt", "new\n")
			s.Git(wt, "add", "a/new.txt")
		}},
		{name: "staged mode", setup: func(s *gitsandbox.Sandbox, wt string) {
			s.Git(wt, "update-index", "--chmod=+x", "a-")
		}},
		{name: "gitlink", setup: func(s *gitsandbox.Sandbox, wt string) {
			s.Git(wt, "update-index", "--add", "--cacheinfo", "160000,"+s.Rev(wt, "HEAD")+",a0")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := gitsandbox.NewSandbox(t)
			main := filepath.Join(s.Root, "main")
			s.Git(s.Root, append([]string{"init", "-q", "-b", "main"}, append(c.init, main)...)...)
			for _, f := range []string{"a", "a.b", "a-", "ab/c", "a/b/c.txt", "a/b.txt", "z/y/x/w.txt"} {
				if f == "a" {
					continue // a is a directory (a/...), sorted as "a/"
				}
				s.Write(main, f, f+"\n")
			}
			s.Write(main, "run.sh", "#!/bin/sh\n")
			if err := os.Chmod(filepath.Join(main, "run.sh"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("a.b", filepath.Join(main, "link")); err != nil {
				t.Fatal(err)
			}
			head := s.CommitAll(main, "initial")
			wt := filepath.Join(s.Root, "wt")
			s.Git(main, "worktree", "add", "-q", "-b", "wt", wt)
			if c.setup != nil {
				c.setup(s, wt)
			}
			repo := s.Discover(main)
			ents, err := gitfiles.ReadIndexFile(filepath.Join(repo.AdminDir(gitfiles.AdminKeyOf(repo, wt)), "index"))
			if err != nil {
				t.Fatal(err)
			}
			format := gitfiles.FormatOf(head)
			got, err := gitfiles.IndexTreeID(format, ents)
			if err != nil {
				t.Fatalf("IndexTreeID: %v", err)
			}
			if want := s.Git(wt, "write-tree"); got != want {
				t.Errorf("IndexTreeID = %s, git write-tree = %s", got, want)
			}
			trees, err := gitfiles.CommitTrees(context.Background(), s.Traced(&bytes.Buffer{}), repo, []string{head, missingLike(head)})
			if err != nil {
				t.Fatalf("CommitTrees: %v", err)
			}
			if diff := cmp.Diff(map[string]string{head: s.Rev(main, "HEAD^{tree}")}, trees); diff != "" {
				t.Errorf("CommitTrees (-git +custody):\n%s", diff)
			}
			if (got == trees[head]) != c.same {
				t.Errorf("index tree %s, HEAD's tree %s: want equal %v", got, trees[head], c.same)
			}
		})
	}
	t.Run("unmerged", func(t *testing.T) {
		t.Parallel()
		ents := []gitfiles.IndexEntry{{Mode: "100644", OID: "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391", Stage: 1, Path: "a"}}
		if id, err := gitfiles.IndexTreeID(gitfiles.FormatSHA1, ents); err == nil {
			t.Errorf("IndexTreeID of an unmerged entry = %s, want an error", id)
		}
	})
}

// missingLike is an object id of head's length that no repository has.
func missingLike(head string) string {
	return string(bytes.Repeat([]byte("1"), len(head)))
}
