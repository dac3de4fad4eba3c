package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
)

// BenchmarkPlan times `custody plan --json` against the raw git floor
// (testdata/floor.sh, a copy of ../shared/bench/floor.sh) on one repository
// with N finished managed worktrees in mixed states. Both run in the same
// loop iteration, alternating which goes first, so both see the same machine
// load. ns/op is custody's wall time alone; the extra metrics are
// custody-ms/op, floor-ms/op, ratio (custody/floor), ms/tree (custody
// time per worktree, flat when plan grows linearly) and git/tree (git
// processes one plan starts, per worktree, from --debug's trace). Run with
//
//	go test ./cmd/custody/ -run '^$' -bench Plan -benchtime 3x
//
// Target: ratio ≤ 1.5 at N=100, ms/tree flat across 25/100/400.
func BenchmarkPlan(b *testing.B) {
	floor, err := filepath.Abs(filepath.Join("testdata", "floor.sh"))
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{25, 100, 400} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			// With b.Loop the function body runs once per -count, so the
			// fixture is built once per N and the timer starts at the first
			// b.Loop call, after the build and the check.
			fx := buildPlanFixture(b, n)
			fx.check(b)
			runFloor(b, fx.r, floor) // warm up and prove the floor runs

			var custodyTotal, floorTotal time.Duration
			iters := 0
			for b.Loop() {
				timeCustody := func() {
					start := time.Now()
					res := runBin(b, custodyBin, fx.r, fx.r.Dir, nil, "plan", "--json")
					custodyTotal += time.Since(start)
					if res.Code != exitPending {
						b.Fatalf("custody plan: want exit %d (finished trees kept), got\n%s", exitPending, res)
					}
				}
				timeFloor := func() {
					b.StopTimer()
					start := time.Now()
					runFloor(b, fx.r, floor)
					floorTotal += time.Since(start)
					b.StartTimer()
				}
				if iters%2 == 0 {
					timeCustody()
					timeFloor()
				} else {
					timeFloor()
					timeCustody()
				}
				iters++
			}
			// Process spawns do not parallelise here: count them, from
			// --debug's trace of every command line, once, untimed.
			b.StopTimer()
			trace := runBin(b, custodyBin, fx.r, fx.r.Dir, nil, "plan", "--json", "--debug")
			gitRuns := strings.Count(trace.Stderr, "\n+ ")
			if strings.HasPrefix(trace.Stderr, "+ ") {
				gitRuns++
			}
			b.StartTimer()
			custodyMs := ms(custodyTotal) / float64(iters)
			floorMs := ms(floorTotal) / float64(iters)
			b.ReportMetric(custodyMs, "custody-ms/op")
			b.ReportMetric(floorMs, "floor-ms/op")
			b.ReportMetric(custodyMs/floorMs, "ratio")
			b.ReportMetric(custodyMs/float64(n), "ms/tree")
			b.ReportMetric(float64(gitRuns)/float64(n), "git/tree")
			b.Logf("plan N=%d: custody %.0fms floor %.0fms ratio %.2f (%.2f ms/tree, %.2f git processes/tree, %d in all; %d runs)",
				n, custodyMs, floorMs, custodyMs/floorMs, custodyMs/float64(n), float64(gitRuns)/float64(n), gitRuns, iters)
		})
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// runFloor runs the floor script on r's main checkout, output discarded.
func runFloor(tb testing.TB, r *fixtures.Repo, script string) {
	tb.Helper()
	cmd := exec.Command("bash", script, r.Dir)
	cmd.Dir = r.Dir
	cmd.Env = r.Env()
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		tb.Fatalf("bash %s %s: %v\n%s", script, r.Dir, err, errb.String())
	}
}

// Tree kinds of the plan fixture, by index modulo 10: 40% merged (half into
// origin main, half on their own advertised branch), 20% unpushed commits,
// 10% untracked files, 10% ignored files, 10% tracked changes (staged or
// not), 10% no new commits.
const (
	kindMergedMain = iota
	kindMergedBranch
	kindUnpushed
	kindUntracked
	kindIgnored
	kindTracked
	kindNoCommits
)

var planKinds = [10]int{
	kindMergedMain, kindMergedMain, kindMergedBranch, kindMergedBranch,
	kindUnpushed, kindUnpushed, kindUntracked, kindIgnored, kindTracked, kindNoCommits,
}

// wantCode is the refusal plan must give each kind ("" = removable).
var wantCode = map[int]string{
	kindMergedMain:   "",
	kindMergedBranch: "",
	kindUnpushed:     "unpushed-commits",
	kindUntracked:    "untracked-files",
	kindIgnored:      "ignored-files",
	kindTracked:      "tracked-changes",
	kindNoCommits:    "",
}

