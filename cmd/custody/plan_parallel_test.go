//go:build unix

package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
)

// TestPlanParallelEqualsSequential: on a mixed fleet (published, merged by
// branch, unpushed, untracked, ignored, dirty, build output beside a
// tracked lockfile, deleted by hand, active, foreign), plan observed on one
// worker and on many gives the same plan file, byte for byte, and the
// same progress reports (in count order, each tree once), whatever order
// the observations finish in. Run it with -race: the trees share the
// inventory, the remote view, the scope and the Git.
func TestPlanParallelEqualsSequential(t *testing.T) {
	r := clitest.InitSpacedRepo(t, fixtures.Options{})
	if err := os.WriteFile(filepath.Join(r.Dir, ".git", "info", "exclude"), []byte("*.log\nnode_modules/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	kinds := []string{"published", "branch", "unpushed", "untracked", "ignored", "dirty", "buildout", "deleted", "active"}
	want := map[string]int{}
	for round := range 2 {
		for _, kind := range kinds {
			name := kind + "-" + string(rune('a'+round))
			id, wt := clitest.NewTree(t, r, name)
			switch kind {
			case "published":
				r.Commit(wt, name+".txt", "work\n")
				if round == 0 {
					r.Push(wt, "main")
				} else {
					r.Push(wt, "release/"+name)
				}
			case "branch":
				r.Commit(wt, name+".txt", "work\n")
				r.Push(wt, "feature/"+name)
			case "unpushed":
				r.Commit(wt, name+".txt", "work\n")
			case "untracked":
				r.WriteFile(wt, "notes/todo.txt", "mine\n")
			case "ignored":
				r.WriteFile(wt, "debug.log", "trace\n")
			case "dirty":
				r.Commit(wt, name+".txt", "work\n")
				r.Push(wt, "feature/"+name)
				r.WriteFile(wt, name+".txt", "edited\n")
			case "buildout":
				r.WriteFile(wt, "package.json", `{"name":"web"}`+"\n")
				r.WriteFile(wt, "package-lock.json", "{}\n")
				r.CommitAll(wt, "web app")
				r.Push(wt, "feature/"+name)
				r.WriteFile(wt, "node_modules/left-pad/index.js", "module.exports = s => s\n")
			}
			if kind != "active" {
				clitest.MustCustody(t, r, 0, "finish", id)
			}
			if kind == "deleted" {
				if err := os.RemoveAll(wt); err != nil {
					t.Fatal(err)
				}
			}
			want[id]++
		}
	}
	r.Git("worktree", "add", "-q", "-b", "foreign", filepath.Join(filepath.Dir(r.Dir), "foreign-tree"))

	for _, kv := range r.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	plan := func(workers int) ([]byte, []string) {
		t.Helper()
		app := &App{Globals: &Globals{LockTimeout: 5 * time.Second, RemoteTimeout: time.Minute}, Ctx: context.Background(), Dir: r.Dir,
			Stdout: io.Discard, Stderr: io.Discard}
		e, err := app.env(false)
		if err != nil {
			t.Fatal(err)
		}
		rec := &progressLog{}
		e.Now, e.Progress = func() time.Time { return at }, rec
		p, err := steps.PlanWith(app.Ctx, e, steps.PlanOptions{Workers: workers})
		if err != nil {
			t.Fatalf("plan on %d workers: %v", workers, err)
		}
		b, err := planBytes(p)
		if err != nil {
			t.Fatal(err)
		}
		return b, rec.steps
	}
	one, oneSteps := plan(1)
	if removable := bytes.Count(one, []byte(`"action": "remove"`)); removable < 4 {
		t.Fatalf("the fleet's plan removes %d trees, want the published, merged and build-output ones:\n%s", removable, one)
	}
	for _, code := range []machine.Code{machine.CodeUnpushedCommits, machine.CodeUntrackedFiles, machine.CodeIgnoredFiles, machine.CodeTrackedChanges} {
		if !bytes.Contains(one, []byte(`"`+string(code)+`"`)) {
			t.Errorf("the fleet's plan has no %s refusal:\n%s", code, one)
		}
	}
	for _, workers := range []int{2, 8, 64} {
		got, gotSteps := plan(workers)
		if diff := cmp.Diff(string(one), string(got)); diff != "" {
			t.Errorf("plan on %d workers differs from plan on one (-one +%d):\n%s", workers, workers, diff)
		}
		if diff := cmp.Diff(counts(oneSteps), counts(gotSteps)); diff != "" {
			t.Errorf("progress on %d workers reports other trees than on one (-one +%d):\n%s", workers, workers, diff)
		}
	}
	if len(oneSteps) == 0 {
		t.Error("plan reported no progress")
	}
}

// progressLog records each progress report: its count must rise by one
// each time, whichever worker reports.
type progressLog struct {
	steps []string
	last  int
}

// Step records one report; it is called under plan's progress lock.
func (l *progressLog) Step(done, total int, what string) {
	if done != l.last+1 || done > total {
		l.steps = append(l.steps, "out of order: "+what)
	}
	l.last = done
	l.steps = append(l.steps, what)
}

// counts is how often each tree was reported.
func counts(steps []string) map[string]int {
	out := map[string]int{}
	for _, s := range steps {
		out[s]++
	}
	return out
}
