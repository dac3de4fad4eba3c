package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
)

// Tree kinds of the benchmark fleet, by index modulo 10: 40% merged (half
// into origin main, half on their own advertised branch), 10% no new
// commits (all of these removable), 10% unpushed commits, 10% untracked
// files, 10% ignored files, 10% tracked changes (staged or not) and 10%
// still active. kindSquashed (two commits squash-merged into origin main,
// the branch never pushed) is the real-history fleet's (historyKinds).
const (
	kindMergedMain = iota
	kindMergedBranch
	kindUnpushed
	kindUntracked
	kindIgnored
	kindTracked
	kindNoCommits
	kindActive
	kindSquashed
)

var fleetKinds = [10]int{
	kindMergedMain, kindMergedMain, kindMergedBranch, kindMergedBranch, kindNoCommits,
	kindUnpushed, kindUntracked, kindIgnored, kindTracked, kindActive,
}

// kindWant is what plan must say of a tree of one kind: its state, action
// and refusal code, and for a removal the kind of its proof.
type kindWant struct{ state, action, code, proof string }

var kindWants = map[int]kindWant{
	kindMergedMain:   {"finished", "remove", "", "ancestry"},
	kindMergedBranch: {"finished", "remove", "", "ancestry"},
	kindSquashed:     {"finished", "remove", "", "squash-merged"},
	kindNoCommits:    {"finished", "remove", "", "ancestry"},
	kindUnpushed:     {"finished", "keep", "unpushed-commits", ""},
	kindUntracked:    {"finished", "keep", "untracked-files", ""},
	kindIgnored:      {"finished", "keep", "ignored-files", ""},
	kindTracked:      {"finished", "keep", "tracked-changes", ""},
	kindActive:       {"active", "keep", "not-finished", ""},
}

// checkoutDirs × checkoutFiles (+ README) is the size of every tree's
// checkout: the 2,050 files ../shared/bench/floor.sh's fixture has.
const checkoutDirs, checkoutFiles = 41, 50

type fleetTree struct {
	id, path string
	kind     int
	head     string // new commit, if the kind makes one
}

// fleet is one repository whose managed worktrees grow to each size in
// turn; the mix of kinds stays the same at every size.
type fleet struct {
	r     *fixtures.Repo
	trees []fleetTree
	shim  *gitShim
	// kinds is the mix of kinds, tree i being of kind kinds[i%len(kinds)].
	kinds []int
	// plain counts the plain git worktrees made so far, for unique names.
	plain int
	// noNewFloor skips timing `git worktree add -b` beside each new, for
	// benchmarks that only need the fleet.
	noNewFloor bool
}

// newFleet makes the repository: a realistic checkout on main, pushed,
// then fleetOn with the fleet's mix of kinds.
func newFleet(b *testing.B) *fleet {
	b.Helper()
	r := fixtures.New(b, fixtures.Options{})
	for d := range checkoutDirs {
		for f := range checkoutFiles {
			r.WriteFile(r.Dir, fmt.Sprintf("src/pkg%02d/file%03d.go", d, f),
				fmt.Sprintf("package pkg%02d\n\n// F%03d is file %d of package %d.\nfunc F%03d() int { return %d }\n", d, f, f, d, f, d*1000+f))
		}
	}
	r.CommitAll(r.Dir, "a realistic checkout")
	r.Git("push", "-q", "origin", "main")
	return fleetOn(b, r, fleetKinds[:])
}

// fleetOn initialises custody in r's main checkout, whose main is pushed,
// and ignores *.secret through the shared info/exclude (so those trees
// stay clean for plain `git status`): a fleet of no trees yet, to be
// grown in the mix kinds.
func fleetOn(b *testing.B, r *fixtures.Repo, kinds []int) *fleet {
	b.Helper()
	clitest.MustCustody(b, r, 0, "init")
	excl := filepath.Join(r.Dir, ".git", "info", "exclude")
	old, err := os.ReadFile(excl)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(excl, append(old, "\n*.secret\n"...), 0o644); err != nil {
		b.Fatal(err)
	}
	return &fleet{r: r, shim: newGitShim(b), kinds: kinds}
}

// newWindow is what growing the fleet measured of `custody new` beside
// `git worktree add -b`.
type newWindow struct {
	custody, floor   usage
	runs, floorRuns  int
	gitRuns, created int
}

