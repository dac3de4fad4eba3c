package gitfiles_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/hostio"
)

// TestDiscoverRefusals: custody identifies a repository exactly or refuses
// with a typed code: not a repository, a bare repository, a separate git
// dir (the main checkout cannot be derived from the common dir), or a
// directory inside the git dir.
func TestDiscoverRefusals(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git(root, "init", "-q", "plain")
	git(root, "init", "-q", "--bare", "bare.git")
	git(root, "init", "-q", "--separate-git-dir", filepath.Join(root, "sep.git"), "sep")
	if err := os.Mkdir(filepath.Join(root, "none"), 0o755); err != nil {
		t.Fatal(err)
	}
	g := hostio.NewGit(&hostio.Runner{})
	tests := []struct {
		dir  string
		code machine.Code
	}{
		{filepath.Join(root, "none"), machine.CodeNotARepository},
		{filepath.Join(root, "bare.git"), machine.CodeBareRepository},
		{filepath.Join(root, "sep"), machine.CodeAmbiguousRepository},
		{filepath.Join(root, "plain", ".git"), machine.CodeAmbiguousRepository},
	}
	for _, tt := range tests {
		_, err := gitfiles.Discover(context.Background(), g, tt.dir)
		var r *machine.Refusal
		if !errors.As(err, &r) || r.Code != tt.code {
			t.Errorf("Discover(%s) = %v, want a %s refusal", tt.dir, err, tt.code)
		}
	}
	repo, err := gitfiles.Discover(context.Background(), g, filepath.Join(root, "plain"))
	if err != nil {
		t.Fatalf("Discover(plain): %v", err)
	}
	if repo.MainCheckout != filepath.Join(root, "plain") || repo.CommonDir != filepath.Join(root, "plain", ".git") {
		t.Errorf("Discover(plain) = %+v", repo)
	}
}
