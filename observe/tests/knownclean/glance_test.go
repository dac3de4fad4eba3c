//go:build linux || darwin

package knownclean

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/hostio"
)

// glanceRig is a repository with one linked tree, wt, on branch custody/wt
// at the pushed main, its index written a second after its files (as a
// person's is once git has looked at it), and a Git whose every command
// line glance counts.
type glanceRig struct {
	r     *fixtures.Repo
	wt    string
	repo  hostio.Repo
	g     *hostio.Git
	trace *bytes.Buffer
	rec   machine.Record
	// batch counts the unpushed commits as list does, once for the
	// repository (GlanceScope.CountUnpushed); without it each tree counts
	// its own.
	batch bool
}

func newGlanceRig(t *testing.T) *glanceRig {
	t.Helper()
	r := fixtures.New(t, fixtures.Options{})
	r.WriteFile(r.Dir, "src/a.txt", "alpha\n")
	r.WriteFile(r.Dir, "src/b.txt", "beta\n")
	r.WriteFile(r.Dir, "src/deep/c.txt", "gamma\n")
	r.CommitAll(r.Dir, "sources")
	r.Git("push", "-q", "origin", "main")
	wt := filepath.Join(r.Root, "wt")
	r.Git("worktree", "add", "-q", "-b", "custody/wt", wt)
	var trace bytes.Buffer
	g := hostio.NewGit(&hostio.Runner{Env: r.Env(), Trace: &trace})
	repo, err := gitfiles.Discover(context.Background(), g, r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	rig := &glanceRig{r: r, wt: wt, repo: repo, g: g, trace: &trace,
		rec: machine.Record{ID: "wt", Kind: machine.KindWorktree, State: machine.StateFinished, Path: wt, Branch: "custody/wt", AdminKey: "wt"}}
	rig.settle(t)
	return rig
}

// settle writes wt's index again a second after its files were written, so
// no entry is racily clean.
func (rig *glanceRig) settle(t *testing.T) {
	t.Helper()
	time.Sleep(1100 * time.Millisecond)
	cmd := exec.Command("git", "update-index", "-q", "--refresh", "--force-write-index")
	cmd.Dir, cmd.Env = rig.wt, rig.r.Env()
	if out, err := cmd.CombinedOutput(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Fatalf("settle %s: %v\n%s", rig.wt, err, out)
		}
	}
}

// glance takes wt's glance as custody list does, the commit trees asked of
// git once when the files leave one to ask, and returns it with the git
// command lines the glance itself ran (the repository's own question
// apart).
func (rig *glanceRig) glance(t *testing.T) (machine.Glance, []string) {
	t.Helper()
	ctx := context.Background()
	setup := hostio.NewGit(&hostio.Runner{Env: rig.r.Env()})
	inv, err := gitfiles.TakeInventory(ctx, setup, rig.repo)
	if err != nil {
		t.Fatal(err)
	}
	scope, err := observe.ReadGlanceScope(ctx, setup, rig.repo)
	if err != nil {
		t.Fatal(err)
	}
	rig.trace.Reset()
	gl := observe.GlanceFiles(rig.repo, inv, rig.rec, scope)
	if rig.trace.Len() != 0 {
		t.Fatalf("GlanceFiles ran git: %s", rig.trace.String())
	}
	trees := map[string]string{}
	if h := gl.NeedsTree(); h != "" {
		if trees, err = gitfiles.CommitTrees(ctx, setup, rig.repo, []string{h}); err != nil {
			t.Fatal(err)
		}
	}
	if rig.batch {
		scope.CountUnpushed(ctx, setup, rig.repo, []string{gl.NeedsCount()})
	}
	g := gl.Finish(ctx, rig.g, rig.repo, scope, trees)
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(rig.trace.String()), "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	return g, lines
}

