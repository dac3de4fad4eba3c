//go:build unix

package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/store"
)

// BenchmarkJournalMillion builds a 1,000,000-entry journal export (200,000
// trees, each created, finished and removed with an ancestry proof) and
// times `custody journal verify` and `custody journal report` over it,
// printing each one's wall time and peak RSS (of one more run under GNU
// time: see peakRSS). Both must stay under 64 MiB: they stream, and the report holds
// the records still open and an index entry per record (decision 0254).
// Run with
//
//	go test ./cmd/custody/ -run '^$' -bench JournalMillion -benchtime 1x
func BenchmarkJournalMillion(b *testing.B) {
	const entries = 1_000_000
	const limit = 64 << 20
	dir := b.TempDir()
	file := filepath.Join(dir, "million.jsonl")
	start := time.Now()
	if err := rbWriteExport(file, entries); err != nil {
		b.Fatal(err)
	}
	fi, _ := os.Stat(file)
	b.Logf("built %d entries (%d MiB) in %s", entries, fi.Size()>>20, time.Since(start).Round(time.Millisecond))
	b.ResetTimer()
	for range b.N {
		for _, run := range []struct {
			name string
			args []string
		}{
			{"verify", []string{"journal", "verify", file}},
			{"report", []string{"journal", "report", file, "-o", filepath.Join(dir, "million.html")}},
		} {
			cmd := exec.Command(clitest.Bin(), run.args...)
			cmd.Dir = dir
			t0 := time.Now()
			out, err := cmd.CombinedOutput()
			took := time.Since(t0)
			if err != nil {
				b.Fatalf("custody %v: %v\n%s", run.args, err, out)
			}
			rss := peakRSS(b, dir, os.Environ(), run.args...)
			if rss == 0 {
				b.Skip("no /usr/bin/time to measure the peak RSS with")
			}
			fmt.Printf("journal %s of %d entries: %s, peak RSS %.1f MiB\n", run.name, entries, took.Round(time.Millisecond), float64(rss)/(1<<20))
			b.ReportMetric(float64(rss)/(1<<20), run.name+"-MiB")
			b.ReportMetric(took.Seconds(), run.name+"-s")
			if rss > limit {
				b.Errorf("journal %s peaked at %.1f MiB RSS, over the %d MiB bound", run.name, float64(rss)/(1<<20), limit>>20)
			}
		}
	}
}

// rbWriteExport writes a valid export of n entries to file: each entry's
// hash chains to the one before it as store.Verify checks.
func rbWriteExport(file string, n int) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	t0 := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	prev := ""
	steps := []struct{ from, to, trigger, outcome string }{
		{"none", "provisioning", "create", "create intent"},
		{"provisioning", "active", "created", "created"},
		{"active", "finished", "finish", "finish"},
		{"finished", "removing", "remove", "removal intent"},
		{"removing", "tombstoned", "removed", "removed"},
	}
	for i := range n {
		tree, step := i/len(steps), steps[i%len(steps)]
		id := fmt.Sprintf("t-%06x", tree)
		head := fmt.Sprintf("%040x", tree+1)
		e := store.Entry{Seq: uint64(i + 1), At: t0.Add(time.Duration(i) * time.Second), Record: id, Kind: "worktree",
			From: step.from, To: step.to, Trigger: step.trigger, Observation: fmt.Sprintf("sha256:%064x", i),
			Outcome: step.outcome, Actor: "ci@build", Prev: prev}
		proof := &machine.Proof{Kind: machine.ProofAncestry, Remote: "origin", Ref: "refs/heads/main", Tip: head, Head: head}
		switch step.trigger {
		case "create":
			e.Intent, _ = json.Marshal(machine.Intent{Kind: machine.IntentCreate, Path: "/srv/repo/.worktrees/" + id, Branch: "custody/" + id, Commit: head, At: e.At})
		case "remove":
			e.Intent, _ = json.Marshal(machine.Intent{Kind: machine.IntentRemoval, Path: "/srv/repo/.worktrees/" + id, Branch: "custody/" + id,
				Commit: head, Proof: proof, Fingerprint: e.Observation, PlanID: "sha256:plan", At: e.At})
			e.Proof = proof
		case "removed":
			e.Proof = proof
		}
		raw, err := json.Marshal(e)
		if err != nil {
			return err
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return err
		}
		delete(m, "hash")
		body, _ := json.Marshal(m)
		d := sha256.Sum256(body)
		h := sha256.Sum256([]byte(prev + "\n" + hex.EncodeToString(d[:])))
		e.Hash = hex.EncodeToString(h[:])
		line, _ := json.Marshal(e)
		w.Write(line)
		w.WriteByte('\n')
		prev = e.Hash
	}
	return w.Flush()
}
