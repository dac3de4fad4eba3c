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
// of 50 files, 1-4 KiB each, and a .git file), with their manifest: each
// tree is written, then (after settle, as a tree is when it is removed
// some time after its last write) moved to its quarantine path, which
// stamps their parent as a removal's rename does.
func benchQuarantines(b *testing.B, n int, settle time.Duration) ([]string, Manifest) {
	b.Helper()
	root := b.TempDir()
	m := Manifest{".git": {Kind: "gitfile"}}
	var qs []string
	for k := range n {
		q := filepath.Join(root, fmt.Sprintf("t%d", k))
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
	time.Sleep(settle)
	for k, t := range qs {
		qs[k] = filepath.Join(root, fmt.Sprintf("q%d", k))
		if err := os.Rename(t, qs[k]); err != nil {
			b.Fatal(err)
		}
	}
	return qs, m
}

// BenchmarkQuarantineDelete checks and deletes a quarantine of 2,050
// files (run with -benchtime=Nx: the fixtures are made first), with every
// directory held open and with only the quarantine held (every other
// directory opened again from its parent), of trees written long before
// and a moment before; "reread" trusts no identity (every file read
// twice, as the re-check did for a tree younger than 2 s before 0261).
func BenchmarkQuarantineDelete(b *testing.B) {
	for _, c := range []struct {
		name   string
		budget int
		settle time.Duration
		reread bool
	}{{"held", 0, 2500 * time.Millisecond, false}, {"reopened", 1, 2500 * time.Millisecond, false},
		{"fresh", 0, 20 * time.Millisecond, false}, {"fresh-reread", 0, 20 * time.Millisecond, true}} {
		b.Run(c.name, func(b *testing.B) {
			qs, m := benchQuarantines(b, b.N, c.settle)
			b.ResetTimer()
			cpu0 := benchCPU()
			defer func() { b.ReportMetric(float64(benchCPU()-cpu0)/float64(b.N)/1e6, "cpu-ms/op") }()
			for i := range b.N {
				var since time.Time
				if !c.reread {
					since = changeMoment(qs[i]) // as Remove takes it, right after the rename
				}
				if res := (qdeletion{m: m, idLen: 40, budget: c.budget, since: since}).run(qs[i]); res.stray != "" {
					b.Fatalf("stopped at %s: %s %v", res.stray, res.why, res.err)
				}
			}
		})
	}
}
