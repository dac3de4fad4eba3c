package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
)

// BenchmarkRealHistory measures `custody plan --json` on a repository
// shaped like a real public project's, against testdata/floor.sh (the
// floor script BenchmarkFleet uses) and the lstat floor, interleaved as
// BenchmarkFleet's plan/N is (fleet.timePlan): origin advertises ~950 refs
// (740 branches, most of them merged into main, one in seven not; ~210
// annotated release tags) over ~3,200 commits with ~630 merges, and
// main's checkout holds 2,000 files in 120 directories. The history is
// built by one `git fast-import` of a generated stream (historyStream),
// the same every run. The fleet is N managed trees (25; CUSTODY_BENCH_MAX=100
// adds 100) in historyKinds' mix: merged into main, merged on their own
// branch, squash-merged, no new commits, unpushed, untracked, ignored and
// tracked changes, and active; then historyOthers commits of other people
// land on origin main (fleet.othersWork), editing the files the trees
// made, as main moves on between a tree's making and its cleanup. Plan's
// verdict and proof kind on each tree are checked (fleet.check) before
// anything is timed, and how many squash proofs went through a commit
// under the tip is logged. Reported as BenchmarkFleet's
// plan/N: wall and CPU time of warm and cold plan against each floor and
// their ratios, and git processes per tree. Run with
//
//	go test ./cmd/custody/ -run '^$' -bench RealHistory -benchtime 3x -timeout 60m
//
// Target: plan ≤ 1.2× the floor script (wall-ratio, the warm plan; the
// cold one is cold-wall-ratio).
func BenchmarkRealHistory(b *testing.B) {
	floor := testdataScript(b, "floor.sh")
	sizes := []int{25}
	if os.Getenv("CUSTODY_BENCH_MAX") != "" {
		sizes = sizes[:0]
		for _, n := range benchSizes(b) {
			if n <= 100 {
				sizes = append(sizes, n)
			}
		}
	}
	fl, shape := newHistoryFleet(b)
	fl.noNewFloor = true // new is BenchmarkFleet's to measure
	for _, n := range sizes {
		b.Run(fmt.Sprintf("plan/N=%d", n), func(b *testing.B) {
			b.Log(shape)
			from := len(fl.trees)
			fl.grow(b, n)
			fl.othersWork(b, fl.trees[from:])
			p := fl.timePlan(b, floor)
			p.report(b, "real history plan", n)
			squash, via := 0, 0
			for _, it := range p.checked {
				if it.Proof != nil && it.Proof.Kind == machine.ProofSquashMerged {
					squash++
					if it.Proof.Via != "" {
						via++
					}
				}
			}
			b.Logf("%d squash-merged proofs, %d of them through a squash commit under the tip (main edited the tree's files since)", squash, via)
		})
	}
}

// historyOthers is how many commits of other people land on origin main
// after each window of the fleet's work (fleet.othersWork).
const historyOthers = 200

// othersWork publishes on origin main, after the work of trees was merged,
// historyOthers commits of other people (one `git fast-import`), each
// editing one file: in turn the first file each tree that committed made
// (so a squash-merged tree's squash commit is no longer main's version of
// its files, and its proof must find the commit in the history) and a
// file of the project. Main moves on, as it does in a project between the day
// a tree was made and the day it is cleaned up; the main checkout then
// fast-forwards to it, so the next window's trees fork from there.
func (fl *fleet) othersWork(b *testing.B, trees []fleetTree) {
	b.Helper()
	r := fl.r
	var made []string
	for _, t := range trees {
		if t.head != "" {
			made = append(made, "work/"+t.id+".txt")
		}
	}
	var w bytes.Buffer
	data := func(s string) { fmt.Fprintf(&w, "data %d\n%s\n", len(s), s) }
	clock := int64(historyFirstTimestamp) + 10*365*24*3600
	for i := range historyOthers {
		// 37 is prime to historyFiles: the project files spread out.
		path := historyPath(i * 37 % historyFiles)
		if i%2 == 0 && len(made) > 0 {
			path = made[i/2%len(made)]
		}
		clock += 900
		fmt.Fprintf(&w, "commit refs/heads/main\ncommitter Others <others@example.org> %d +0000\n", clock)
		data("Other people's work.\n")
		if i == 0 {
			fmt.Fprintf(&w, "from %s\n", r.GitIn(r.Remote, "rev-parse", "refs/heads/main"))
		}
		fmt.Fprintf(&w, "M 100644 inline %s\n", path)
		data(fmt.Sprintf("%s, as edited by others (%d)\n", path, i))
	}
	fastImport(b, r, w.Bytes())
	r.Git("fetch", "-q", "origin")
	r.Git("merge", "-q", "--ff-only", "origin/main")
}

