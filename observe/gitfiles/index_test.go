package gitfiles_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/internal/gitsandbox"
)

// TestReadIndexFileMatchesLsFiles: custody's own parse of a linked
// worktree's index file lists exactly what `git ls-files -v -s -z` lists
// (entry order, tags, modes, ids, stages, paths) in every index state git
// writes: versions 2, 3 and 4, assume-unchanged, skip-worktree,
// intent-to-add, an unmerged path, a symlink, an executable, a gitlink, a
// long path, and a sha256 repository. ReadIndexFile leaves to git an index
// it cannot vouch for (split index, sparse index) and one with skip-worktree
// entries (which git reads differently in a sparse checkout).
// noSize compares index entries without the stat size, which ls-files
// does not print (checkSizes checks it).
var noSize = cmpopts.IgnoreFields(gitfiles.IndexEntry{}, "Size")

// checkSizes requires every entry's recorded size to be what lstat says of
// its file in wt (git records it at checkout), or 0 (git records none, or
// smudged it), and at least one entry to record its size.
func checkSizes(t *testing.T, wt string, ents []gitfiles.IndexEntry) {
	t.Helper()
	recorded := 0
	for _, e := range ents {
		if e.Size == 0 {
			continue
		}
		fi, err := os.Lstat(filepath.Join(wt, filepath.FromSlash(e.Path)))
		if err != nil {
			continue // not on disk (skip-worktree, a conflict)
		}
		if uint32(fi.Size()) != e.Size {
			t.Errorf("%s: the index records size %d, lstat says %d", e.Path, e.Size, fi.Size())
		}
		recorded++
	}
	if recorded == 0 {
		t.Errorf("no entry of %d records its size", len(ents))
	}
}

func TestReadIndexFileMatchesLsFiles(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		init  []string // extra git init flags
		setup func(s *gitsandbox.Sandbox, wt string)
		// git: ReadIndexFile must leave this index to git.
		git bool
		// unparsed: ParseIndex need not agree with ls-files either.
		unparsed bool
	}{
		{name: "v2 plain"},
		{name: "v3 skip-worktree and intent-to-add", setup: func(s *gitsandbox.Sandbox, wt string) {
			s.Git(wt, "update-index", "--skip-worktree", "a.txt")
			s.Write(wt, "new.txt", "new\n")
			s.Git(wt, "add", "-N", "new.txt")
		}, git: true},
		{name: "v3 intent-to-add", setup: func(s *gitsandbox.Sandbox, wt string) {
			s.Write(wt, "new.txt", "new\n")
			s.Git(wt, "add", "-N", "new.txt")
		}},
		{name: "v4 prefix-compressed", setup: func(s *gitsandbox.Sandbox, wt string) {
			s.Git(wt, "update-index", "--index-version", "4")
		}},
		{name: "v4 with flags", setup: func(s *gitsandbox.Sandbox, wt string) {
			s.Git(wt, "update-index", "--index-version", "4")
			s.Git(wt, "update-index", "--assume-unchanged", "dir/deep/c.txt")
			s.Git(wt, "update-index", "--skip-worktree", "a.txt")
		}, git: true},
		{name: "assume-unchanged", setup: func(s *gitsandbox.Sandbox, wt string) {
			s.Git(wt, "update-index", "--assume-unchanged", "a.txt", "dir/b.txt")
		}},
		{name: "unmerged", setup: func(s *gitsandbox.Sandbox, wt string) {
			s.CommitFile(wt, "a.txt", "ours\n")
			s.Git(wt, "checkout", "-q", "-b", "other", "HEAD~1")
			s.CommitFile(wt, "a.txt", "theirs\n")
			if out, err := s.TryGit(wt, "merge", "-q", "-"); err == nil {
				t.Fatalf("merge did not conflict:\n%s", out)
			}
		}},
		{name: "gitlink", setup: func(s *gitsandbox.Sandbox, wt string) {
			s.Git(wt, "update-index", "--add", "--cacheinfo", "160000,"+s.Rev(wt, "HEAD")+",sub")
		}},
		{name: "long path", setup: func(s *gitsandbox.Sandbox, wt string) {
			// A path of 4,095 bytes or more (its length no longer fits
			// the entry's flags), in the index only.
			blob := s.Rev(wt, "HEAD:a.txt")
			s.Git(wt, "update-index", "--add", "--cacheinfo", "100644,"+blob+","+strings.Repeat("long/", 900)+"x.txt")
		}},
		{name: "long path v4", setup: func(s *gitsandbox.Sandbox, wt string) {
			blob := s.Rev(wt, "HEAD:a.txt")
			s.Git(wt, "update-index", "--add", "--cacheinfo", "100644,"+blob+","+strings.Repeat("long/", 900)+"x.txt")
			s.Git(wt, "update-index", "--index-version", "4")
		}},
		{name: "sha256", init: []string{"--object-format=sha256"}},
		{name: "split index", setup: func(s *gitsandbox.Sandbox, wt string) {
			s.Git(wt, "update-index", "--split-index")
		}, git: true, unparsed: true},
		{name: "sparse index", setup: func(s *gitsandbox.Sandbox, wt string) {
			s.Git(wt, "sparse-checkout", "set", "--cone", "--sparse-index", "dir")
		}, git: true, unparsed: true},
		{name: "sparse checkout, a file outside the cone present", setup: func(s *gitsandbox.Sandbox, wt string) {
			s.Git(wt, "sparse-checkout", "set", "--cone", "dir")
			s.Write(wt, "other/d.txt", "back on disk\n") // git reads its entry as H, not S
		}, git: true, unparsed: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := gitsandbox.NewSandbox(t)
			main := filepath.Join(s.Root, "main")
			s.Git(s.Root, append([]string{"init", "-q", "-b", "main"}, append(c.init, main)...)...)
			s.Write(main, "a.txt", "a\n")
			s.Write(main, "dir/b.txt", "b\n")
			s.Write(main, "dir/deep/c.txt", "c\n")
			s.Write(main, "other/d.txt", "d\n")
			s.Write(main, "run.sh", "#!/bin/sh\n")
			if err := os.Chmod(filepath.Join(main, "run.sh"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("a.txt", filepath.Join(main, "link")); err != nil {
				t.Fatal(err)
			}
			s.CommitAll(main, "initial")
			wt := filepath.Join(s.Root, "wt")
			s.Git(main, "worktree", "add", "-q", "-b", "wt", wt)
			if c.setup != nil {
				c.setup(s, wt)
			}
			repo := s.Discover(main)
			key := gitfiles.AdminKeyOf(repo, wt)
			if key == "" {
				t.Fatalf("no admin key for %s", wt)
			}
			want, err := gitfiles.ParseLsFiles(s.GitRaw(wt, "ls-files", "-v", "-s", "-z"))
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(repo.AdminDir(key), "index")
			got, err := gitfiles.ReadIndexFile(file)
			switch {
			case c.git && err == nil:
				t.Errorf("custody read the index itself (%d entries); want it left to git", len(got))
			case !c.git && err != nil:
				t.Errorf("ReadIndexFile: %v", err)
			case !c.git:
				if diff := cmp.Diff(want, got, noSize); diff != "" {
					t.Errorf("ReadIndexFile (-git ls-files +custody):\n%s", diff)
				}
				checkSizes(t, wt, got)
			}
			if c.unparsed {
				return
			}
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			format := gitfiles.FormatSHA1
			if len(c.init) > 0 {
				format = gitfiles.FormatSHA256
			}
			parsed, err := gitfiles.ParseIndex(raw, format)
			if err != nil {
				t.Fatalf("ParseIndex: %v", err)
			}
			if diff := cmp.Diff(want, parsed, noSize); diff != "" {
				t.Errorf("ParseIndex (-git ls-files +custody):\n%s", diff)
			}
		})
	}
}

