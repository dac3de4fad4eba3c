package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
)

// BenchmarkHook measures a session hook on a repository with 100 managed
// trees against a bare `git rev-parse --show-toplevel` in the same tree,
// run alternately in one loop so both see the same load, and prints the
// ratio of their medians:
//
//   - heartbeat: a renewal too recent to write again (the common case: an
//     agent heartbeats on every prompt and tool call), a read;
//   - session-start: a new session's lease taken, a write transaction
//     with its journal entry (each iteration ends that session untimed).
//
// Run with
//
//	go test ./cmd/custody/ -run '^$' -bench Hook -benchtime 200x
//
// (just bench-hook). Target: each ≤ 2× the git floor in wall time; the CPU
// ratio (user+system time of the process, which the machine's load does
// not stretch) is reported beside it, and a last line names both hooks
// with both ratios and the machine's load average.
func BenchmarkHook(b *testing.B) {
	r := fixtures.New(b, fixtures.Options{})
	clitest.MustCustody(b, r, 0, "init")
	var path string
	for i := range 100 {
		_, p := clitest.NewTree(b, r, fmt.Sprintf("tree %d", i))
		if i == 50 {
			path = p
		}
	}
	// cpu is a run's user+system time: what the machine's load does not
	// stretch, beside the wall time the agent waits.
	cpu := func(cmd *exec.Cmd) time.Duration { return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime() }
	var hookCPU, floorCPU []time.Duration
	hook := func(name, session string) time.Duration {
		payload := `{"session_id":"` + session + `","cwd":"` + path + `","hook_event_name":"X"}`
		cmd := exec.Command(clitest.Bin(), "hook", name)
		cmd.Dir, cmd.Env, cmd.Stdin = path, r.Env(), strings.NewReader(payload)
		var out bytes.Buffer
		cmd.Stdout = &out
		start := time.Now()
		if err := cmd.Run(); err != nil || !strings.Contains(out.String(), `"ok":true`) {
			b.Fatalf("custody hook %s: %v\n%s", name, err, out.String())
		}
		d := time.Since(start)
		hookCPU = append(hookCPU, cpu(cmd))
		return d
	}
	floor := func() time.Duration {
		cmd := exec.Command("git", "rev-parse", "--show-toplevel")
		cmd.Dir, cmd.Env = path, r.Env()
		start := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		d := time.Since(start)
		floorCPU = append(floorCPU, cpu(cmd))
		return d
	}
	// start is custody's own start and exit (--version parses the whole
	// CLI): the floor under any custody command, hooks included.
	start := func() time.Duration {
		cmd := exec.Command(clitest.Bin(), "--version")
		cmd.Dir, cmd.Env = path, r.Env()
		t0 := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	hook("session-start", "warm")
	summary := map[string]string{} // each case's ratios, by hook
	for _, c := range []struct {
		name string
		run  func(i int) time.Duration
	}{
		{"heartbeat/N=100", func(int) time.Duration { return hook("heartbeat", "warm") }},
		{"session-start/N=100", func(i int) time.Duration {
			s := fmt.Sprintf("bench-%d", i)
			d := hook("session-start", s)
			hook("session-end", s)
			return d
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			if c.name != "heartbeat/N=100" {
				hook("session-end", "warm")
				defer hook("session-start", "warm")
			}
			var mine, git, starts []time.Duration
			hookCPU, floorCPU = nil, nil
			i := 0
			for b.Loop() {
				if i%2 == 0 {
					mine = append(mine, c.run(i))
					git = append(git, floor())
				} else {
					git = append(git, floor())
					mine = append(mine, c.run(i))
				}
				starts = append(starts, start())
				i++
			}
			m, g := median(mine), median(git)
			ratio := float64(m) / float64(g)
			b.ReportMetric(float64(m)/float64(time.Millisecond), "ms/hook")
			b.ReportMetric(float64(g)/float64(time.Millisecond), "ms/rev-parse")
			b.ReportMetric(ratio, "x-rev-parse")
			// The session-start case also ran an untimed session-end per
			// iteration: its CPU figures are those of every hook run.
			cr := float64(median(hookCPU)) / float64(median(floorCPU))
			b.ReportMetric(cr, "x-rev-parse-cpu")
			b.Logf("%s: hook %.2f ms, git rev-parse --show-toplevel %.2f ms: %.2fx wall (target ≤ 2x); CPU %.2f ms vs %.2f ms: %.2fx", c.name,
				float64(m)/float64(time.Millisecond), float64(g)/float64(time.Millisecond), ratio,
				float64(median(hookCPU))/float64(time.Millisecond), float64(median(floorCPU))/float64(time.Millisecond), cr)
			b.Logf("%s: custody --version alone %.2f ms (%.2fx git): the start every command kong parses pays", c.name,
				float64(median(starts))/float64(time.Millisecond), float64(median(starts))/float64(g))
			// The last case says both hooks' ratios at once (a
			// benchmark's own log shows only where it reports results).
			hookName := strings.TrimSuffix(c.name, "/N=100")
			summary[hookName] = fmt.Sprintf("%s %.2fx wall, %.2fx CPU", hookName, ratio, cr)
			if hb, ok := summary["heartbeat"]; ok && hookName == "session-start" {
				b.Logf("custody hook vs git rev-parse --show-toplevel (100 trees; target ≤ 2x wall each): %s; %s; load average %s",
					hb, summary[hookName], loadAverage())
			}
		})
	}
}

// loadAverage is the machine's load average over 1, 5 and 15 minutes, as
// uptime prints it, or "unknown" where /proc/loadavg is not there.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], ", ")
	}
	return "unknown"
}

// median is the middle of ds.
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}
