//go:build unix

package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/store"
)

// scaleRecordsEnv sets how many records BenchmarkScale grows the state
// file to: 3,000 by default, 10,000 under CUSTODY_TEST_FULL=1.
const scaleRecordsEnv = "CUSTODY_BENCH_SCALE_RECORDS"

// BenchmarkScale measures what tombstones cost the commands that read the
// state file. A repository with a few live trees (active, finished and
// pushed, finished and unpushed) is measured once as it is, then again
// after its state file has grown to 3,000 records (10,000 under
// CUSTODY_TEST_FULL=1; any number with CUSTODY_BENCH_SCALE_RECORDS),
// every added one a tree created, finished and removed on a proof (five
// journal entries each, so the journal grows by five entries per record).
// For list, show of a live tree, plan, doctor, journal export and journal
// verify it prints the best of five runs' wall time and CPU, and the peak
// RSS of one more run (under GNU time, where there is one) at each size, and the ratio of the large to the small.
// Growing the file commits each transition as custody does, one
// transaction each, and takes minutes (about 5 at 3,000 records on two
// cores). Targets: list and show under 150 ms at 10,000 records, plan's
// cost unchanged by tombstones (ratio about 1), no memory that grows with
// them but the journal's stream. Run with
//
//	go test ./cmd/custody/ -run '^$' -bench '^BenchmarkScale$' -benchtime 1x -timeout 30m
func BenchmarkScale(b *testing.B) {
	total, err := fixtures.Size(scaleRecordsEnv, 3_000, 10_000)
	if err != nil || total < 100 {
		b.Fatalf("%s: want a number of records of at least 100 (%v)", scaleRecordsEnv, err)
	}
	r := fixtures.New(b, fixtures.Options{})
	run := func(args ...string) (scaleRun, clitest.Result) {
		cmd := exec.Command(clitest.Bin(), args...)
		cmd.Dir = r.Dir
		cmd.Env = r.Env()
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		start := time.Now()
		err := cmd.Run()
		u := scaleRun{wall: time.Since(start)}
		res := clitest.Result{Stdout: out.String(), Stderr: errb.String()}
		if cmd.ProcessState != nil {
			u.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			res.Code = cmd.ProcessState.ExitCode()
		}
		if err != nil && cmd.ProcessState == nil {
			b.Fatalf("custody %v: %v", args, err)
		}
		return u, res
	}
	must := func(args ...string) string {
		_, res := run(args...)
		if res.Code != exitOK {
			b.Fatalf("custody %s: %s", strings.Join(args, " "), res)
		}
		return strings.TrimSpace(res.Stdout)
	}
	must("init")
	var live []string
	for i := range 6 {
		p := must("new", fmt.Sprintf("live%d", i))
		id := filepath.Base(p)
		live = append(live, id)
		r.Commit(p, "f.txt", "work "+id+"\n")
		if i%3 != 0 {
			must("finish", id)
		}
		if i%3 == 1 {
			r.Push(p, "custody/"+id)
		}
	}
	export := filepath.Join(r.Root, "j.jsonl")
	commands := []struct {
		name string
		args []string
	}{
		{"list", []string{"list", "--json"}},
		{"show", []string{"show", live[0], "--json"}},
		{"plan", []string{"plan", "--json", "-o", filepath.Join(r.Root, "p.json")}},
		{"doctor", []string{"doctor", "--json"}},
		{"journal export", []string{"journal", "export", "-o", export}},
		{"journal verify", []string{"journal", "verify", export}},
	}
	measureAll := func() map[string]scaleRun {
		out := map[string]scaleRun{}
		for _, c := range commands {
			var best scaleRun
			for i := range 5 {
				u, res := run(c.args...)
				if res.Code != exitOK && res.Code != exitPending {
					b.Fatalf("custody %s: %s", strings.Join(c.args, " "), res)
				}
				if i == 0 || u.wall < best.wall {
					best = u
				}
			}
			best.rss = peakRSS(b, r.Dir, r.Env(), c.args...)
			out[c.name] = best
		}
		return out
	}
	small := measureAll()
	start := time.Now()
	scaleTombstones(b, filepath.Join(r.Dir, ".git", "custody", store.FileName), total-len(live))
	b.Logf("grew the state file to %d records (%d tombstoned) in %s", total, total-len(live), time.Since(start).Round(time.Millisecond))
	b.ResetTimer()
	for range b.N {
		large := measureAll()
		for _, c := range commands {
			s, l := small[c.name], large[c.name]
			fmt.Printf("%-15s %6d records: %7.1f ms wall %7.1f ms cpu %6.1f MiB; %6d records: %7.1f ms wall %7.1f ms cpu %6.1f MiB; ratio wall %.2f cpu %.2f rss %.2f\n",
				c.name, len(live), s.ms(), s.cpuMs(), s.mib(), total, l.ms(), l.cpuMs(), l.mib(), l.ms()/s.ms(), l.cpuMs()/s.cpuMs(), l.mib()/s.mib())
			key := strings.ReplaceAll(c.name, " ", "-")
			b.ReportMetric(l.ms(), key+"-ms")
			b.ReportMetric(l.ms()/s.ms(), key+"-ratio")
			b.ReportMetric(l.mib(), key+"-MiB")
		}
	}
}

