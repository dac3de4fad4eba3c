package observe_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/hostio"
)

// TestScratchAlternatesAreReadByGit: a scratch repository borrows the
// objects of a repository under a directory whose name holds a newline,
// quotes, a backslash, a tab, a control byte or a byte that is not UTF-8,
// and git finds the borrowed objects through the alternates line.
func TestScratchAlternatesAreReadByGit(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"plain", "new\nline", "\"quoted\"", "back\\slash", "tab\tbed", "ctl\x01\x7f", "caf\xe9", "#hash", "mix\n\"\\\xff"} {
		t.Run(strings.NewReplacer("\n", "NL", "/", "_").Replace(name), func(t *testing.T) {
			t.Parallel()
			r := fixtures.New(t, fixtures.Options{Name: name})
			blob := r.Git("rev-parse", "HEAD:README")
			g := hostio.NewGit(&hostio.Runner{Env: r.Env()})
			scratch := filepath.Join(t.TempDir(), "scratch.git")
			if _, err := observe.InitScratch(context.Background(), g, scratch, gitfiles.FormatSHA1, filepath.Join(r.Dir, ".git", "objects")); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("git", "--git-dir="+scratch, "cat-file", "-p", blob)
			cmd.Env = r.Env()
			out, err := cmd.CombinedOutput()
			if err != nil || string(out) != "fixture\n" {
				b, _ := os.ReadFile(filepath.Join(scratch, "objects", "info", "alternates"))
				t.Fatalf("git reads the scratch's blob %s as %q, %v; alternates holds %q", blob, out, err, b)
			}
		})
	}
}
