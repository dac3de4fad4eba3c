//go:build unix

package gitfiles_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/safefile"
)

// TestParseGitFile: a .git file is read as git reads it: "gitdir: " at
// the very start, only trailing CR and LF dropped (spaces are part of the
// path), a relative path joined to the file's directory; anything else is
// ErrNotGitFile, never a guess.
func TestParseGitFile(t *testing.T) {
	t.Parallel()
	const dir = "/src/wt"
	checkGitPaths(t, "ParseGitFile", gitfiles.ParseGitFile, dir, gitfiles.ErrNotGitFile, []gitPathCase{
		{"absolute", "gitdir: /r/.git/worktrees/k\n", "/r/.git/worktrees/k"},
		{"no newline", "gitdir: /r/.git/worktrees/k", "/r/.git/worktrees/k"},
		{"CRLF", "gitdir: /r/.git/worktrees/k\r\n", "/r/.git/worktrees/k"},
		{"several line ends", "gitdir: /r/.git/worktrees/k\n\r\n\n", "/r/.git/worktrees/k"},
		{"relative", "gitdir: ../r/.git/worktrees/k\n", "/src/r/.git/worktrees/k"},
		{"relative, climbing past the root", "gitdir: ../../../../x\n", "/x"},
		{"uncleaned", "gitdir: /r//.git/./worktrees/k/\n", "/r/.git/worktrees/k"},
		{"trailing spaces stay", "gitdir: /r/.git/worktrees/k  \n", "/r/.git/worktrees/k  "},
		{"trailing tab stays", "gitdir: /r/k\t\n", "/r/k\t"},
		{"a second space starts the path", "gitdir:  /r/k\n", "/src/wt/ /r/k"},
		{"a newline inside stays", "gitdir: /r/a\nb\n", "/r/a\nb"},
		{"missing gitdir:", "/r/.git/worktrees/k\n", ""},
		{"leading space", " gitdir: /r/k\n", ""},
		{"leading newline", "\ngitdir: /r/k\n", ""},
		{"byte order mark", "\ufeffgitdir: /r/k\n", ""},
		{"no space after the colon", "gitdir:/r/k\n", ""},
		{"upper case", "GITDIR: /r/k\n", ""},
		{"empty", "", ""},
		{"no path", "gitdir: \n", ""},
		{"only line ends", "gitdir: \r\n\r\n", ""},
		{"NUL in the path", "gitdir: /r/k\x00/x\n", ""},
		{"a ref file", "ref: refs/heads/main\n", ""},
	})
}

// TestParseCommonDir: a commondir file names a path relative to the git
// dir, trailing CR and LF dropped; empty or NUL is ErrBadCommonDir.
func TestParseCommonDir(t *testing.T) {
	t.Parallel()
	const gitDir = "/r/.git/worktrees/k"
	checkGitPaths(t, "ParseCommonDir", gitfiles.ParseCommonDir, gitDir, gitfiles.ErrBadCommonDir, []gitPathCase{
		{"as git writes it", "../..\n", "/r/.git"},
		{"CRLF", "../..\r\n", "/r/.git"},
		{"absolute", "/elsewhere/.git\n", "/elsewhere/.git"},
		{"trailing space stays", "../.. \n", "/r/.git/worktrees/.. "},
		{"empty", "", ""},
		{"only a newline", "\n", ""},
		{"NUL", "../..\x00\n", ""},
	})
}

// gitPathCase is one content of a path file and the path it names ("" for
// content the parser must refuse).
type gitPathCase struct {
	name, content, want string
}

// checkGitPaths runs parse (called name) over each case, relative to dir:
// the path wanted, or an error wrapping sentinel.
func checkGitPaths(t *testing.T, name string, parse func([]byte, string) (string, error), dir string, sentinel error, cases []gitPathCase) {
	t.Helper()
	for _, tt := range cases {
		got, err := parse([]byte(tt.content), dir)
		switch {
		case tt.want == "" && !errors.Is(err, sentinel):
			t.Errorf("%s: %s(%q) = %q, %v; want %v", tt.name, name, tt.content, got, err, sentinel)
		case tt.want != "" && (err != nil || got != tt.want):
			t.Errorf("%s: %s(%q) = %q, %v; want %q", tt.name, name, tt.content, got, err, tt.want)
		}
	}
}

