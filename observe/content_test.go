//go:build unix

package observe_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/gitfiles"
)

// contentGit runs git in dir with no user or system configuration.
func contentGit(t *testing.T, dir, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "HOME=/no-home",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimRight(string(out), "\n")
}

// TestBlobIDMatchesGit: the in-process blob id is git's, for sha1 and
// sha256 repositories, of bytes git would convert (CRLF, NUL, no final
// newline) and of a file read from disk.
func TestBlobIDMatchesGit(t *testing.T) {
	t.Parallel()
	for _, format := range []gitfiles.ObjectFormat{gitfiles.FormatSHA1, gitfiles.FormatSHA256} {
		repo := t.TempDir()
		contentGit(t, repo, "", "init", "-q", "--object-format="+string(format))
		for _, data := range []string{"", "a\n", "crlf\r\nline\r\n", "nul\x00byte", strings.Repeat("x", 1<<17)} {
			want := contentGit(t, repo, data, "hash-object", "--stdin", "--no-filters")
			if got := gitfiles.BlobID(format, []byte(data)); got != want {
				t.Errorf("%s BlobID(%q) = %s, git says %s", format, data[:min(len(data), 20)], got, want)
			}
			if gitfiles.FormatOf(want) != format {
				t.Errorf("FormatOf(%s) = %q, want %s", want, gitfiles.FormatOf(want), format)
			}
			p := filepath.Join(repo, "f")
			if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
			ents := observe.WalkContent(repo, format, nil, nil)
			var got string
			for _, e := range ents {
				if e.Path == "f" {
					got = e.OID
				}
			}
			if got != want {
				t.Errorf("%s WalkContent hashed f as %q, git says %s", format, got, want)
			}
		}
	}
}

// TestWalkContent: every entry is found by lstat, symlinks are hashed by
// their target and never followed, the owner-executable bit is read, a FIFO
// is a special file (and opening it does not block), the root's .git is
// skipped, and a pruned directory is listed but not entered.
func TestWalkContent(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	outside := t.TempDir()
	write := func(name, data string, mode os.FileMode) {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(".git", "gitdir: /somewhere\n", 0o644)
	write("a.txt", "a\n", 0o644)
	write("reported", "status named it; not read\n", 0o644)
	write("bin/run", "#!/bin/sh\n", 0o744)
	write("sub/.git", "gitdir: elsewhere\n", 0o644)
	write("sub/inside", "not walked\n", 0o644)
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("outside"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := gitfiles.FormatSHA1
	got := observe.WalkContent(root, f, map[string]bool{"sub": true}, map[string]bool{"reported": true})
	want := []machine.DiskEntry{
		{Path: "a.txt", Kind: machine.EntryFile, OID: gitfiles.BlobID(f, []byte("a\n"))},
		{Path: "bin", Kind: machine.EntryDir},
		{Path: "bin/run", Kind: machine.EntryFile, Exec: true, OID: gitfiles.BlobID(f, []byte("#!/bin/sh\n"))},
		{Path: "link", Kind: machine.EntrySymlink, OID: gitfiles.BlobID(f, []byte(outside))},
		{Path: "pipe", Kind: machine.EntryOther},
		{Path: "reported", Kind: machine.EntryFile},
		{Path: "sub", Kind: machine.EntryDir},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("WalkContent (-want +got):\n%s", diff)
	}
}

// TestContentSHA256: in a sha256 repository a clean checkout is fully
// accounted for and a rewritten file is not.
func TestContentSHA256(t *testing.T) {
	t.Parallel()
	repo := t.TempDir()
	contentGit(t, repo, "", "init", "-q", "--object-format=sha256")
	if err := os.WriteFile(filepath.Join(repo, "f.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	contentGit(t, repo, "", "add", "f.txt")
	contentGit(t, repo, "", "commit", "-q", "-m", "one")
	account := func() []machine.Unaccounted {
		ents, err := gitfiles.ParseLsFiles([]byte(contentGit(t, repo, "", "ls-files", "-v", "-s", "-z")))
		if err != nil {
			t.Fatal(err)
		}
		us, _ := observe.Content(repo, machine.Status{}, false, true, ents, nil, machine.Patterns{})
		for i := range us {
			us[i].Detail = ""
		}
		return us
	}
	if us := account(); us != nil {
		t.Fatalf("clean sha256 checkout: %+v", us)
	}
	if err := os.WriteFile(filepath.Join(repo, "f.txt"), []byte("two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]machine.Unaccounted{{Code: machine.CodeContentDiffers, Path: "f.txt"}}, account()); diff != "" {
		t.Errorf("rewritten file (-want +got):\n%s", diff)
	}
}
