package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
)

// BenchmarkFleet measures custody on one repository whose fleet of managed
// worktrees grows to each size N (25, 100, 400, and 1,000 when
// CUSTODY_BENCH_MAX allows it): every tree holds the realistic 2,050-file
// checkout the floor script expects, in mixed states (removable, unpushed,
// dirty, active). At each N, in this order:
//
//   - new/N: every `custody new` that grew the fleet to N, timed beside a
//     `git worktree add -b` of the same checkout on the same repository;
//   - plan/N: `custody plan --json` against testdata/floor.sh (a copy of
//     ../shared/bench/floor.sh) on the same repository in the same loop
//     iteration, alternating which goes first, so both see the same load:
//     cold (the content hash cache deleted first, as at a first plan) and
//     warm (right after, with the cache the cold run wrote) are reported
//     apart, the warm one as custody-ms/op and wall-ratio. In the same
//     iteration, in the same alternating order, the lstat floor: one
//     process that lstats every entry of every managed tree, .git gitfile
//     included (fleet.lstatFloor), against which both are reported as
//     lstat-wall-ratio and lstat-cpu-ratio (cold-lstat-… for the cold one).
//
// At the largest N, apply/N removes the plan's removable trees: half timed
// against a bare `git worktree remove` loop over as many plain trees, half
// with git counted. Each timed run starts after a sync, so both delete
// trees whose files are on disk, as a person's are (the loop over trees
// never synced is printed too, for reference). Every figure is wall time
// and CPU time (user+system of the process and every child it waited
// for) against its floor, and git processes per tree, counted with a PATH
// shim (a `git` first on PATH that logs each invocation and execs the real
// git; the counted runs are never the timed ones). Run with
//
//	go test ./cmd/custody/ -run '^$' -bench Fleet -benchtime 3x -timeout 60m
//
// Targets: plan ≤ 0.7× the floor at N=100 and ms/tree flat to 1,000, ≤ 2 git
// processes per tree; plan ≤ 1.5× the lstat floor in CPU and ≤ 1.1× in wall
// at 100 and 1,000 trees; apply ≤ 1.1× the bare loop and ≤ 5 git processes per
// removal; new ≤ 1.2× git worktree add at any N.
func BenchmarkFleet(b *testing.B) {
	floor := testdataScript(b, "floor.sh")
	sizes := benchSizes(b)
	fl := newFleet(b)
	for _, n := range sizes {
		b.Run(fmt.Sprintf("new/N=%d", n), func(b *testing.B) {
			w := fl.grow(b, n)
			for b.Loop() {
				// The growth above is the measurement: each new ran once.
			}
			w.report(b, n)
		})
		b.Run(fmt.Sprintf("plan/N=%d", n), func(b *testing.B) {
			fl.timePlan(b, floor).report(b, "plan", n)
		})
	}
	n := sizes[len(sizes)-1]
	b.Run(fmt.Sprintf("apply/N=%d", n), func(b *testing.B) {
		fl.r.TB = b
		applied := false
		for b.Loop() {
			if !applied { // destructive: runs once, whatever -benchtime says
				fl.apply(b)
				applied = true
			}
		}
	})
}

// benchSizes are the fleet sizes: 25, 100 and 400 by default;
// CUSTODY_BENCH_MAX=1000 adds 1,000, and a smaller value drops the sizes
// above it (CUSTODY_BENCH_MAX=25 for a quick run).
func benchSizes(b *testing.B) []int {
	limit := 400
	if s := os.Getenv("CUSTODY_BENCH_MAX"); s != "" {
		if _, err := fmt.Sscan(s, &limit); err != nil || limit < 25 {
			b.Fatalf("CUSTODY_BENCH_MAX=%q: want a number of trees, at least 25", s)
		}
	}
	var out []int
	for _, n := range []int{25, 100, 400, 1000} {
		if n <= limit {
			out = append(out, n)
		}
	}
	return out
}