// historyKinds is the real-history fleet's mix of kinds, by index modulo
// 10: the fleet's (fleetKinds), but for one of its two trees merged on
// their own branch, which is squash-merged into main instead.
var historyKinds = []int{
	kindMergedMain, kindMergedBranch, kindSquashed, kindMergedMain, kindNoCommits,
	kindUnpushed, kindUntracked, kindIgnored, kindTracked, kindActive,
}

// newHistoryFleet makes the repository: historyStream imported into
// origin, its refs packed as a forge keeps them, fetched into the main
// checkout (which fast-forwards main to the imported tip), then fleetOn.
// It checks the shape it built and returns it in words.
func newHistoryFleet(b *testing.B) (*fleet, string) {
	b.Helper()
	start := time.Now()
	r := fixtures.New(b, fixtures.Options{})
	stream := historyStream(r.Head(r.Dir))
	fastImport(b, r, stream)
	r.GitIn(r.Remote, "pack-refs", "--all")
	r.Git("fetch", "-q", "origin")
	r.Git("merge", "-q", "--ff-only", "origin/main")
	r.Git("pack-refs", "--all")
	count := func(args ...string) int {
		out := r.Git(args...)
		if out == "" {
			return 0
		}
		return strings.Count(out, "\n") + 1
	}
	commits := count("rev-list", "--all")
	merges := count("rev-list", "--all", "--merges")
	refs := count("ls-remote", "--refs", "origin")
	tags := count("ls-remote", "--refs", "--tags", "origin")
	unmerged := count("branch", "-r", "--no-merged", "origin/main")
	files := count("ls-files")
	shape := fmt.Sprintf("history: %d commits (%d merges), %d advertised refs (%d tags, %d branches not merged into main), %d files in the checkout; built in %s (stream %d KiB)",
		commits, merges, refs, tags, unmerged, files, time.Since(start).Round(time.Millisecond), len(stream)>>10)
	if commits < 2000 || merges < 400 || refs < 900 || tags < 200 || unmerged < 50 || files < 2000 {
		b.Fatalf("history: %d commits, %d merges, %d refs, %d tags, %d unmerged branches, %d files: not the shape this benchmark promises",
			commits, merges, refs, tags, unmerged, files)
	}
	return fleetOn(b, r, historyKinds), shape
}

// History's shape: historyFeatures topic branches, each forked from main
// after 0–2 commits straight on main, of 1–3 commits, with 0–1 commits on
// main while it is open; all but one in historyUnmergedEvery are merged
// back with a merge commit; every historyTagEvery-th merge is tagged.
// historyAreas × historySubdirs × historyFilesPerDir files.
const (
	historyFeatures       = 740
	historyUnmergedEvery  = 7
	historyTagEvery       = 3
	historyAreas          = 20
	historySubdirs        = 5
	historyFilesPerDir    = 20
	historyFirstTimestamp = 1577836800 // 2020-01-01T00:00:00Z
)

// historyFiles is how many files the project has; historyPath(i) names
// file i, the files of one directory numbered in a row.
const historyFiles = historyAreas * historySubdirs * historyFilesPerDir

func historyPath(i int) string {
	s := historySubdir(i / historyFilesPerDir % historySubdirs)
	return fmt.Sprintf("%s/%s/%s_%03d.go", historyArea(i/(historySubdirs*historyFilesPerDir)), s, s, i%historyFilesPerDir)
}

// fastImport runs `git fast-import` of stream in r's origin.
func fastImport(b *testing.B, r *fixtures.Repo, stream []byte) {
	b.Helper()
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir, cmd.Env = r.Remote, r.Env()
	cmd.Stdin = bytes.NewReader(stream)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git fast-import (in %s): %v\n%s", r.Remote, err, out)
	}
}