func (w newWindow) report(b *testing.B, n int) {
	b.Helper()
	if w.runs == 0 || w.floorRuns == 0 {
		b.Logf("new N=%d: no trees made at this size", n)
		return
	}
	c, f := w.custody.per(w.runs), w.floor.per(w.floorRuns)
	b.ReportMetric(c.wallMs(), "custody-ms/new")
	b.ReportMetric(f.wallMs(), "floor-ms/add")
	b.ReportMetric(c.wallMs()/f.wallMs(), "wall-ratio")
	b.ReportMetric(c.cpuMs()/f.cpuMs(), "cpu-ratio")
	b.ReportMetric(float64(w.gitRuns), "git/new")
	b.Logf("new N=%d: custody new %.1fms wall %.1fms cpu (%d runs), git worktree add -b %.1fms wall %.1fms cpu (%d runs): wall ratio %.2f, cpu ratio %.2f; %d git processes per new",
		n, c.wallMs(), c.cpuMs(), w.runs, f.wallMs(), f.cpuMs(), w.floorRuns, c.wallMs()/f.wallMs(), c.cpuMs()/f.cpuMs(), w.gitRuns)
}

// grow adds trees until the fleet has n, timing each `custody new`; each
// of the first 100, and every fifth one after, is followed by a timed `git
// worktree add -b` of the same checkout (removed again untimed), so the
// two sample the same noise of the disk alike where the windows are
// small. Each timed one starts after a sync. The first new of the window runs with
// git counted and is not timed. Then the new trees get their kind's state
// (plain git, in parallel), merged work reaches origin in one push, and
// every finished kind is finished by one `custody finish`.
func (fl *fleet) grow(b *testing.B, n int) newWindow {
	b.Helper()
	fl.r.TB = b
	var w newWindow
	from := len(fl.trees)
	for i := from; i < n; i++ {
		args := []string{"new", fmt.Sprintf("bench-%04d", i)}
		var res clitest.Result
		if i == from {
			_, res = fl.run(b, fl.shim, args...)
			w.gitRuns = fl.shim.take(b)
		} else {
			// Each timed new, and each timed add, starts with nothing
			// unwritten: the writeback of earlier checkouts lands on
			// neither.
			syncDisks()
			var u usage
			u, res = fl.run(b, nil, args...)
			w.custody.add(u)
			w.runs++
		}
		if res.Code != 0 {
			b.Fatalf("custody new: want exit 0, got\n%s", res)
		}
		path := strings.TrimSpace(res.Stdout)
		fl.trees = append(fl.trees, fleetTree{id: filepath.Base(path), path: path, kind: fl.kinds[i%len(fl.kinds)]})
		if !fl.noNewFloor && ((i-from)%5 == 4 || i < 100 || i == n-1 && w.floorRuns == 0) {
			w.floor.add(fl.plainAdd(b))
			w.floorRuns++
		}
	}
	w.created = n - from
	if w.created == 0 {
		return w
	}
	fl.shape(b, fl.trees[from:])
	var finish []string
	for _, t := range fl.trees[from:] {
		if t.kind != kindActive {
			finish = append(finish, t.id)
		}
	}
	clitest.MustCustody(b, fl.r, 0, append([]string{"finish"}, finish...)...)
	fl.settle(b, fl.trees[from:])
	return w
}

// plainAdd times one `git worktree add -b` of main outside the managed
// root, then removes the tree and its branch untimed.
func (fl *fleet) plainAdd(b *testing.B) usage {
	b.Helper()
	fl.plain++
	name := fmt.Sprintf("plain-%04d", fl.plain)
	path := filepath.Join(fl.r.Root, "plain", name)
	syncDisks()
	u := fl.git(b, nil, fl.r.Dir, "worktree", "add", "-q", "-b", name, path, "main")
	fl.git(b, nil, fl.r.Dir, "worktree", "remove", path)
	fl.git(b, nil, fl.r.Dir, "branch", "-q", "-D", name)
	return u
}

// plainTrees makes k plain detached worktrees of main outside the managed
// root, their indexes settled like the fleet's.
func (fl *fleet) plainTrees(b *testing.B, prefix string, k int) []string {
	b.Helper()
	var paths []string
	for range k {
		fl.plain++
		p := filepath.Join(fl.r.Root, "plain", fmt.Sprintf("%s-%04d", prefix, fl.plain))
		fl.git(b, nil, fl.r.Dir, "worktree", "add", "-q", "--detach", p, "main")
		paths = append(paths, p)
	}
	ts := make([]fleetTree, len(paths))
	for i, p := range paths {
		ts[i].path = p
	}
	fl.settle(b, ts)
	return paths
}

