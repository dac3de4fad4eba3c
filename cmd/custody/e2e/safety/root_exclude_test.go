package safety

// The managed root's exclude line names exactly the root (decision 0229):
// a root named with gitignore's syntax (a glob, a bracket, a backslash, a
// leading '!' or '#', a trailing space, a carriage return) keeps git in
// the main checkout from seeing the root's trees and nothing else; a root
// whose name holds a newline, which no exclude line can name, is refused
// with nothing changed.

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
)

func TestRootExcludedExactly(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		root  string // the root, relative to the main checkout
		decoy string // a directory the unescaped pattern would also match
	}{
		{"build*", "buildX"},
		{"w?", "wz"},
		{"[x]", "x"},
		{`a\b`, "ab"},
		{"!neg", "neg"},
		{"#hash", "hash"},
		{"trail ", "trail"},
		{"c\rd", "cd"},
		{"deep/*/t", "deep/any/t"},
	} {
		t.Run(strconv.Quote(tc.root), func(t *testing.T) {
			t.Parallel()
			r := fixtures.New(t, fixtures.Options{})
			r.WriteFile(r.Dir, "custody.toml", "[worktree]\nroot = "+strconv.Quote(tc.root)+"\n")
			r.Git("add", "custody.toml")
			r.Git("commit", "-q", "-m", "config")
			clitest.MustCustody(t, r, 0, "init")
			clitest.MustCustody(t, r, 0, "init") // the line is there: not added twice
			_, tree := clitest.NewTree(t, r, "t")
			if want := filepath.Join(r.Dir, tc.root); filepath.Dir(tree) != want {
				t.Fatalf("new made %q, not a tree in the root %q", tree, want)
			}
			r.WriteFile(tree, "work.txt", "untracked in the tree\n")
			r.WriteFile(filepath.Join(r.Dir, tc.decoy), "mine.txt", "a person's untracked file\n")

			status := r.Git("status", "--porcelain", "-z", "--untracked-files=all")
			var entries []string
			for _, e := range strings.Split(strings.TrimSuffix(status, "\x00"), "\x00") {
				entries = append(entries, strings.TrimPrefix(e, "?? "))
			}
			want := tc.decoy + "/mine.txt"
			if len(entries) != 1 || entries[0] != want {
				t.Errorf("git status in the main checkout lists %q, want only the decoy %q (the root excluded, nothing else)", entries, want)
			}
			b, err := os.ReadFile(filepath.Join(r.Dir, ".git", "info", "exclude"))
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(string(b), "# custody's managed worktrees\n"); n != 1 {
				t.Errorf("info/exclude holds the root's line %d times:\n%s", n, b)
			}
		})
	}
}

func TestRootWithNewlineRefused(t *testing.T) {
	t.Parallel()
	r := fixtures.New(t, fixtures.Options{})
	r.WriteFile(r.Dir, "custody.toml", "[worktree]\nroot = \".work\\ntrees\"\n")
	exclude := filepath.Join(r.Dir, ".git", "info", "exclude")
	before, err := os.ReadFile(exclude)
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init"}, {"new", "x"}, {"--json", "init"}} {
		res := clitest.MustCustody(t, r, 1, args...)
		out := res.Stderr
		if !strings.Contains(out, "config-invalid") || !strings.Contains(out, `.work\ntrees`) || !strings.Contains(out, "newline") {
			t.Errorf("custody %s: want a config-invalid refusal naming the root, got\n%s", strings.Join(args, " "), res)
		}
		if args[0] != "--json" && strings.Count(strings.TrimSpace(out), "\n") != 1 {
			t.Errorf("custody %s: want the refusal on one line and its retry, got\n%s", strings.Join(args, " "), out)
		}
	}
	for _, p := range []string{filepath.Join(r.Dir, ".work\ntrees"), filepath.Join(r.Dir, ".git", "custody", "state.db")} {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%q exists after the refusal (%v): something was changed", p, err)
		}
	}
	if after, err := os.ReadFile(exclude); err != nil || string(after) != string(before) {
		t.Errorf("info/exclude changed:\n%s", after)
	}
}