// apply removes the plan's removable trees: the first half timed against a
// bare `git worktree remove` loop over as many plain trees of the same
// checkout, the second half with git counted.
func (fl *fleet) apply(b *testing.B) {
	b.Helper()
	planFile := filepath.Join(fl.r.Root, "bench-plan.json")
	_, res := fl.run(b, nil, "plan", "-o", planFile)
	wantPlanExit(b, res)
	var ids []string
	for _, t := range fl.trees {
		if kindWants[t.kind].action == string(machine.ActionRemove) {
			ids = append(ids, t.id)
		}
	}
	timed, counted := ids[:len(ids)/2], ids[len(ids)/2:]
	if len(timed) == 0 || len(counted) == 0 {
		b.Fatalf("%d removable trees: too few to measure apply", len(ids))
	}
	var active string
	for _, t := range fl.trees {
		if t.kind == kindActive {
			active = t.id
		}
	}
	listBefore, showBefore := fl.readCosts(b, active)
	bare := fl.plainTrees(b, "bare", len(timed))
	// Both loops delete files that are on disk: a tree made a moment ago
	// whose blocks the kernel has not yet written back is deleted without
	// freeing (or discarding) any block, at a fraction of what deleting a
	// person's tree costs, and the fleet's trees are minutes old.
	syncDisks()
	var loop usage
	for _, p := range bare {
		loop.add(fl.git(b, nil, fl.r.Dir, "worktree", "remove", p))
	}
	syncDisks()
	only := func(ids []string) []string {
		args := []string{"apply", "--json"}
		for _, id := range ids {
			args = append(args, "--only", id)
		}
		return append(args, planFile)
	}
	custodyRun, res := fl.run(b, nil, only(timed)...)
	wantRemoved(b, res, timed)
	_, res = fl.run(b, fl.shim, only(counted)...)
	wantRemoved(b, res, counted)
	gitRuns := fl.shim.take(b)
	// For reference only: the same loop over trees made a moment ago and
	// not synced, whose files the kernel has not written yet.
	var fresh usage
	for _, p := range fl.plainTrees(b, "fresh", len(timed)) {
		fresh.add(fl.git(b, nil, fl.r.Dir, "worktree", "remove", p))
	}
	listAfter, showAfter := fl.readCosts(b, active)
	b.ReportMetric(listAfter.wallMs()/listBefore.wallMs(), "list-after/before")
	b.ReportMetric(showAfter.wallMs()/showBefore.wallMs(), "show-after/before")
	b.Logf("list %.1fms before apply, %.1fms after it tombstoned %d records; show of an active record's history %.1fms before, %.1fms after (wall, best of 5)",
		listBefore.wallMs(), listAfter.wallMs(), len(ids), showBefore.wallMs(), showAfter.wallMs())
	k := float64(len(timed))
	c, f := custodyRun, loop
	b.ReportMetric(c.wallMs()/k, "custody-ms/removal")
	b.ReportMetric(f.wallMs()/k, "bare-ms/removal")
	b.ReportMetric(c.wallMs()/f.wallMs(), "wall-ratio")
	b.ReportMetric(c.cpuMs()/f.cpuMs(), "cpu-ratio")
	b.ReportMetric(float64(gitRuns)/float64(len(counted)), "git/removal")
	b.Logf("apply of %d removals: custody %.0fms wall %.0fms cpu (%.1f ms/removal), bare git worktree remove loop %.0fms wall %.0fms cpu (%.1f ms/removal): wall ratio %.2f, cpu ratio %.2f; git processes %.2f per removal (%d for %d, the command's own included)",
		len(timed), c.wallMs(), c.cpuMs(), c.wallMs()/k, f.wallMs(), f.cpuMs(), f.wallMs()/k,
		c.wallMs()/f.wallMs(), c.cpuMs()/f.cpuMs(), float64(gitRuns)/float64(len(counted)), gitRuns, len(counted))
	b.ReportMetric(fresh.wallMs()/k, "bare-unsynced-ms/removal")
	b.Logf("for reference, the bare loop over trees made a moment before and never synced (nothing of them on disk yet to free): %.0fms wall %.0fms cpu (%.1f ms/removal)",
		fresh.wallMs(), fresh.cpuMs(), fresh.wallMs()/k)
}

// wantRemoved requires apply to have removed exactly ids.
func wantRemoved(b *testing.B, res clitest.Result, ids []string) {
	b.Helper()
	if res.Code != exitOK {
		b.Fatalf("custody apply: want exit 0, got\n%s", res)
	}
	var got []string
	for _, it := range clitest.DecodeResult[steps.ApplyResult](b, res, "apply").Items {
		if it.Outcome != machine.OutcomeRemoved {
			b.Fatalf("apply %s: %s, want removed\n%s", it.ID, it.Outcome, res)
		}
		got = append(got, it.ID)
	}
	slices.Sort(got)
	want := slices.Sorted(slices.Values(ids))
	if !slices.Equal(got, want) {
		b.Fatalf("apply removed %s, want %s", strings.Join(got, " "), strings.Join(want, " "))
	}
}

// readCosts is the best of five runs of `custody list --json` and of
// `custody show ID --json` (an active record, observed fresh both times).
func (fl *fleet) readCosts(b *testing.B, id string) (list, show usage) {
	b.Helper()
	best := func(args ...string) usage {
		var min usage
		for i := range 5 {
			u, res := fl.run(b, nil, args...)
			if res.Code != exitOK && res.Code != exitPending {
				b.Fatalf("custody %s: %s", strings.Join(args, " "), res)
			}
			if i == 0 || u.wall < min.wall {
				min = u
			}
		}
		return min
	}
	return best("list", "--json"), best("show", id, "--json")
}

// BenchmarkNewAtScale measures `custody new` alone beside `git worktree
// add -b` while one repository's fleet of realistic trees grows to 25,
// 100, 400 and 1,000 (CUSTODY_BENCH_MAX lowers the top), without plan or
// apply at each size, so new at 1,000 trees is measured in minutes. Run
// with
//
//	go test ./cmd/custody/ -run '^$' -bench NewAtScale -benchtime 1x -timeout 60m
func BenchmarkNewAtScale(b *testing.B) {
	sizes := []int{25, 100, 400, 1000}
	if os.Getenv("CUSTODY_BENCH_MAX") != "" {
		sizes = benchSizes(b)
	}
	fl := newFleet(b)
	for _, n := range sizes {
		b.Run(fmt.Sprintf("new/N=%d", n), func(b *testing.B) {
			w := fl.grow(b, n)
			for b.Loop() {
				// The growth above is the measurement: each new ran once.
			}
			w.report(b, n)
		})
	}
}