// gitStatus is what plain git status says of wt: whether it reports any
// entry (its index left as it is).
func (rig *glanceRig) gitStatus(t *testing.T) (dirty bool, err error) {
	t.Helper()
	cmd := exec.Command("git", "status", "--porcelain=v2", "-z", "--untracked-files=normal")
	cmd.Dir, cmd.Env = rig.wt, append(rig.r.Env(), "GIT_OPTIONAL_LOCKS=0")
	out, err := cmd.Output()
	return len(out) > 0, err
}

// TestGlanceSeesWhatStatusSees: over every fixture hazard, content case
// and near-clean state, list's glance says dirty exactly when git status
// reports something, runs at most one git process, and calls a tree clean
// from git's files alone (no git status) only when git status reports
// nothing; the trees that are exactly their HEAD are read without git
// status.
func TestGlanceSeesWhatStatusSees(t *testing.T) {
	t.Parallel()
	for _, c := range knownCleanCases() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rig := newGlanceRig(t)
			c.make(rig.r, rig.wt)
			t.Cleanup(func() { _ = os.Chmod(filepath.Join(rig.wt, "src"), 0o755) })
			if c.fast {
				rig.settle(t) // the case's own commits settled too
			}
			got, ran := rig.glance(t)
			dirty, statusErr := rig.gitStatus(t)
			if len(ran) > 1 {
				t.Errorf("the glance ran %d git processes, want at most one:\n%s", len(ran), strings.Join(ran, "\n"))
			}
			switch {
			case statusErr != nil:
				if got.StatusKnown && got.ObservedWith == "files" {
					t.Errorf("git status fails (%v) where the glance read the tree clean from its files", statusErr)
				}
			case !got.StatusKnown:
				if fi, err := os.Lstat(rig.wt); got.Registered && err == nil && fi.IsDir() {
					t.Errorf("git status answers, the glance does not: %s", got.StatusErr)
				}
			case got.Changes.Dirty() != dirty:
				t.Errorf("glance dirty %v (%+v, by %s), git status dirty %v", got.Changes.Dirty(), got.Changes, got.ObservedWith, dirty)
			}
			if got.ObservedWith == "files" || got.ObservedWith == "rev-list" {
				if !got.ProvenClean || dirty || statusErr != nil {
					t.Errorf("read clean from the files (%s), but git status: dirty %v, %v", got.ObservedWith, dirty, statusErr)
				}
			}
			if c.fast && got.ObservedWith == "status" {
				t.Errorf("git status ran for a tree that is exactly its HEAD: %s", strings.Join(ran, "\n"))
			}
		})
	}
}

