package quarantine

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/custody-sh/custody/observe/gitfiles"
)

// benchCPU is the process's user and system time so far, in nanoseconds.
func benchCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// benchQuarantine makes n quarantines of 2,050 files each (41 directories
// of 50 files, 1-4 KiB each, and a .git file), with their manifest, and
// waits until their stamps are older than the racy-clean margin, as a
// tree's are when it is removed.
func benchQuarantines(b *testing.B, n int) ([]string, Manifest) {
	b.Helper()
	root := b.TempDir()
	m := Manifest{".git": {Kind: "gitfile"}}
	var qs []string
	for k := range n {
		q := filepath.Join(root, fmt.Sprintf("q%d", k))
		for d := range 41 {
			for f := range 50 {
				rel := fmt.Sprintf("d%02d/f%02d.txt", d, f)
				content := strings.Repeat(fmt.Sprintf("%s line\n", rel), 60+(d*50+f)%180)
				p := filepath.Join(q, filepath.FromSlash(rel))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					b.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					b.Fatal(err)
				}
				m[rel] = Entry{Kind: "file", OID: gitfiles.BlobID(gitfiles.FormatSHA1, []byte(content))}
			}
		}
		if err := os.WriteFile(filepath.Join(q, ".git"), []byte("gitdir: /repo/.git/worktrees/t\n"), 0o644); err != nil {
			b.Fatal(err)
		}
		qs = append(qs, q)
	}
	if os.Getenv("CUSTODY_BENCH_SYNC") != "" {
		syscall.Sync() // their blocks on disk, as a tree's are
	}
	time.Sleep(2500 * time.Millisecond)
	return qs, m
}

// BenchmarkQuarantineDelete checks and deletes a quarantine of 2,050
// files (run with -benchtime=Nx: the fixtures are made first), with every
// directory held open and with only the quarantine held (every other
// directory opened again from its parent).
func BenchmarkQuarantineDelete(b *testing.B) {
	for _, c := range []struct {
		name   string
		budget int
	}{{"held", 0}, {"reopened", 1}} {
		b.Run(c.name, func(b *testing.B) {
			qs, m := benchQuarantines(b, b.N)
			b.ResetTimer()
			cpu0 := benchCPU()
			defer func() { b.ReportMetric(float64(benchCPU()-cpu0)/float64(b.N)/1e6, "cpu-ms/op") }()
			for i := range b.N {
				if res := (qdeletion{m: m, idLen: 40, budget: c.budget}).run(qs[i]); res.stray != "" {
					b.Fatalf("stopped at %s: %s %v", res.stray, res.why, res.err)
				}
			}
		})
	}
}