type planTree struct {
	id, path string
	kind     int
	head     string // new commit, if the kind makes one
}

type planFixture struct {
	r     *fixtures.Repo
	trees []planTree
}

// buildPlanFixture makes a repository with n finished managed worktrees.
// Every tree is made by `custody new` and all are finished by one
// `custody finish`; the per-tree git work in between (commits, files) runs
// with plain git in parallel, and merged commits reach origin in one push.
// That is the same repository a user gets doing it one by one, only faster.
func buildPlanFixture(b *testing.B, n int) *planFixture {
	b.Helper()
	r := fixtures.New(b, fixtures.Options{})
	mustCustody(b, r, 0, "init")
	fx := &planFixture{r: r, trees: make([]planTree, n)}
	for i := range fx.trees {
		id, path := newTree(b, r, fmt.Sprintf("bench-%03d", i))
		fx.trees[i] = planTree{id: id, path: path, kind: planKinds[i%len(planKinds)]}
	}
	// Ignored files are ignored through the shared info/exclude, so the
	// trees stay clean for plain `git status`.
	excl := filepath.Join(r.Dir, ".git", "info", "exclude")
	old, err := os.ReadFile(excl)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(excl, append(old, "\n*.secret\n"...), 0o644); err != nil {
		b.Fatal(err)
	}

	env := r.Env() // fixed dates: every parallel git call sees the same environment
	git := func(dir string, args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = env
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
	commit := func(t *planTree, i int) error {
		name := fmt.Sprintf("work/%03d.txt", i)
		if err := write(t.path, name, fmt.Sprintf("work of tree %d\n", i)); err != nil {
			return err
		}
		if _, err := git(t.path, "add", "-A"); err != nil {
			return err
		}
		if _, err := git(t.path, "commit", "-q", "-m", "work "+t.id); err != nil {
			return err
		}
		head, err := git(t.path, "rev-parse", "HEAD")
		t.head = head
		return err
	}
	shape := func(i int) error {
		t := &fx.trees[i]
		switch t.kind {
		case kindMergedMain, kindMergedBranch, kindUnpushed:
			return commit(t, i)
		case kindUntracked:
			return write(t.path, "notes/todo.txt", "mine\n")
		case kindIgnored:
			return write(t.path, "db/local.secret", "password\n")
		case kindTracked:
			if i%20 < 10 {
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
	next := make(chan int)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for range max(2, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for i := range next {
				errs[i] = shape(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}

	// One merge into main (the "ours" strategy takes any number of heads;
	// ancestry is what counts) and one batched push of main plus a branch
	// per tree merged elsewhere.
	var toMain []string
	push := []string{"push", "-q", "origin", "main"}
	for _, t := range fx.trees {
		switch t.kind {
		case kindMergedMain:
			toMain = append(toMain, t.head)
		case kindMergedBranch:
			push = append(push, t.head+":refs/heads/feature/"+t.id)
		}
	}
	if len(toMain) > 0 {
		r.Git(append([]string{"merge", "-q", "-s", "ours", "--no-edit", "-m", "merge finished work"}, toMain...)...)
	}
	r.Git(push...)

	ids := make([]string, n)
	for i, t := range fx.trees {
		ids[i] = t.id
	}
	mustCustody(b, r, 0, append([]string{"finish"}, ids...)...)
	return fx
}

// check runs the plan once and proves the benchmark measures real work: one
// item per tree, each finished, with the action and refusal its kind calls for.
func (fx *planFixture) check(b *testing.B) {
	b.Helper()
	res := custody(b, fx.r, "plan", "--json")
	if res.Code != exitPending {
		b.Fatalf("custody plan: want exit %d (finished trees kept), got\n%s", exitPending, res)
	}
	items := decodeResult[machine.Plan](b, res, "plan").Items
	if len(items) != len(fx.trees) {
		b.Fatalf("plan has %d items, want %d", len(items), len(fx.trees))
	}
	kinds := map[string]int{}
	for _, t := range fx.trees {
		kinds[t.id] = t.kind
	}
	for _, it := range items {
		kind, ok := kinds[it.ID]
		if !ok {
			b.Fatalf("plan item %s is not one of the fixture's trees", it.ID)
		}
		code := ""
		if it.Refusal != nil {
			code = string(it.Refusal.Code)
		}
		want, wantAction := wantCode[kind], "remove"
		if want != "" {
			wantAction = "keep"
		}
		if it.State != "finished" || string(it.Action) != wantAction || code != want {
			b.Fatalf("plan item %s (kind %d): state %s action %s refusal %q, want finished %s %q",
				it.ID, kind, it.State, it.Action, code, wantAction, want)
		}
	}
}
