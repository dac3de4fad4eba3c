package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/machine"
)

// planTimes is what one plan sub-benchmark measured: per loop iteration,
// `custody plan --json` cold (no content hash cache) and warm (the cache
// the cold run wrote), the floor script and the lstat floor, all four in
// the same iteration; and the git processes of one plan and one floor
// script run, counted on runs that are not timed.
type planTimes struct {
	cold, warm, floor, lstat usage
	iters                    int
	gitRuns, floorRuns       int
	// checked is the plan fleet.check read, before the timed runs.
	checked []machine.PlanItem
}

// timePlan checks the fleet's plan (fleet.check), then times plan against
// the floor script (at script) and the lstat floor until b.Loop ends: each
// iteration runs cold then warm plan, the script and the lstat walk, in
// that order on even iterations and the reverse on odd ones, so all see
// the same load. Then it counts git processes of one warm plan and one
// script run through the shim.
func (fl *fleet) timePlan(b *testing.B, script string) planTimes {
	b.Helper()
	fl.r.TB = b
	// A person's trees are older than the content hash cache's racy-clean
	// margin; these were just made.
	time.Sleep(machine.HashCacheMargin)
	p := planTimes{checked: fl.check(b)}
	for b.Loop() {
		timeCustody := func() {
			// Cold: no content hash cache, as at the first plan.
			fl.dropHashCache(b)
			u, res := fl.run(b, nil, "plan", "--json")
			p.cold.add(u)
			wantPlanExit(b, res)
			// Warm: the cache the cold run wrote.
			u, res = fl.run(b, nil, "plan", "--json")
			p.warm.add(u)
			wantPlanExit(b, res)
		}
		timeFloor := func() { p.floor.add(fl.floor(b, script, nil)) }
		timeLstat := func() { p.lstat.add(fl.lstatFloor(b)) }
		if p.iters%2 == 0 {
			timeCustody()
			timeFloor()
			timeLstat()
		} else {
			timeLstat()
			timeFloor()
			timeCustody()
		}
		p.iters++
	}
	b.StopTimer()
	_, res := fl.run(b, fl.shim, "plan", "--json")
	wantPlanExit(b, res)
	p.gitRuns = fl.shim.take(b)
	fl.floor(b, script, fl.shim)
	p.floorRuns = fl.shim.take(b)
	return p
}

// report reports the figures of a fleet of n trees as metrics, the warm
// plan as custody-ms/op, wall-ratio and cpu-ratio against the floor
// script, and logs them in one line that starts with what.
func (p planTimes) report(b *testing.B, what string, n int) {
	b.Helper()
	c, w, f, l := p.cold.per(p.iters), p.warm.per(p.iters), p.floor.per(p.iters), p.lstat.per(p.iters)
	b.ReportMetric(w.wallMs(), "custody-ms/op")
	b.ReportMetric(c.wallMs(), "cold-ms/op")
	b.ReportMetric(f.wallMs(), "floor-ms/op")
	b.ReportMetric(w.wallMs()/f.wallMs(), "wall-ratio")
	b.ReportMetric(w.cpuMs()/f.cpuMs(), "cpu-ratio")
	b.ReportMetric(c.wallMs()/f.wallMs(), "cold-wall-ratio")
	b.ReportMetric(c.cpuMs()/f.cpuMs(), "cold-cpu-ratio")
	b.ReportMetric(l.wallMs(), "lstat-ms/op")
	b.ReportMetric(w.wallMs()/l.wallMs(), "lstat-wall-ratio")
	b.ReportMetric(w.cpuMs()/l.cpuMs(), "lstat-cpu-ratio")
	b.ReportMetric(c.wallMs()/l.wallMs(), "cold-lstat-wall-ratio")
	b.ReportMetric(c.cpuMs()/l.cpuMs(), "cold-lstat-cpu-ratio")
	b.ReportMetric(w.wallMs()/float64(n), "ms/tree")
	b.ReportMetric(float64(p.gitRuns)/float64(n), "git/tree")
	b.ReportMetric(float64(p.floorRuns)/float64(n), "floor-git/tree")
	b.Logf("%s N=%d: warm (content hash cache in place) %.0fms wall %.0fms cpu, cold (no cache) %.0fms wall %.0fms cpu, floor %.0fms wall %.0fms cpu, lstat floor %.0fms wall %.0fms cpu: warm wall ratio %.2f, cpu ratio %.2f; cold wall ratio %.2f, cpu ratio %.2f; against the lstat floor warm wall %.2f cpu %.2f, cold wall %.2f cpu %.2f; %.2f ms/tree warm, %.2f cold; git processes %d (%.2f/tree), floor %d (%.2f/tree); %d runs",
		what, n, w.wallMs(), w.cpuMs(), c.wallMs(), c.cpuMs(), f.wallMs(), f.cpuMs(), l.wallMs(), l.cpuMs(), w.wallMs()/f.wallMs(), w.cpuMs()/f.cpuMs(),
		c.wallMs()/f.wallMs(), c.cpuMs()/f.cpuMs(), w.wallMs()/l.wallMs(), w.cpuMs()/l.cpuMs(), c.wallMs()/l.wallMs(), c.cpuMs()/l.cpuMs(),
		w.wallMs()/float64(n), c.wallMs()/float64(n),
		p.gitRuns, float64(p.gitRuns)/float64(n), p.floorRuns, float64(p.floorRuns)/float64(n), p.iters)
}

// wantPlanExit requires plan to have exited 0 or exitPending (something
// kept or refused).
func wantPlanExit(b *testing.B, res clitest.Result) {
	b.Helper()
	if res.Code != exitOK && res.Code != exitPending {
		b.Fatalf("custody plan: want exit 0 or %d, got\n%s", exitPending, res)
	}
}

// check runs the plan once and proves the benchmark measures real work: one
// item per tree, each in its state, with the action, refusal and (for a
// removal) kind of proof its kind calls for. It returns the plan's items.
func (fl *fleet) check(b *testing.B) []machine.PlanItem {
	b.Helper()
	_, res := fl.run(b, nil, "plan", "--json")
	wantPlanExit(b, res)
	items := clitest.DecodeResult[machine.Plan](b, res, "plan").Items
	if len(items) != len(fl.trees) {
		b.Fatalf("plan has %d items, want %d", len(items), len(fl.trees))
	}
	kinds := fl.kindsByID()
	for _, it := range items {
		kind := kinds.of(b, "plan item", it.ID)
		code := ""
		if it.Refusal != nil {
			code = string(it.Refusal.Code)
		}
		proof := ""
		if it.Action == machine.ActionRemove && it.Proof != nil {
			proof = string(it.Proof.Kind)
		}
		want := kindWants[kind]
		if string(it.State) != want.state || string(it.Action) != want.action || code != want.code || proof != want.proof {
			b.Fatalf("plan item %s (kind %d): state %s action %s refusal %q proof %q, want %s %s %q %q",
				it.ID, kind, it.State, it.Action, code, proof, want.state, want.action, want.code, want.proof)
		}
	}
	return items
}

// dropHashCache deletes the repository's content hash cache, so the next
// plan reads every file.
func (fl *fleet) dropHashCache(b *testing.B) {
	b.Helper()
	if err := os.RemoveAll(filepath.Join(fl.r.Dir, ".git", "custody", "cache")); err != nil {
		b.Fatal(err)
	}
}