// shape gives each new tree its kind's state, in parallel, then merges
// the merged kinds' commits (a squashed kind's as one squash commit each,
// as a forge's "squash and merge" makes) and pushes them.
func (fl *fleet) shape(b *testing.B, trees []fleetTree) {
	b.Helper()
	env := fl.r.Env()
	git := func(dir string, args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("git %s (in %s): %v\n%s", strings.Join(args, " "), dir, err, errb.String())
		}
		return strings.TrimSpace(out.String()), nil
	}
	write := func(dir, name, content string) error {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		return os.WriteFile(p, []byte(content), 0o644)
	}
	one := func(i int, t *fleetTree) error {
		switch t.kind {
		case kindMergedMain, kindMergedBranch, kindUnpushed, kindSquashed:
			names := []string{t.id + ".txt"}
			if t.kind == kindSquashed {
				names = append(names, t.id+"-notes.txt")
			}
			for _, name := range names {
				if err := write(t.path, "work/"+name, "work of "+t.id+"\n"); err != nil {
					return err
				}
				if _, err := git(t.path, "add", "-A"); err != nil {
					return err
				}
				if _, err := git(t.path, "commit", "-q", "-m", "work "+name); err != nil {
					return err
				}
			}
			head, err := git(t.path, "rev-parse", "HEAD")
			t.head = head
			return err
		case kindUntracked:
			return write(t.path, "notes/todo.txt", "mine\n")
		case kindIgnored:
			return write(t.path, "db/local.secret", "password\n")
		case kindTracked:
			if i%2 == 0 {
				return write(t.path, "README", "edited\n")
			}
			if err := write(t.path, "staged.txt", "staged\n"); err != nil {
				return err
			}
			_, err := git(t.path, "add", "staged.txt")
			return err
		}
		return nil
	}
	fl.parallel(b, len(trees), func(i int) error { return one(i, &trees[i]) })
	var toMain []string
	push := []string{"push", "-q", "origin", "main"}
	for _, t := range trees {
		switch t.kind {
		case kindMergedMain:
			toMain = append(toMain, t.head)
		case kindMergedBranch:
			push = append(push, t.head+":refs/heads/feature/"+t.id)
		}
	}
	if len(toMain) > 0 {
		// The "ours" strategy takes any number of heads; ancestry is what
		// counts.
		fl.r.Git(append([]string{"merge", "-q", "-s", "ours", "--no-edit", "-m", "merge finished work"}, toMain...)...)
	}
	for _, t := range trees {
		if t.kind == kindSquashed {
			fl.r.Git("merge", "-q", "--squash", t.head)
			fl.r.Git("commit", "-q", "-m", "squash of "+t.id)
		}
	}
	fl.r.Git(push...)
}

// settle makes the trees' indexes what a person's are a moment after
// checkout: written after the files, so no entry is racily clean (git
// would otherwise re-read every file at every status, custody's and the
// floor's alike).
func (fl *fleet) settle(b *testing.B, trees []fleetTree) {
	b.Helper()
	time.Sleep(1100 * time.Millisecond)
	env := fl.r.Env()
	fl.parallel(b, len(trees), func(i int) error {
		cmd := exec.Command("git", "update-index", "-q", "--refresh", "--force-write-index")
		cmd.Dir, cmd.Env = trees[i].path, env
		if out, err := cmd.CombinedOutput(); err != nil {
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 { // 1: some file needs an update (a dirty kind)
				return fmt.Errorf("settle the index of %s: %v\n%s", trees[i].path, err, out)
			}
		}
		return nil
	})
}