// TestGlanceWithoutGit: a clean tree at the pushed main costs no git
// process, its HEAD's commit loose or packed (then the repository's one
// question gives its tree); a finished one would go; an upstream at HEAD
// costs none either, and one commit ahead of it one git rev-list; a
// racily clean tree takes git status, which counts against the upstream
// in the same process.
func TestGlanceWithoutGit(t *testing.T) {
	t.Parallel()
	rig := newGlanceRig(t)
	want := func(name string, g machine.Glance, ran []string, with string, procs int, word string) {
		t.Helper()
		if g.ObservedWith != with || len(ran) != procs {
			t.Errorf("%s: observed with %q by %d git processes %q, want %q by %d", name, g.ObservedWith, len(ran), ran, with, procs)
		}
		if w := machine.JudgeGlance(rig.rec, g, nil, time.Now()).Word(); w != word {
			t.Errorf("%s: %q, want %q (%+v)", name, w, word, g)
		}
	}
	g, ran := rig.glance(t)
	want("clean, loose HEAD", g, ran, "files", 0, "would-go")

	rig.r.Git("gc", "-q")
	g, ran = rig.glance(t)
	want("clean, packed HEAD", g, ran, "files", 0, "would-go")

	rig.r.GitIn(rig.wt, "branch", "-q", "--set-upstream-to=origin/main")
	g, ran = rig.glance(t)
	want("upstream at HEAD", g, ran, "files", 0, "would-go")
	if g.Upstream != "origin/main" {
		t.Errorf("upstream %q, want origin/main", g.Upstream)
	}

	rig.r.Commit(rig.wt, "more.txt", "more\n")
	rig.settle(t)
	g, ran = rig.glance(t)
	want("one commit ahead", g, ran, "rev-list", 1, "unpushed 1")

	rig.r.WriteFile(rig.wt, "src/a.txt", "alpha\n") // the same bytes, a new mtime
	g, ran = rig.glance(t)
	want("touched, ahead", g, ran, "status", 1, "unpushed 1")

	rig.r.GitIn(rig.wt, "branch", "-q", "--unset-upstream")
	rig.settle(t)
	g, ran = rig.glance(t)
	want("no upstream, a commit no remote holds", g, ran, "rev-list", 1, "unpushed 1")
	rig.batch = true
	g, ran = rig.glance(t)
	want("no upstream, counted for the repository", g, ran, "files", 0, "unpushed 1")

	rig.r.WriteFile(rig.wt, "src/a.txt", "alpha\n")
	g, ran = rig.glance(t)
	want("touched, no upstream, counted for the repository", g, ran, "status", 1, "unpushed 1")
	rig.batch = false
	g, ran = rig.glance(t)
	want("touched, no upstream, not counted", g, ran, "status", 1, "unpushed")

	// main moves on and is pushed: the tree's base is behind origin/main,
	// not unpushed, and no remote-tracking ref is its HEAD.
	rig.r.GitIn(rig.wt, "reset", "-q", "--hard", "HEAD~1")
	rig.r.Commit(rig.r.Dir, "main.txt", "main moves on\n")
	rig.r.Git("push", "-q", "origin", "main")
	rig.batch = true
	g, ran = rig.glance(t)
	want("behind origin/main, no upstream", g, ran, "status", 1, "clean")
	rig.settle(t)
	g, ran = rig.glance(t)
	want("behind origin/main, no upstream, settled", g, ran, "files", 0, "would-go")
}

// BenchmarkGlance glances at one clean tree of 2,050 files (the benchmark
// fleet's checkout), its index settled, from git's files, beside git
// status of the same tree, for a profile of the in-process part:
//
//	go test ./observe -run '^$' -bench Glance -benchmem -cpuprofile cpu.out
func BenchmarkGlance(b *testing.B) {
	r := fixtures.New(b, fixtures.Options{})
	for d := range 41 {
		for f := range 50 {
			r.WriteFile(r.Dir, fmt.Sprintf("pkg%02d/f%03d.go", d, f), fmt.Sprintf("package pkg%02d\n\nfunc F%03d() int { return %d }\n", d, f, f))
		}
	}
	r.CommitAll(r.Dir, "a realistic checkout")
	r.Git("push", "-q", "origin", "main")
	wt := filepath.Join(r.Root, "wt")
	r.Git("worktree", "add", "-q", "-b", "custody/wt", wt)
	time.Sleep(1100 * time.Millisecond)
	r.GitIn(wt, "update-index", "-q", "--refresh", "--force-write-index")
	ctx := context.Background()
	g := hostio.NewGit(&hostio.Runner{Env: r.Env()})
	repo, err := gitfiles.Discover(ctx, g, r.Dir)
	if err != nil {
		b.Fatal(err)
	}
	inv, err := gitfiles.TakeInventory(ctx, g, repo)
	if err != nil {
		b.Fatal(err)
	}
	scope, err := observe.ReadGlanceScope(ctx, g, repo)
	if err != nil {
		b.Fatal(err)
	}
	rec := machine.Record{ID: "wt", Kind: machine.KindWorktree, State: machine.StateActive, Path: wt, Branch: "custody/wt", AdminKey: "wt"}
	b.Run("files", func(b *testing.B) {
		for b.Loop() {
			if o := observe.GlanceFiles(repo, inv, rec, scope).Finish(ctx, g, repo, scope, nil); o.ObservedWith != "files" {
				b.Fatalf("not read from the files: %+v", o)
			}
		}
	})
	b.Run("git-status", func(b *testing.B) {
		for b.Loop() {
			if _, err := g.Observe(ctx, wt, "status", "--porcelain"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
