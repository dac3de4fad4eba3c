package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/steps/archive"
)

// abTree fills wt with n files of size bytes each (n*size in all), commits
// a third of them in 3 commits no remote has, and leaves the rest
// untracked.
func abTree(b *testing.B, r *fixtures.Repo, wt string, n, size int) {
	b.Helper()
	data := make([]byte, size)
	for i := range n {
		for j := range data {
			data[j] = byte('a' + (i*31+j*7)%26)
		}
		p := filepath.Join(wt, fmt.Sprintf("d%02d", i%40), fmt.Sprintf("f%04d.txt", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			b.Fatal(err)
		}
		if i < n/3 && i%(n/9) == n/9-1 {
			r.CommitAll(wt, fmt.Sprintf("commit %d", i))
		}
	}
}

// abFloor is the raw git floor of a capture: `git bundle create` of the
// unpushed commits and a `git stash create`-equivalent of the tree (add
// everything, ignored files too, to a scratch index and write its tree;
// then a binary diff against HEAD).
func abFloor(b *testing.B, r *fixtures.Repo, wt, out string) {
	b.Helper()
	_ = os.RemoveAll(out)
	if err := os.MkdirAll(out, 0o700); err != nil {
		b.Fatal(err)
	}
	run := func(env []string, args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = wt, append(r.Env(), env...)
		o, err := cmd.Output()
		if err != nil {
			b.Fatalf("git %v: %v", args, err)
		}
		return string(o)
	}
	run(nil, "bundle", "create", "-q", filepath.Join(out, "b.bundle"), "HEAD", "^origin/main")
	idx := []string{"GIT_INDEX_FILE=" + filepath.Join(out, "index")}
	run(idx, "add", "-A", "-f", ".")
	tree := run(idx, "write-tree")
	run(nil, "diff-tree", "-p", "--binary", "--output="+filepath.Join(out, "p.patch"), "HEAD", tree[:len(tree)-1])
}

// BenchmarkArchive times `custody archive create` and `custody archive
// restore` of a tree of 2,000 files (8 MB) with 3 unpushed commits against
// the raw git floor on the same tree in the same iteration: for capture
// abFloor, for restore `git clone` of the bundle plus `git apply` of the
// patch. It reports capture-ratio (target ≤ 3) and restore-ratio (target
// ≤ 2). Run with
//
//	go test ./cmd/custody/ -run '^$' -bench Archive -benchtime 3x
func BenchmarkArchive(b *testing.B) {
	r := fixtures.New(b, fixtures.Options{})
	clitest.MustCustody(b, r, 0, "init")
	id, wt := clitest.NewTree(b, r, "bench")
	abTree(b, r, wt, 2000, 4096)
	r.GitIn(wt, "fetch", "-q", "origin")
	floorDir := filepath.Join(r.Root, "floor")
	var capC, capF, resC, resF time.Duration
	iters := 0
	for b.Loop() {
		start := time.Now()
		res := clitest.DecodeResult[archive.ArchiveCreated](b, clitest.MustCustody(b, r, 0, "--json", "archive", "create", id), "archive create")
		capC += time.Since(start)
		b.StopTimer()
		start = time.Now()
		abFloor(b, r, wt, floorDir)
		capF += time.Since(start)

		dst := filepath.Join(r.Root, fmt.Sprintf("restored-%d", iters))
		b.StartTimer()
		start = time.Now()
		clitest.MustCustody(b, r, 0, "archive", "restore", res.Dir, dst)
		resC += time.Since(start)
		b.StopTimer()
		clone := filepath.Join(r.Root, fmt.Sprintf("clone-%d", iters))
		start = time.Now()
		r.GitIn(r.Root, "clone", "-q", r.Remote, clone)
		r.GitIn(clone, "fetch", "-q", filepath.Join(floorDir, "b.bundle"), "HEAD")
		r.GitIn(clone, "checkout", "-q", "FETCH_HEAD")
		r.GitIn(clone, "apply", "--binary", filepath.Join(floorDir, "p.patch"))
		resF += time.Since(start)
		b.StartTimer()
		iters++
	}
	n := float64(iters)
	b.ReportMetric(float64(capC.Milliseconds())/n, "capture-ms/op")
	b.ReportMetric(float64(capF.Milliseconds())/n, "capture-floor-ms/op")
	b.ReportMetric(capC.Seconds()/capF.Seconds(), "capture-ratio")
	b.ReportMetric(float64(resC.Milliseconds())/n, "restore-ms/op")
	b.ReportMetric(float64(resF.Milliseconds())/n, "restore-floor-ms/op")
	b.ReportMetric(resC.Seconds()/resF.Seconds(), "restore-ratio")
}