// parallel runs f(0..n-1) on a few workers and fails on the first error.
func (fl *fleet) parallel(b *testing.B, n int, f func(int) error) {
	b.Helper()
	next := make(chan int)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for range max(2, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for i := range next {
				errs[i] = f(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		b.Fatal(err)
	}
}

// run runs custody in the main checkout, with git counted through shim
// when it is set, and returns its usage and result.
func (fl *fleet) run(b *testing.B, shim *gitShim, args ...string) (usage, clitest.Result) {
	b.Helper()
	cmd := exec.Command(clitest.Bin(), args...)
	cmd.Dir, cmd.Env = fl.r.Dir, shim.env(fl.r.Env())
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	u, err := measure(cmd)
	res := clitest.Result{Stdout: out.String(), Stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.Code = ee.ExitCode()
	default:
		b.Fatalf("custody %s: %v", strings.Join(args, " "), err)
	}
	return u, res
}

// git runs one git command in dir (counted through shim when set) and
// returns its usage; a failure fails the benchmark.
func (fl *fleet) git(b *testing.B, shim *gitShim, dir string, args ...string) usage {
	b.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, shim.env(fl.r.Env())
	var errb bytes.Buffer
	cmd.Stderr = &errb
	u, err := measure(cmd)
	if err != nil {
		b.Fatalf("git %s (in %s): %v\n%s", strings.Join(args, " "), dir, err, errb.String())
	}
	return u
}

// treeKinds is the kind of each of a fleet's trees, by id.
type treeKinds map[string]int

// kindsByID is the kind of each of the fleet's trees.
func (fl *fleet) kindsByID() treeKinds {
	kinds := make(treeKinds, len(fl.trees))
	for _, t := range fl.trees {
		kinds[t.id] = t.kind
	}
	return kinds
}

// of is the kind of tree id, which a command's output named (what says
// where: "plan item"); an id that is none of the fleet's trees fails the
// benchmark.
func (k treeKinds) of(b *testing.B, what, id string) int {
	b.Helper()
	kind, ok := k[id]
	if !ok {
		b.Fatalf("%s %s is not one of the fixture's trees", what, id)
	}
	return kind
}

// testdataScript is the absolute path of the script testdata/name, for
// fleet.floor, which runs it from the main checkout.
func testdataScript(b *testing.B, name string) string {
	b.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", name))
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// floor runs the floor script on the main checkout, output discarded.
func (fl *fleet) floor(b *testing.B, script string, shim *gitShim) usage {
	b.Helper()
	cmd := exec.Command("bash", script, fl.r.Dir)
	cmd.Dir, cmd.Env = fl.r.Dir, shim.env(fl.r.Env())
	var errb bytes.Buffer
	cmd.Stderr = &errb
	u, err := measure(cmd)
	if err != nil {
		b.Fatalf("bash %s %s: %v\n%s", script, fl.r.Dir, err, errb.String())
	}
	return u
}

// lstatFloor lstats every entry of every managed tree (its .git gitfile
// too, ignored files and all) in one separate process, output discarded:
// the filesystem floor of a plan, which must at least look at each entry
// of each tree it judges. The process is GNU find, not a Go walker built
// for the bench: measured on the fleet's trees it costs about two thirds
// of filepath.WalkDir plus os.Lstat (no sorting of each directory, no
// path walk from / per entry: it stats relative to the directory's
// descriptor). An empty -printf alone would stat nothing (find takes the
// type from the directory entry), so the predicate is -links 0: it needs
// each entry's lstat and is never true, so nothing is printed.
func (fl *fleet) lstatFloor(b *testing.B) usage {
	b.Helper()
	args := []string{"-P"}
	for _, t := range fl.trees {
		args = append(args, t.path)
	}
	cmd := exec.Command("find", append(args, "-links", "0")...)
	cmd.Dir, cmd.Env = fl.r.Dir, fl.r.Env()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	u, err := measure(cmd)
	if err != nil || out.Len() > 0 {
		b.Fatalf("find over %d trees: %v\n%s%s", len(fl.trees), err, out.String(), errb.String())
	}
	return u
}

// usage is wall and CPU time (user+system of a process and every child it
// waited for).
type usage struct{ wall, cpu time.Duration }

func (u *usage) add(v usage) { u.wall += v.wall; u.cpu += v.cpu }

func (u usage) per(n int) usage {
	if n == 0 {
		return u
	}
	return usage{u.wall / time.Duration(n), u.cpu / time.Duration(n)}
}

func (u usage) wallMs() float64 { return float64(u.wall) / float64(time.Millisecond) }
func (u usage) cpuMs() float64  { return float64(u.cpu) / float64(time.Millisecond) }

// measure runs cmd and returns its usage.
func measure(cmd *exec.Cmd) (usage, error) {
	start := time.Now()
	err := cmd.Run()
	u := usage{wall: time.Since(start)}
	if cmd.ProcessState != nil {
		u.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	return u, err
}

// gitShim is a directory placed first on PATH holding a `git` that appends
// one line per invocation to a log and execs the real git: it counts every
// git process a command starts, exactly.
type gitShim struct{ dir, log string }

func newGitShim(b *testing.B) *gitShim {
	b.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	s := &gitShim{dir: dir, log: filepath.Join(dir, "git.log")}
	script := fmt.Sprintf("#!/bin/sh\necho x >>'%s'\nexec '%s' \"$@\"\n", s.log, real)
	if err := os.WriteFile(filepath.Join(dir, "git"), []byte(script), 0o755); err != nil {
		b.Fatal(err)
	}
	return s
}

// env is base with the shim first on PATH (base itself when s is nil).
func (s *gitShim) env(base []string) []string {
	if s == nil {
		return base
	}
	return append(base, "PATH="+s.dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// take returns how many git processes ran since the last take.
func (s *gitShim) take(b *testing.B) int {
	b.Helper()
	data, err := os.ReadFile(s.log)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		b.Fatal(err)
	}
	if err := os.Remove(s.log); err != nil {
		b.Fatal(err)
	}
	return bytes.Count(data, []byte("\n"))
}