// TestReadGitFileHostile: what is not a small regular file is an error
// naming what it is, never read through or waited on; a missing file is
// fs.ErrNotExist; a commondir that is absent is fs.ErrNotExist too.
func TestReadGitFileHostile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good", []byte("gitdir: sub/admin\n"))
	if got, err := gitfiles.ReadGitFile(good); err != nil || got != filepath.Join(dir, "sub", "admin") {
		t.Errorf("ReadGitFile(good) = %q, %v; want %q", got, err, filepath.Join(dir, "sub", "admin"))
	}
	huge := write("huge", append([]byte("gitdir: /x"), bytes.Repeat([]byte("a"), 1<<20)...))
	if _, err := gitfiles.ReadGitFile(huge); !errors.Is(err, safefile.ErrTooLarge) {
		t.Errorf("ReadGitFile(huge) = %v; want ErrTooLarge", err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(good, link); err != nil {
		t.Fatal(err)
	}
	if _, err := gitfiles.ReadGitFile(link); !errors.Is(err, safefile.ErrNotRegular) {
		t.Errorf("ReadGitFile(symlink) = %v; want ErrNotRegular", err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err == nil {
		if _, err := gitfiles.ReadGitFile(fifo); !errors.Is(err, safefile.ErrNotRegular) {
			t.Errorf("ReadGitFile(FIFO) = %v; want ErrNotRegular", err)
		}
	}
	if _, err := gitfiles.ReadGitFile(dir); !errors.Is(err, safefile.ErrNotRegular) {
		t.Errorf("ReadGitFile(directory) = %v; want ErrNotRegular", err)
	}
	if _, err := gitfiles.ReadGitFile(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadGitFile(missing) = %v; want fs.ErrNotExist", err)
	}
	bad := write("bad", []byte("not a gitfile\n"))
	if _, err := gitfiles.ReadGitFile(bad); !errors.Is(err, gitfiles.ErrNotGitFile) || !strings.Contains(err.Error(), bad) {
		t.Errorf("ReadGitFile(bad) = %v; want ErrNotGitFile naming %s", err, bad)
	}
	if _, err := gitfiles.ReadCommonDir(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadCommonDir(no commondir) = %v; want fs.ErrNotExist", err)
	}
	write("commondir", []byte("\n"))
	if _, err := gitfiles.ReadCommonDir(dir); !errors.Is(err, gitfiles.ErrBadCommonDir) {
		t.Errorf("ReadCommonDir(empty commondir) = %v; want ErrBadCommonDir", err)
	}
}

// TestReadGitFileAgreesWithGit: for the .git file of a real linked
// worktree rewritten in several spellings, ReadGitFile and ReadCommonDir
// lead to the git dir and common dir git itself finds, and a spelling git
// refuses is an error or names no git directory.
func TestReadGitFileAgreesWithGit(t *testing.T) {
	t.Parallel()
	r := fixtures.New(t, fixtures.Options{NoRemote: true})
	wt := filepath.Join(r.Root, "wt")
	r.Git("worktree", "add", "-q", "-b", "wt", wt)
	admin := filepath.Join(r.Dir, ".git", "worktrees", "wt")
	rel, err := filepath.Rel(wt, admin)
	if err != nil {
		t.Fatal(err)
	}
	for _, content := range []string{
		"gitdir: " + admin + "\n",
		"gitdir: " + admin + "\r\n",
		"gitdir: " + admin,
		"gitdir: " + rel + "\n",
		"gitdir: " + admin + " \n",
		" gitdir: " + admin + "\n",
		"gitdir:" + admin + "\n",
	} {
		if err := os.WriteFile(filepath.Join(wt, ".git"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		out, gitErr := r.TryGitIn(wt, "rev-parse", "--absolute-git-dir", "--git-common-dir")
		dir, err := gitfiles.ReadGitFile(filepath.Join(wt, ".git"))
		if gitErr != nil {
			if err == nil {
				if _, serr := os.Stat(filepath.Join(dir, "HEAD")); serr == nil {
					t.Errorf("%q: git refuses it (%s), ReadGitFile names the git dir %s", content, out, dir)
				}
			}
			continue
		}
		lines := strings.Split(out, "\n")
		if err != nil {
			t.Errorf("%q: git reads it as %s, ReadGitFile: %v", content, lines[0], err)
			continue
		}
		if resolved(t, dir) != resolved(t, lines[0]) {
			t.Errorf("%q: ReadGitFile = %s, git's git dir %s", content, dir, lines[0])
		}
		common, err := gitfiles.ReadCommonDir(dir)
		if err != nil {
			t.Errorf("%q: ReadCommonDir(%s): %v", content, dir, err)
			continue
		}
		if want := lines[1]; resolved(t, common) != resolved(t, filepath.Join(wt, want)) && resolved(t, common) != resolved(t, want) {
			t.Errorf("%q: ReadCommonDir = %s, git's common dir %s", content, common, want)
		}
	}
}

// resolved resolves p through its symlinks.
func resolved(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return filepath.Clean(p)
	}
	return r
}

// FuzzParseGitFile: any content is a path or ErrNotGitFile, never a
// panic; a path is absolute (dir is) and clean, holds no NUL, and is what
// Git reads from the same bytes.
func FuzzParseGitFile(f *testing.F) {
	for _, s := range []string{"gitdir: /a/b\n", "gitdir: rel\r\n", "gitdir: \n", "gitdir:", " gitdir: x", "gitdir: a\x00b", "gitdir: ../../..\n", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := gitfiles.ParseGitFile(b, "/w")
		if err != nil {
			if !errors.Is(err, gitfiles.ErrNotGitFile) {
				t.Fatalf("error does not wrap ErrNotGitFile: %v", err)
			}
			if got != "" {
				t.Fatalf("a path with an error: %q", got)
			}
			return
		}
		if !filepath.IsAbs(got) || filepath.Clean(got) != got || strings.IndexByte(got, 0) >= 0 {
			t.Fatalf("ParseGitFile(%q) = %q: not an absolute clean path", b, got)
		}
		rest, ok := bytes.CutPrefix(b, []byte("gitdir: "))
		if !ok {
			t.Fatalf("ParseGitFile(%q) accepted content without the prefix", b)
		}
		p := string(bytes.TrimRight(rest, "\r\n"))
		if !filepath.IsAbs(p) {
			p = filepath.Join("/w", p)
		}
		if filepath.Clean(p) != got {
			t.Fatalf("ParseGitFile(%q) = %q, git reads %q", b, got, p)
		}
	})
}
