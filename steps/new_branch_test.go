//go:build unix

package steps_test

import (
	"os"
	"os/exec"
	"testing"

	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
)

// TestBranchNameProblemAgreesWithGit: machine.BranchNameProblem refuses
// exactly the names `git check-ref-format --branch` refuses, over every
// name of up to two pieces, and of three at full size (fixtures.Size), from
// an alphabet that meets each rule ('.',
// "..", ".lock", '/', "@{", a leading '-', a space, a byte that is not
// UTF-8). git runs outside any repository, where it expands no @{-N} and no
// "@"; custody refuses "@", which git in a repository reads as HEAD.
func TestBranchNameProblemAgreesWithGit(t *testing.T) {
	t.Parallel()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	pieces := []string{"a", ".", "/", "@", "{", "-", ".lock", " ", "\xfe"}
	names := []string{"HEAD", "refs/heads/x", "a/HEAD", "x.lock.y", "\xc3\xa9t\xc3\xa9", "a\x7f", "a\tb", "~", "a^b", "a:b", "a?b", "a*b", "a[b", `a\b`}
	var three []string
	for _, a := range pieces {
		names = append(names, a)
		for _, b := range pieces {
			names = append(names, a+b)
			for _, c := range pieces {
				three = append(three, a+b+c)
			}
		}
	}
	// Every three-piece name at full size; bounded, an even sample of
	// them (each git run is a process).
	n, err := fixtures.Size("CUSTODY_BRANCH_NAMES", 80, len(three))
	if err != nil {
		t.Fatal(err)
	}
	step := max(len(three)/max(n, 1), 1)
	for i := 0; i < len(three); i += step {
		names = append(names, three[i])
	}
	dir := t.TempDir()
	env := append(os.Environ(), "GIT_CEILING_DIRECTORIES="+dir, "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "LC_ALL=C")
	for _, name := range names {
		cmd := exec.Command(git, "check-ref-format", "--branch", name)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		gitTakes := err == nil
		if _, exit := err.(*exec.ExitError); err != nil && !exit {
			t.Fatalf("git check-ref-format --branch %q: %v", name, err)
		}
		why := machine.BranchNameProblem(name)
		if name == "@" {
			if why == "" {
				t.Errorf("BranchNameProblem(%q) takes it; git in a repository reads it as HEAD", name)
			}
			continue
		}
		if gitTakes != (why == "") {
			t.Errorf("BranchNameProblem(%q) = %q, but git check-ref-format --branch says: exit %v, %q", name, why, err, out)
		}
	}
}