// TestReadIndexFileRefusesDamage: a truncated index, a flipped byte or a
// missing file is never read as entries.
func TestReadIndexFileRefusesDamage(t *testing.T) {
	t.Parallel()
	s := gitsandbox.NewSandbox(t)
	main := s.NewOrigin()
	dir := t.TempDir()
	good, err := os.ReadFile(filepath.Join(main, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gitfiles.ReadIndexFile(filepath.Join(main, ".git", "index")); err != nil {
		t.Fatalf("the intact index: %v", err)
	}
	flipped := append([]byte(nil), good...)
	flipped[20] ^= 1
	for name, b := range map[string][]byte{"truncated": good[:len(good)-7], "flipped": flipped, "empty": nil} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if ents, err := gitfiles.ReadIndexFile(p); err == nil {
			t.Errorf("%s index read as %d entries", name, len(ents))
		}
	}
	if _, err := gitfiles.ReadIndexFile(filepath.Join(dir, "absent")); err == nil {
		t.Errorf("a missing index: err %v", err)
	}
}

// FuzzParseIndex: no index bytes make the reader panic, and what it
// accepts has a path for every entry.
func FuzzParseIndex(f *testing.F) {
	f.Add([]byte("DIRC\x00\x00\x00\x02\x00\x00\x00\x00"), false)
	f.Add([]byte("DIRC\x00\x00\x00\x04\x00\x00\x00\x01"), true)
	f.Fuzz(func(t *testing.T, b []byte, sha256 bool) {
		format := gitfiles.FormatSHA1
		if sha256 {
			format = gitfiles.FormatSHA256
		}
		ents, err := gitfiles.ParseIndex(b, format)
		if err != nil {
			return
		}
		for _, e := range ents {
			if e.Path == "" || gitfiles.FormatOf(e.OID) != format {
				t.Fatalf("accepted entry %+v", e)
			}
		}
	})
}
