package gitfiles

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestReadIndexFileTellsIntentToAdd: the index reader says when an entry
// has the intent-to-add bit (`git add -N`, which ls-files does not show and
// which makes the index something other than a tree git would write), and
// not otherwise, in versions 3 and 4 alike.
func TestReadIndexFileTellsIntentToAdd(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	for _, version := range []string{"3", "4"} {
		dir := t.TempDir()
		git := func(args ...string) {
			t.Helper()
			cmd := exec.Command("git", args...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
		git("init", "-q")
		if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		git("add", "a.txt")
		git("update-index", "--index-version", version)
		index := filepath.Join(dir, ".git", "index")
		if idx, err := ReadIndexFileWhole(index); err != nil || idx.Ita {
			t.Fatalf("version %s, a plain index: intent-to-add %v, %v; want false", version, idx.Ita, err)
		}
		if err := os.WriteFile(filepath.Join(dir, "b.txt"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		git("add", "-N", "b.txt")
		idx, err := ReadIndexFileWhole(index)
		ents, ita := idx.Ents, idx.Ita
		if err != nil || !ita || len(ents) != 2 {
			t.Fatalf("version %s, after add -N: %d entries, intent-to-add %v, %v; want 2, true", version, len(ents), ita, err)
		}
	}
}
