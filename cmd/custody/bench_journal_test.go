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
	"github.com/custody-sh/custody/store"
)

// journalEntriesEnv sets how many entries BenchmarkJournal grows the
// journal to (1,000,000 by default).
const journalEntriesEnv = "CUSTODY_BENCH_JOURNAL_ENTRIES"

// BenchmarkJournal measures the journal commands on a journal of a
// million entries (CUSTODY_BENCH_JOURNAL_ENTRIES sets another size): the
// five transitions of each of 200,000 records, created and removed on a
// proof, as many as a long-lived repository that made and removed a tree
// every few minutes for years would hold, committed by the store 2,000
// to a transaction (a transaction each would take hours). For journal export, journal
// verify of that export and journal report (html, from the export and
// from the live journal) it prints wall time, CPU and the peak RSS of one
// run under GNU time. Target: verify and report under 64 MiB of RSS
// whatever the journal's length. Run with
//
//	go test ./cmd/custody/ -run '^$' -bench '^BenchmarkJournal$' -benchtime 1x -timeout 60m
//
// (just bench-journal).
func BenchmarkJournal(b *testing.B) {
	total, err := fixtures.Size(journalEntriesEnv, 1_000_000, 1_000_000)
	if err != nil {
		b.Fatal(err)
	}
	r := fixtures.New(b, fixtures.Options{})
	clitest.MustCustody(b, r, 0, "init")
	start := time.Now()
	growJournal(b, filepath.Join(r.Dir, ".git", "custody", store.FileName), total)
	b.Logf("grew the journal by %d entries in %s", total, time.Since(start).Round(time.Millisecond))
	export := filepath.Join(r.Root, "j.jsonl")
	commands := []struct {
		name string
		args []string
	}{
		{"journal export", []string{"journal", "export", "-o", export}},
		{"journal verify", []string{"journal", "verify", export}},
		{"journal report (export)", []string{"journal", "report", export, "-o", filepath.Join(r.Root, "r1.html")}},
		{"journal report (live)", []string{"journal", "report", "-o", filepath.Join(r.Root, "r2.html")}},
	}
	b.ResetTimer()
	for range b.N {
		for _, c := range commands {
			cmd := exec.Command(clitest.Bin(), c.args...)
			cmd.Dir, cmd.Env = r.Dir, r.Env()
			var out strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &out
			u, err := measure(cmd)
			if err != nil {
				b.Fatalf("custody %s: %v\n%s", strings.Join(c.args, " "), err, out.String())
			}
			rss := float64(peakRSS(b, r.Dir, r.Env(), c.args...)) / (1 << 20)
			fmt.Printf("%-24s %8d entries: %8.0f ms wall %8.0f ms cpu %7.1f MiB peak RSS (target for verify and report: < 64 MiB)\n",
				c.name, total, u.wallMs(), u.cpuMs(), rss)
			b.ReportMetric(rss, strings.NewReplacer(" ", "-", "(", "", ")", "").Replace(c.name)+"-MiB")
		}
	}
}

// growJournal adds n/5 records to the state file at path, each taken from
// create to removed as custody commits them (tombstonedLife: five journal
// entries each), 400 records to a transaction (store.CommitChanges).
func growJournal(b *testing.B, path string, n int) {
	b.Helper()
	s, err := store.OpenContext(context.Background(), path, time.Minute, false)
	if err != nil {
		b.Fatal(err)
	}
	now := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	var batch []store.Transition
	for i := range n / 5 {
		batch = append(batch, tombstonedLife(i, &now)...)
		if len(batch) >= 2_000 || i == n/5-1 {
			if err := store.CommitChanges(s, batch); err != nil {
				b.Fatalf("record %d of %d: %v", i, n/5, err)
			}
			batch = batch[:0]
		}
	}
}
