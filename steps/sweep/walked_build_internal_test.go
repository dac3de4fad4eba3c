//go:build unix

package sweep

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
)

// walkedBuildSeedsEnv sets how many random trees TestWalkedBuildAgreesWithDisk
// builds besides its fixed ones: 20 by default, 300 under CUSTODY_TEST_FULL=1.
const walkedBuildSeedsEnv = "CUSTODY_TEST_WALKED_BUILD_SEEDS"

// TestWalkedBuildAgreesWithDisk: for every untracked directory of a tree,
// the walked facts the check takes from sweep's walk (walkedBuild.Walk)
// are the facts observe.WalkBuild takes from the disk: bytes, the first
// .git entry or git directory (HEAD beside objects/ and refs/), the first
// special file, the escaping links, and where each stops. Fixed layouts
// hold the cases by name; random trees mix them with names that are not
// UTF-8 and names that sort around "/" ("a", "a-b", "a.b", "a0").
func TestWalkedBuildAgreesWithDisk(t *testing.T) {
	t.Parallel()
	tracked := []machine.TrackedEntry{{Path: "Cargo.toml", Mode: "100644"}, {Path: "src/main.rs", Mode: "100644"}, {Path: "src/gen/keep.rs", Mode: "100644"}}
	fixed := map[string][]string{
		"plain target": {"target/.rustc_info.json", "target/debug/deps/a.rlib", "target/debug/deps/b.rlib", "target/debug/build/x/out"},
		"links": {"target/in -> debug/a", "target/debug/a", "target/out -> ../../elsewhere", "target/abs -> /etc/passwd",
			"target/debug/up -> ../a"},
		"a git directory below":    {"target/pkg/HEAD", "target/pkg/objects/", "target/pkg/refs/", "target/pkg/x", "target/z"},
		"HEAD without refs":        {"target/pkg/HEAD", "target/pkg/objects/", "target/pkg/y"},
		"a .git file below":        {"target/a", "target/sub/.git", "target/sub/b"},
		"a FIFO":                   {"target/a", "target/b|", "target/c"},
		"names around the slash":   {"target/a/x", "target/a-b", "target/a.b", "target/a0/y", "target-b/z", "target/a/b/c"},
		"untracked beside tracked": {"src/gen/out.o", "src/gen/deep/o.o", "src/other/x"},
		"names that are not UTF-8": {"target/\xff\xfe/a", "target/caf\xe9", "target/\x01ctl"},
		"empty directories":        {"target/", "target/e/", "target/e/f/", "node_modules/"},
	}
	for name, layout := range fixed {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			agreeOn(t, layout, tracked)
		})
	}
	seeds, err := fixtures.Size(walkedBuildSeedsEnv, 20, 300)
	if err != nil {
		t.Fatal(err)
	}
	for seed := range seeds {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			t.Parallel()
			agreeOn(t, randomLayout(uint64(seed)), tracked)
		})
	}
}

// agreeOn makes layout (paths relative to the tree: "x/" a directory,
// "x -> t" a symlink, "x|" a FIFO, anything else a file) and the tracked
// files in a new tree, walks it as sweep does, and compares the two
// sources' walked facts for every directory and file the walk recorded
// (a disposable pattern may name a file).
func agreeOn(t *testing.T, layout []string, tracked []machine.TrackedEntry) {
	t.Helper()
	dir := t.TempDir()
	for _, e := range tracked {
		writeLayout(t, dir, e.Path)
	}
	for _, e := range layout {
		writeLayout(t, dir, e)
	}
	set := machine.NewTrackedSet(tracked)
	w := checkWalkTracked(t, dir, &set)
	src := &walkedBuild{dir: dir, w: &w, tracked: set}
	compared := 0
	for _, e := range w.ents {
		if !e.id.mode.IsDir() && !e.id.mode.IsRegular() {
			continue // a link or special file is no candidate the walk answers for
		}
		want := observe.BuildShape(dir, e.rel)
		got := want
		observe.WalkBuild(dir, &want)
		src.Walk(&got)
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%q: walked facts (-disk +walk):\n%s", e.rel, d)
		}
		compared++
	}
	if compared == 0 {
		t.Fatalf("no untracked directory in %q: the layout tests nothing", layout)
	}
}

// writeLayout makes one entry of a layout in dir.
func writeLayout(t *testing.T, dir, e string) {
	t.Helper()
	var target string
	if rel, to, ok := cutArrow(e); ok {
		e, target = rel, to
	}
	p := filepath.Join(dir, filepath.FromSlash(e))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	switch {
	case target != "":
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	case e[len(e)-1] == '/':
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	case e[len(e)-1] == '|':
		if err := syscall.Mkfifo(p[:len(p)-1], 0o644); err != nil {
			t.Fatal(err)
		}
	default:
		if err := os.WriteFile(p, []byte("content of "+path.Base(e)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// cutArrow splits "x -> t" into x and t.
func cutArrow(e string) (string, string, bool) {
	for i := 0; i+4 <= len(e); i++ {
		if e[i:i+4] == " -> " {
			return e[:i], e[i+4:], true
		}
	}
	return e, "", false
}

// randomLayout is a random tree of untracked build-like output: up to
// three levels of directories and files drawn from names that sort around
// "/", names that are not UTF-8, git's names (HEAD, objects/, refs/,
// .git), links in and out of the tree, and FIFOs.
func randomLayout(seed uint64) []string {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	names := []string{"a", "a-b", "a.b", "a0", "b", "\xff", "caf\xe9", "HEAD", "objects", "refs", "deps", "x y"}
	tops := []string{"target", "node_modules", "build", "src/gen", "out"}
	var layout []string
	var walk func(prefix string, depth int)
	walk = func(prefix string, depth int) {
		for range 1 + rng.IntN(4) {
			name := prefix + "/" + names[rng.IntN(len(names))]
			switch k := rng.IntN(12); {
			case depth < 3 && k < 4:
				layout = append(layout, name+"/")
				walk(name, depth+1)
			case k == 4:
				layout = append(layout, name+" -> "+[]string{"../a", "../../../out", "/tmp", "a"}[rng.IntN(4)])
			case k == 5 && rng.IntN(4) == 0:
				layout = append(layout, name+"|")
			case k == 6 && rng.IntN(3) == 0:
				layout = append(layout, prefix+"/.git")
			default:
				layout = append(layout, name)
			}
		}
	}
	for i := range 1 + rng.IntN(3) {
		top := tops[rng.IntN(len(tops))]
		if i == 0 {
			top = "target" // one untracked directory at least
		}
		layout = append(layout, top+"/")
		walk(top, 1)
	}
	return dedupeLayout(layout)
}

// dedupeLayout keeps the first entry of each path, so that a name is not
// made both a directory and a file.
func dedupeLayout(layout []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range layout {
		rel, _, _ := cutArrow(e)
		rel = path.Clean(trimKind(rel))
		clash := false
		for d := path.Dir(rel); d != "."; d = path.Dir(d) {
			if seen[d] && !seen[d+"/"] {
				clash = true
			}
		}
		if seen[rel] || clash {
			continue
		}
		seen[rel] = true
		if len(e) > 0 && e[len(e)-1] == '/' {
			seen[rel+"/"] = true
		}
		out = append(out, e)
	}
	return out
}

// trimKind drops a layout entry's kind mark ("/" or "|").
func trimKind(e string) string {
	if n := len(e); n > 0 && (e[n-1] == '/' || e[n-1] == '|') {
		return e[:n-1]
	}
	return e
}