// scaleRun is one command's cost: wall, CPU (user+system) and peak RSS.
type scaleRun struct {
	wall, cpu time.Duration
	rss       int64
}

func (u scaleRun) ms() float64    { return float64(u.wall) / float64(time.Millisecond) }
func (u scaleRun) cpuMs() float64 { return float64(u.cpu) / float64(time.Millisecond) }
func (u scaleRun) mib() float64   { return float64(u.rss) / (1 << 20) }

// scaleTombstones adds n records to the state file at path, each taken
// through create, created, finish, remove (on an ancestry proof) and
// removed, as custody commits them: one transaction each.
func scaleTombstones(b *testing.B, path string, n int) {
	b.Helper()
	s, err := store.OpenContext(context.Background(), path, time.Minute, false)
	if err != nil {
		b.Fatal(err)
	}
	now := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	for i := range n {
		for _, tr := range tombstonedLife(i, &now) {
			if err := s.Commit(tr); err != nil {
				b.Fatalf("record %d of %d, %s: %v", i, n, tr.Trigger, err)
			}
		}
	}
}

// tombstonedLife is the five transitions of the i-th added record, from
// create to removed on an ancestry proof, a second apart from *now on
// (which it advances).
func tombstonedLife(i int, now *time.Time) []store.Transition {
	commit := strings.Repeat("a", 40)
	holder := machine.Holder{PID: 4242, Host: "host"}
	proof := &machine.Proof{Kind: machine.ProofAncestry, Remote: "origin", Ref: "refs/heads/main", Tip: commit, Head: commit}
	id := fmt.Sprintf("old%05d-%06x", i, i)
	rec := machine.Record{ID: id, Origin: machine.OriginCreated, Path: "/gone/.worktrees/" + id, Branch: "custody/" + id, BaseCommit: commit}
	var out []store.Transition
	for _, e := range []struct {
		to machine.State
		tr machine.Trigger
	}{
		{machine.StateProvisioning, machine.TriggerCreate},
		{machine.StateActive, machine.TriggerCreated},
		{machine.StateFinished, machine.TriggerFinish},
		{machine.StateRemoving, machine.TriggerRemove},
		{machine.StateTombstoned, machine.TriggerRemoved},
	} {
		*now = now.Add(time.Second)
		f := machine.Firing{Record: rec, Now: *now}
		var tp *machine.Proof
		switch e.tr {
		case machine.TriggerCreate:
			f.Intent = &machine.Intent{Kind: machine.IntentCreate, Path: rec.Path, Branch: rec.Branch, Commit: commit, Holder: holder, At: *now}
		case machine.TriggerCreated:
			f.Obs = machine.WorktreeObservation{Path: rec.Path, Dev: 64769, Ino: uint64(1000 + i), AdminKey: id}
		case machine.TriggerFinish:
			f.Obs = machine.WorktreeObservation{Head: commit}
		case machine.TriggerRemove:
			f.Intent = &machine.Intent{Kind: machine.IntentRemoval, Path: rec.Path, Commit: commit, Proof: proof, PlanID: "sha256:plan", Holder: holder, At: *now}
			tp = proof
		case machine.TriggerRemoved:
			f.Evidence = machine.Evidence{BranchOutcome: machine.BranchDeleted}
		}
		tr := store.Transition{Before: rec, After: machine.Next(rec, e.to, e.tr, f), Trigger: e.tr,
			Observation: "sha256:" + strings.Repeat("0", 64), Proof: tp, Outcome: string(e.tr), Actor: "bench@host"}
		out = append(out, tr)
		rec = tr.After
	}
	return out
}
