package main

import (
	"fmt"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
)

// listSizesEnv overrides the largest fleet BenchmarkList lists.
const listSizesEnv = "CUSTODY_BENCH_LIST_MAX"

// BenchmarkList measures `custody list` on one repository whose fleet of
// realistic worktrees (BenchmarkFleet's: 2,050 files each, in mixed
// states: removable, unpushed, dirty, ignored files, active) grows to each
// size N: 25 and 100 by default, and 400 and 1,000 under CUSTODY_TEST_FULL=1
// (fixtures.Size; CUSTODY_BENCH_LIST_MAX names the largest). At each N,
// custody list and its floor run in the same loop iteration, alternating
// which goes first, so both see the same load: the floor is what a person
// types for the same view, `git worktree list --porcelain` then `git
// status --porcelain` in each tree, one after the other
// (testdata/list_floor.sh). Reported: wall and CPU time (user+system of
// the process and every child it waited for) of each and their ratios,
// and git processes per tree of each, counted with the PATH shim
// (BenchmarkFleet's) on runs that are not timed. The list's words are
// checked first against each tree's kind, so the benchmark measures real
// work. Run with
//
//	go test ./cmd/custody/ -run '^$' -bench 'List$' -benchtime 5x -timeout 60m
//
// Targets: at most one git process per tree, and no slower than the floor.
func BenchmarkList(b *testing.B) {
	floor := testdataScript(b, "list_floor.sh")
	top, err := fixtures.Size(listSizesEnv, 100, 1000)
	if err != nil {
		b.Fatal(err)
	}
	var sizes []int
	for _, n := range []int{25, 100, 400, 1000} {
		if n <= top {
			sizes = append(sizes, n)
		}
	}
	fl := newFleet(b)
	fl.noNewFloor = true // new is BenchmarkFleet's to measure
	for _, n := range sizes {
		b.Run(fmt.Sprintf("list/N=%d", n), func(b *testing.B) {
			fl.grow(b, n)
			fl.r.TB = b
			fl.checkList(b)
			var custody, floorRun usage
			iters := 0
			for b.Loop() {
				timeCustody := func() {
					u, res := fl.run(b, nil, "list")
					if res.Code != exitOK {
						b.Fatalf("custody list: %s", res)
					}
					custody.add(u)
				}
				timeFloor := func() { floorRun.add(fl.floor(b, floor, nil)) }
				if iters%2 == 0 {
					timeCustody()
					timeFloor()
				} else {
					timeFloor()
					timeCustody()
				}
				iters++
			}
			b.StopTimer()
			if _, res := fl.run(b, fl.shim, "list"); res.Code != exitOK {
				b.Fatalf("custody list: %s", res)
			}
			gitRuns := fl.shim.take(b)
			fl.floor(b, floor, fl.shim)
			floorRuns := fl.shim.take(b)
			c, f := custody.per(iters), floorRun.per(iters)
			b.ReportMetric(c.wallMs(), "custody-ms/op")
			b.ReportMetric(f.wallMs(), "floor-ms/op")
			b.ReportMetric(c.wallMs()/f.wallMs(), "wall-ratio")
			b.ReportMetric(c.cpuMs()/f.cpuMs(), "cpu-ratio")
			b.ReportMetric(float64(gitRuns)/float64(n), "git/tree")
			b.ReportMetric(float64(floorRuns)/float64(n), "floor-git/tree")
			b.Logf("list N=%d: custody list %.0fms wall %.0fms cpu, floor (git worktree list + git status per tree) %.0fms wall %.0fms cpu: wall ratio %.2f, cpu ratio %.2f; git processes %d (%.2f/tree), floor %d (%.2f/tree); %d runs",
				n, c.wallMs(), c.cpuMs(), f.wallMs(), f.cpuMs(), c.wallMs()/f.wallMs(), c.cpuMs()/f.cpuMs(),
				gitRuns, float64(gitRuns)/float64(n), floorRuns, float64(floorRuns)/float64(n), iters)
		})
	}
}

// listWords is the word list must say of a tree of each kind of the fleet.
var listWords = map[int]machine.TreeStatus{
	kindMergedMain:   machine.TreeWouldGo,
	kindMergedBranch: machine.TreeWouldGo,
	kindNoCommits:    machine.TreeWouldGo,
	kindUnpushed:     machine.TreeUnpushed,
	kindUntracked:    machine.TreeDirty,
	kindIgnored:      machine.TreeClean,
	kindTracked:      machine.TreeDirty,
	kindActive:       machine.TreeClean,
}

// checkList lists the fleet once and proves the benchmark measures real
// work: one row per tree, each with the word its kind calls for (an
// unpushed tree's one commit counted).
func (fl *fleet) checkList(b *testing.B) {
	b.Helper()
	_, res := fl.run(b, nil, "list", "--json")
	if res.Code != exitOK {
		b.Fatalf("custody list: %s", res)
	}
	recs := clitest.DecodeResult[clitest.ListResult](b, res, "list").Records
	if len(recs) != len(fl.trees) {
		b.Fatalf("list has %d records, want %d", len(recs), len(fl.trees))
	}
	kinds := fl.kindsByID()
	for _, r := range recs {
		kind := kinds.of(b, "list row", r.ID)
		if want := listWords[kind]; r.Status != want {
			b.Fatalf("list row %s (kind %d): %s, want %s (glance %+v)", r.ID, kind, r.Status, want, r.Glance)
		}
		if kind == kindUnpushed && (r.StatusCount == nil || *r.StatusCount != 1) {
			b.Fatalf("list row %s: unpushed %v, want 1", r.ID, r.StatusCount)
		}
	}
}
