package main

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
)

// mgBenchTrees is how many trees each side of BenchmarkMigratePlan has.
const mgBenchTrees = 100

// BenchmarkMigratePlan measures `custody migrate plan` over 100 legacy
// candidates (plain linked worktrees beside the main checkout, one in ten
// with a commit no remote has) against `custody plan` over 100 finished
// managed trees of the same repository in the same state, in the same loop
// iteration, alternating which goes first. It reports both and their
// ratio (target ≤ 1.5). Run with
//
//	go test ./cmd/custody/ -run '^$' -bench MigratePlan -benchtime 5x
func BenchmarkMigratePlan(b *testing.B) {
	r := fixtures.New(b, fixtures.Options{})
	clitest.MustCustody(b, r, 0, "init")
	legacy := filepath.Join(r.Root, "legacy")
	for i := range mgBenchTrees {
		p := filepath.Join(legacy, fmt.Sprintf("tree-%03d", i))
		r.Git("worktree", "add", "-q", "-b", fmt.Sprintf("legacy-%03d", i), p, "main")
		id, path := clitest.NewTree(b, r, fmt.Sprintf("managed %03d", i))
		if i%10 == 0 {
			r.Commit(p, "work.txt", "unpushed\n")
			r.Commit(path, "work.txt", "unpushed\n")
		}
		clitest.MustCustody(b, r, 0, "finish", id)
	}
	// The legacy trees are candidates of the parent scan's old root.
	run := func(args ...string) usage {
		cmd := exec.Command(clitest.Bin(), args...)
		cmd.Dir, cmd.Env = r.Dir, r.Env()
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		u, err := measure(cmd)
		if err != nil {
			b.Fatalf("custody %v: %v\n%s", args, err, &out)
		}
		return u
	}
	var mig, plan usage
	iters := 0
	for b.Loop() {
		m := func() { mig.add(run("migrate", "plan", "-o", filepath.Join(r.Root, "migrate.json"))) }
		p := func() { plan.add(run("plan", "-o", filepath.Join(r.Root, "plan.json"))) }
		if iters%2 == 0 {
			m()
			p()
		} else {
			p()
			m()
		}
		iters++
	}
	mig, plan = mig.per(iters), plan.per(iters)
	b.ReportMetric(mig.wallMs(), "migrate-ms")
	b.ReportMetric(plan.wallMs(), "plan-ms")
	b.ReportMetric(mig.wallMs()/plan.wallMs(), "ratio")
	b.Logf("migrate plan %.0f ms (cpu %.0f ms), custody plan %.0f ms (cpu %.0f ms): ratio %.2f× (target ≤ 1.5×)",
		mig.wallMs(), mig.cpuMs(), plan.wallMs(), plan.cpuMs(), mig.wallMs()/plan.wallMs())
}
