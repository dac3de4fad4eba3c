package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
)

// sweepSizesEnv overrides the largest fleet BenchmarkSweep sweeps.
const sweepSizesEnv = "CUSTODY_BENCH_SWEEP_MAX"

// BenchmarkSweep measures `custody sweep` of a fleet of N idle trees (100
// by default; CUSTODY_BENCH_SWEEP_MAX, or 1,000 under CUSTODY_TEST_FULL=1),
// each with a committed Cargo.toml, 40 source files and a Cargo target/ of
// 200 files, against its floor: one lstat walk of every tree, its output
// included (`find TREES -printf %C@`, which lstats each entry), then
// `rm -rf` of the same target/ directories: the least any tool that checks
// a tree before deleting its output must do. Before each run
// the target/ directories are written again, untimed; the two runs
// alternate which goes first, so both see the same load. Reported: wall
// and CPU time (user+system of the process and its children) of each and
// their ratios; the sweep's output is checked to have freed every tree.
// Run with
//
//	go test ./cmd/custody/ -run '^$' -bench 'Sweep$' -benchtime 3x -timeout 60m
//
// Target: the sweep at most 1.5 times its floor.
func BenchmarkSweep(b *testing.B) {
	n, err := fixtures.Size(sweepSizesEnv, 100, 1000)
	if err != nil {
		b.Fatal(err)
	}
	r := fixtures.New(b, fixtures.Options{})
	clitest.MustCustody(b, r, 0, "init")
	trees := make([]string, 0, n)
	for i := range n {
		_, p := clitest.NewTree(b, r, fmt.Sprintf("t%d", i))
		for j := range 40 {
			writeBench(b, filepath.Join(p, "src", fmt.Sprintf("m%d.rs", j)), "fn f() {}\n")
		}
		writeBench(b, filepath.Join(p, "Cargo.toml"), "[package]\nname = \"x\"\n")
		r.CommitAll(p, "crate")
		trees = append(trees, p)
	}
	build := func() {
		for _, p := range trees {
			writeBench(b, filepath.Join(p, "target", ".rustc_info.json"), "{}\n")
			for j := range 200 {
				writeBench(b, filepath.Join(p, "target", "debug", "deps", fmt.Sprintf("o%d.rlib", j)), strings.Repeat("o", 512))
			}
		}
		time.Sleep(20 * time.Millisecond) // older than --idle 1ms
	}
	var custody, floor usage
	iters := 0
	sweep := func() {
		build()
		cmd := exec.Command(clitest.Bin(), "sweep", "--idle", "1ms")
		cmd.Dir, cmd.Env = r.Dir, r.Env()
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		u, err := measure(cmd)
		if err != nil || strings.Count(out.String(), "discarded target (cargo-target") != n {
			b.Fatalf("custody sweep: %v\n%s", err, out.String())
		}
		custody.add(u)
	}
	base := func() {
		build()
		// An lstat of every entry of every tree, output and all (what
		// deciding that a tree is idle needs), then the deletion.
		// find's -printf '' would stat nothing (it goes by the
		// directory entries' types); %C@ makes it lstat each.
		find := exec.Command("find", append(append([]string{}, trees...), "-printf", "%C@")...)
		u, err := measure(find)
		if err != nil {
			b.Fatal(err)
		}
		var rm []string
		for _, p := range trees {
			rm = append(rm, filepath.Join(p, "target"))
		}
		w, err := measure(exec.Command("rm", append([]string{"-rf", "--"}, rm...)...))
		if err != nil {
			b.Fatal(err)
		}
		u.add(w)
		floor.add(u)
	}
	for b.Loop() {
		if iters%2 == 0 {
			sweep()
			base()
		} else {
			base()
			sweep()
		}
		iters++
	}
	b.StopTimer()
	c, f := custody.per(iters), floor.per(iters)
	b.ReportMetric(c.wallMs(), "sweep-ms/op")
	b.ReportMetric(f.wallMs(), "floor-ms/op")
	b.ReportMetric(c.wallMs()/f.wallMs(), "wall-ratio")
	b.ReportMetric(c.cpuMs()/f.cpuMs(), "cpu-ratio")
	b.Logf("sweep N=%d idle trees: custody sweep %.0fms wall %.0fms cpu, floor (an lstat walk of the trees + rm -rf of the target/ dirs) %.0fms wall %.0fms cpu: wall ratio %.2f, cpu ratio %.2f (target ≤ 1.5); %d runs",
		n, c.wallMs(), c.cpuMs(), f.wallMs(), f.cpuMs(), c.wallMs()/f.wallMs(), c.cpuMs()/f.cpuMs(), iters)
}

// writeBench writes content to p, making its directory.
func writeBench(b *testing.B, p, content string) {
	b.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		b.Fatal(err)
	}
}
