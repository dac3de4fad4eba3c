package proof

import (
	"bytes"
	"context"
	"fmt"
	"github.com/custody-sh/custody/observe/hostio"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBatchSquashQuestionsStayWithinTheOutputBound: each head's squash
// search bounds the "<commit>:<path>" lines it asks (maxSquashChecks), so
// one head's cat-file answer stays far below the runner's output bound;
// the batch asks every head's lines in one cat-file, whose answer grows
// with the heads. Past the bound the whole batch fails and every head is
// proved again alone: the processes 0215 saved come back, and more. Here
// the bound is scaled down (256 KiB; 64 MiB by default: some 5000
// advertised refs, pull request heads among them, times 10 paths times 25
// heads reach it).
func TestBatchSquashQuestionsStayWithinTheOutputBound(t *testing.T) {
	t.Parallel()
	gw := newGitWrapper(t)
	root := t.TempDir()
	dir := filepath.Join(root, "repo")
	run := func(stdin []byte, args ...string) string {
		t.Helper()
		cmd := exec.Command(gw.bin, args...)
		cmd.Dir = dir
		cmd.Stdin = bytes.NewReader(stdin)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return strings.TrimRight(string(out), "\n")
	}
	if err := exec.Command(gw.bin, "init", "-q", "-b", "main", dir).Run(); err != nil {
		t.Fatal(err)
	}
	// :1 base; :2… 50 tips off base changing nothing of the heads';
	// then 40 heads off base, each adding 10 files of its own.
	const tips, heads, files = 50, 40, 10
	var in bytes.Buffer
	mark := 0
	commit := func(ref, from string, add map[string]string) {
		mark++
		fmt.Fprintf(&in, "commit %s\nmark :%d\ncommitter G <g@example.invalid> %d +0000\ndata 2\nc\n", ref, mark, 1767225600+mark)
		if from != "" {
			fmt.Fprintf(&in, "from %s\n", from)
		}
		for p, c := range add {
			fmt.Fprintf(&in, "M 100644 inline %s\ndata %d\n%s\n", p, len(c), c)
		}
	}
	commit("refs/heads/main", "", map[string]string{"README": "base\n"})
	for i := range tips {
		commit(fmt.Sprintf("refs/heads/t%02d", i), ":1", map[string]string{fmt.Sprintf("tip%02d.txt", i): "a tip\n"})
	}
	for i := range heads {
		add := map[string]string{}
		for j := range files {
			add[fmt.Sprintf("w%02d/f%d.txt", i, j)] = "mine\n"
		}
		commit(fmt.Sprintf("refs/work/w%02d", i), ":1", add)
	}
	run(in.Bytes(), "fast-import", "--quiet")
	v := &RemoteView{Remotes: []string{"origin"}, patches: newPatchCache()}
	for _, line := range strings.Split(run(nil, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads/"), "\n") {
		ref, id, _ := strings.Cut(line, " ")
		v.Tips = append(v.Tips, Tip{Remote: "origin", Ref: ref, Commit: id, Default: ref == "refs/heads/main"})
	}
	var hs []string
	for _, line := range strings.Split(run(nil, "for-each-ref", "--format=%(objectname)", "refs/work/"), "\n") {
		hs = append(hs, line)
	}
	repo := hostio.Repo{CommonDir: filepath.Join(dir, ".git"), MainCheckout: dir, Toplevel: dir}
	count := func(heads []string) int {
		var trace bytes.Buffer
		g := hostio.NewGit(&hostio.Runner{MaxOutput: 256 << 10, Trace: &trace})
		g.Bin = gw.bin
		for h, r := range ProveAll(context.Background(), g, repo, heads, v) {
			if r.Err != nil || r.Proof != nil {
				t.Fatalf("%s: %+v, want no proof", h, r)
			}
		}
		n := 0
		for _, line := range strings.Split(trace.String(), "\n") {
			if line != "" && !strings.Contains(line, " cat-file --batch-check=%(objectname)") {
				n++
			}
		}
		return n
	}
	// The squash questions of 40 heads answer in over a megabyte, which
	// the scaled-down bound cuts into several cat-files; every other
	// question is still asked once for the batch (proving each head alone
	// again would take 4 more processes per head).
	if two, all := count(hs[:2]), count(hs); all != two {
		t.Errorf("git processes but the squash cat-files: %d for 2 heads, %d for %d; want the same", two, all, len(hs))
	}
}