// historyStream is a `git fast-import` stream of a project's history on
// top of the commit base (which it keeps as main's root): one commit adding
// every file, then historyFeatures topic branches (see the constants).
// The content of each file version is derived from its path and revision,
// and every choice from a fixed seed, so the stream is the same every run.
// A merge commit's tree is main's with the branch's version of every file
// the branch changed.
func historyStream(base string) []byte {
	rng := rand.New(rand.NewPCG(25, 950))
	var w bytes.Buffer
	mark, rev, clock := 0, 0, int64(historyFirstTimestamp)
	people := []string{"Ada Lovelace <ada@example.org>", "Grace Hopper <grace@example.org>",
		"Ken Thompson <ken@example.org>", "Barbara Liskov <barbara@example.org>", "Linus Torvalds <linus@example.org>"}
	file := func(i, r int) string {
		var c strings.Builder
		fmt.Fprintf(&c, "package %s\n\n// %s, revision %d.\n", historySubdir(i/historyFilesPerDir%historySubdirs), historyPath(i), r)
		// Files of 100 bytes to 3 KiB, as a project's are.
		for l := range i % 40 {
			fmt.Fprintf(&c, "// Line %d of the notes on %s: what it does and why.\n", l, historyPath(i))
		}
		fmt.Fprintf(&c, "func F%d() int { return %d }\n", i, r)
		return c.String()
	}
	data := func(s string) { fmt.Fprintf(&w, "data %d\n%s\n", len(s), s) }
	// commit writes one commit on ref with parents from (and merge, when
	// not 0) setting each of files to its revision; it returns its mark.
	commit := func(ref string, from any, merge int, msg string, files map[int]int) int {
		mark++
		clock += 600 + int64(rng.IntN(7200))
		who := people[rng.IntN(len(people))]
		fmt.Fprintf(&w, "commit %s\nmark :%d\nauthor %s %d +0000\ncommitter %s %d +0000\n", ref, mark, who, clock, who, clock)
		data(msg)
		switch f := from.(type) {
		case string:
			fmt.Fprintf(&w, "from %s\n", f)
		case int:
			fmt.Fprintf(&w, "from :%d\n", f)
		}
		if merge != 0 {
			fmt.Fprintf(&w, "merge :%d\n", merge)
		}
		for _, i := range sortedKeys(files) {
			fmt.Fprintf(&w, "M 100644 inline %s\n", historyPath(i))
			data(file(i, files[i]))
		}
		return mark
	}
	// change is a commit's changes: one to three files, each to a new
	// revision, recorded in state too (when it is not nil).
	change := func(state map[int]int) map[int]int {
		out := map[int]int{}
		// Work clusters in one directory, as a change does.
		dir := rng.IntN(historyFiles / historyFilesPerDir)
		for range 1 + rng.IntN(3) {
			i := dir*historyFilesPerDir + rng.IntN(historyFilesPerDir)
			rev++
			out[i] = rev
			if state != nil {
				state[i] = rev
			}
		}
		return out
	}
	all := map[int]int{}
	for i := range historyFiles {
		all[i] = 0
	}
	trunk := commit("refs/heads/main", base, 0, "Import the project\n", all)
	merged := 0
	for k := range historyFeatures {
		for range rng.IntN(3) {
			trunk = commit("refs/heads/main", trunk, 0, fmt.Sprintf("Fix a small thing (%d)\n", rev), change(nil))
		}
		name := fmt.Sprintf("%s/%s-%d", []string{"feat", "fix", "docs", "refactor"}[k%4], historyArea(k%historyAreas), k)
		ref := "refs/heads/" + name
		branch := map[int]int{}
		tip := trunk
		for c := range 1 + rng.IntN(3) {
			tip = commit(ref, tip, 0, fmt.Sprintf("%s: step %d\n", name, c+1), change(branch))
		}
		if rng.IntN(2) == 0 {
			trunk = commit("refs/heads/main", trunk, 0, fmt.Sprintf("Fix a small thing (%d)\n", rev), change(nil))
		}
		if k%historyUnmergedEvery == historyUnmergedEvery-1 {
			continue
		}
		trunk = commit("refs/heads/main", trunk, tip, fmt.Sprintf("Merge branch '%s'\n", name), branch)
		merged++
		if merged%historyTagEvery == 0 {
			clock += 60
			fmt.Fprintf(&w, "tag v1.%d.%d\nfrom :%d\ntagger %s %d +0000\n", merged/100, merged%100, trunk, people[0], clock)
			data(fmt.Sprintf("Release 1.%d.%d\n", merged/100, merged%100))
		}
	}
	return w.Bytes()
}

// historyArea and historySubdir name the history's directories.
func historyArea(a int) string {
	return []string{"api", "auth", "cache", "cli", "config", "db", "docs", "events", "http", "jobs",
		"log", "mail", "metrics", "queue", "render", "search", "storage", "sync", "ui", "util"}[a%historyAreas]
}

func historySubdir(s int) string {
	return []string{"core", "internal", "handlers", "model", "testutil"}[s%historySubdirs]
}

// sortedKeys is m's keys in order, so a commit's file lines are too.
func sortedKeys(m map[int]int) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
