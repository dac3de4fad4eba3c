//go:build unix

package sweep_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/steps/sweep"
)

// TestSweepLeavesARepositoryMadeAfterTheCheck: a directory of a build
// directory becomes a repository (git init, its files committed) after the
// check found the tree idle and before the re-check. A .git at any depth
// makes a directory no build output (the classifier's walked facts); 0258's
// re-check observed the tree again and left it. 0265's re-check reads only
// each build directory's shape, so the files that were there at the check,
// unchanged, go, and the new repository is left with its working files
// deleted.
func TestSweepLeavesARepositoryMadeAfterTheCheck(t *testing.T) {
	r := fixtures.New(t, fixtures.Options{})
	e := sweepEnv(t, r, 2*time.Hour)
	tr := newTree(t, e, "idle")
	cargoTarget(t, r, tr.Path, 100)
	pkg := filepath.Join(tr.Path, "target", "pkg")
	r.WriteFile(tr.Path, "target/pkg/README", "the person's text\n")
	calls := 0
	e.Processes = func() *observe.Processes {
		calls++
		if calls == 2 { // the re-check's scan, after the check
			for _, args := range [][]string{{"init", "-q"}, {"add", "README"}, {"-c", "user.name=p", "-c", "user.email=p@example.com", "commit", "-qm", "mine"}} {
				c := exec.Command("git", args...)
				c.Dir = pkg
				if out, err := c.CombinedOutput(); err != nil {
					t.Errorf("git %v: %v\n%s", args, err, out)
				}
			}
		}
		return observe.ScanProcesses()
	}
	res, err := sweep.Sweep(context.Background(), e, sweep.Options{Idle: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if calls < 2 {
		t.Fatalf("the process scan ran %d times; the test expects the re-check's", calls)
	}
	if _, err := os.Stat(filepath.Join(pkg, "README")); err != nil {
		t.Errorf("the repository made in target/pkg after the check lost its working file: %v; sweep: %+v", err, res.Trees)
	}
}
