package observe_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/hostio"
)

// agreeLayout is one tree to classify: what HEAD holds, what is staged,
// what was committed and then removed from the index (git rm --cached),
// what is only on disk (files, links, empty directories), the .gitignore
// lines HEAD holds and the approved disposable patterns.
type agreeLayout struct {
	committed, staged, untracked map[string]string
	removed                      []string
	links                        map[string]string
	empty                        []string
	ignore                       []string
	disposable                   []string
}

func newAgreeLayout() *agreeLayout {
	return &agreeLayout{committed: map[string]string{}, staged: map[string]string{}, untracked: map[string]string{}, links: map[string]string{}}
}

// agreeMarkers are the project files a layout may hold, tracked,
// untracked, staged, removed from the index or absent: those the
// classifier reads (pubspec.yaml, package.json and the lockfiles) and
// those of other ecosystems, which must change nothing.
var agreeMarkers = []string{"pubspec.yaml", "package.json", "package-lock.json", "yarn.lock", "pnpm-lock.yaml",
	"Cargo.toml", "go.mod", "pom.xml", "build.gradle", "CMakeLists.txt", "pyproject.toml"}

// agreeBuildDirs are the directory names build output lives in.
var agreeBuildDirs = []string{"build", "target", "node_modules", "dist", ".dart_tool", "__pycache__", ".venv", "out", "coverage", ".gradle", "cmake-build-debug"}

// generated writes below dir what a tool of its kind leaves there.
func (l *agreeLayout) generated(dir string, r *rand.Rand) {
	switch path.Base(dir) {
	case "target":
		l.untracked[dir+"/.rustc_info.json"] = `{"rustc_fingerprint":1}`
		l.untracked[dir+"/debug/.fingerprint/app-1/bin-app"] = "fp"
		l.untracked[dir+"/debug/app"] = "\x7fELF"
		if r.IntN(2) == 0 {
			l.untracked[dir+"/CACHEDIR.TAG"] = machine.CacheDirSignature + "\n# cargo\n"
		}
		if r.IntN(3) == 0 {
			l.empty = append(l.empty, dir+"/debug/incremental")
		}
	case "node_modules":
		l.untracked[dir+"/left-pad/index.js"] = "module.exports = s => s\n"
		l.untracked[dir+"/left-pad/package.json"] = `{"name":"left-pad"}`
		l.untracked[dir+"/.package-lock.json"] = "{}"
	case "__pycache__":
		l.untracked[dir+"/m.cpython-312.pyc"] = "\x00pyc"
	case ".venv":
		l.untracked[dir+"/pyvenv.cfg"] = "home = /usr/bin\n"
		l.untracked[dir+"/lib/site.py"] = "# site\n"
		l.links[dir+"/bin/python"] = "/usr/bin/python3"
	default:
		l.untracked[dir+"/app.dill"] = "compiled"
		l.untracked[dir+"/flutter_assets/AssetManifest.json"] = "{}"
		if r.IntN(3) == 0 {
			l.untracked[dir+"/CACHEDIR.TAG"] = machine.CacheDirSignature + "\n"
		}
	}
}

// agreeGen makes the layout of seed: a project directory (the root or
// nested), each marker in one state, one to three build directories
// holding generated files, a person's files, both, an unsigned
// CACHEDIR.TAG, a staged file or a link leading out, each ignored or not
// (by its own pattern, a name pattern, or a directory above it ignored
// whole), and sometimes disposable patterns.
func agreeGen(seed uint64) *agreeLayout {
	r := rand.New(rand.NewPCG(seed, 0x6275696c646f7574))
	l := newAgreeLayout()
	proj := []string{"", "app/", "packages/web/"}[r.IntN(3)]
	for _, m := range agreeMarkers {
		p := proj + m
		switch n := r.IntN(20); {
		case n < 8: // absent
		case n < 13:
			l.committed[p] = m + "\n"
		case n < 17:
			l.untracked[p] = m + "\n"
		case n < 19:
			l.staged[p] = m + "\n"
		default:
			l.committed[p] = m + "\n"
			l.removed = append(l.removed, p)
		}
	}
	if r.IntN(2) == 0 {
		l.committed[proj+"src/main.txt"] = "source\n"
	}
	for range 1 + r.IntN(3) {
		name := agreeBuildDirs[r.IntN(len(agreeBuildDirs))]
		dir := proj + name
		switch r.IntN(5) {
		case 0:
			dir = name
		case 1:
			dir = proj + "vendor/" + name
		}
		switch r.IntN(7) {
		case 0, 1:
			l.generated(dir, r)
		case 2:
			l.untracked[dir+"/RELEASE-NOTES.md"] = "what changed, by hand\n"
			l.untracked[dir+"/deploy.sh"] = "#!/bin/sh\nrsync -a . host:\n"
		case 3:
			l.generated(dir, r)
			l.untracked[dir+"/RELEASE-NOTES.md"] = "by hand\n"
		case 4:
			l.generated(dir, r)
			l.untracked[dir+"/CACHEDIR.TAG"] = "not a cache\n"
		case 5:
			l.generated(dir, r)
			l.staged[dir+"/NOTES.md"] = "staged by hand\n"
		case 6:
			l.generated(dir, r)
			l.links[dir+"/up"] = "../../README"
		}
		switch r.IntN(5) {
		case 0:
			l.ignore = append(l.ignore, "/"+dir+"/")
		case 1:
			l.ignore = append(l.ignore, name+"/")
		case 2:
			if i := strings.LastIndex(dir, "/"); i > 0 {
				l.ignore = append(l.ignore, "/"+dir[:i]+"/")
			}
		}
	}
	if r.IntN(3) == 0 {
		l.untracked[proj+"debug.log"] = "log\n"
		l.ignore = append(l.ignore, "*.log")
	}
	switch r.IntN(6) {
	case 0:
		l.disposable = []string{"/dist/", "*.log"}
	case 1:
		l.disposable = []string{"coverage/", "build/"}
	}
	return l
}

// agreeFixed are the layouts every run checks: the untracked
// pubspec.yaml beside a person's build/ (the strip took it from the only
// copy), the same with the pubspec.yaml tracked, staged and removed from
// the index, and a staged person's file in a Cargo target.
func agreeFixed() map[string]*agreeLayout {
	out := map[string]*agreeLayout{}
	person := func(l *agreeLayout, dir string) {
		l.untracked[dir+"/RELEASE-NOTES.md"] = "1.2: what changed\n"
		l.untracked[dir+"/deploy.sh"] = "#!/bin/sh\nscp app.apk host:\n"
	}
	l := newAgreeLayout()
	l.untracked["app/pubspec.yaml"] = "name: app\n"
	person(l, "app/build")
	out["untracked-pubspec"] = l
	l = newAgreeLayout()
	l.untracked["app/pubspec.yaml"] = "name: app\n"
	person(l, "app/build")
	l.ignore = []string{"build/"}
	out["untracked-pubspec-ignored-build"] = l
	for _, how := range []string{"tracked", "staged", "removed"} {
		l = newAgreeLayout()
		if how == "staged" {
			l.staged["app/pubspec.yaml"] = "name: app\n"
		} else {
			l.committed["app/pubspec.yaml"] = "name: app\n"
		}
		if how == "removed" {
			l.removed = []string{"app/pubspec.yaml"}
		}
		l.untracked["app/build/app.dill"] = "compiled"
		l.untracked["app/.dart_tool/package_config.json"] = "{}"
		out[how+"-pubspec"] = l
	}
	l = newAgreeLayout()
	l.committed["Cargo.toml"] = "[package]\n"
	l.untracked["target/.rustc_info.json"] = "{}"
	l.staged["target/NOTES.md"] = "staged by hand\n"
	out["staged-in-target"] = l
	return out
}

// agreeLayouts is how many generated layouts a run checks: each is a real
// repository and a real archive tree. CUSTODY_BUILDOUT_LAYOUTS, else 20
// under CUSTODY_TEST_FULL, else 5 (fixtures.Size).
func agreeLayouts(t *testing.T) int {
	t.Helper()
	n, err := fixtures.Size("CUSTODY_BUILDOUT_LAYOUTS", 5, 20)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestStripAgreesWithTreeOnDisk: for generated layouts (and the fixed
// ones), in a real repository, the build output the tree's classification
// finds on disk (observe.BuildOutput over real status and index) is
// exactly what a strip finds in an archive of the same tree holding
// everything (the tree scanned and written as a capture writes it, its
// status recorded as a capture records it, machine.PlanArchiveStrip over
// observe.ObserveArchiveStrip), path, kind and bytes; and a strip of the
// archive a capture makes (that output left out) finds nothing. A
// directory taken as Flutter output has a pubspec.yaml the index holds
// beside it, and one taken as node_modules a lockfile the index holds.
func TestStripAgreesWithTreeOnDisk(t *testing.T) {
	t.Parallel()
	layouts := agreeFixed()
	for seed := range uint64(agreeLayouts(t)) {
		layouts[fmt.Sprintf("seed-%d", seed)] = agreeGen(seed)
	}
	for name, l := range layouts {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			disk, strip, left := agreeCheck(t, l)
			if diff := cmp.Diff(disk, strip); diff != "" {
				t.Errorf("the tree on disk (-) and the archive holding it all (+) disagree; layout %+v:\n%s", l, diff)
			}
			if len(left) != 0 {
				t.Errorf("a strip of the archive a capture makes found %+v; the capture left out %+v", left, disk)
			}
			if strings.Contains(name, "untracked-pubspec") || name == "removed-pubspec" || name == "staged-in-target" {
				if len(disk) != 0 {
					t.Errorf("%s: the tree's build output is %+v, want none", name, disk)
				}
			}
			if name == "tracked-pubspec" || name == "staged-pubspec" {
				if got := len(disk); got != 2 {
					t.Errorf("%s: the tree's build output is %+v, want app/.dart_tool and app/build", name, disk)
				}
			}
		})
	}
}

// agreeTree builds l in a real repository and returns its checkout and
// the layout's disposable patterns.
func agreeTree(t *testing.T, l *agreeLayout) (*fixtures.Repo, machine.Patterns) {
	t.Helper()
	r := fixtures.New(t, fixtures.Options{NoRemote: true})
	dir := r.Dir
	if len(l.ignore) > 0 {
		l.committed[".gitignore"] = strings.Join(l.ignore, "\n") + "\n"
	}
	add := func(files map[string]string) {
		var ps []string
		for p, c := range files {
			r.WriteFile(dir, p, c)
			ps = append(ps, p)
		}
		if len(ps) > 0 {
			sort.Strings(ps)
			r.GitIn(dir, append([]string{"add", "-f", "--"}, ps...)...)
		}
	}
	add(l.committed)
	r.GitIn(dir, "commit", "-q", "--allow-empty", "-m", "layout")
	if len(l.removed) > 0 {
		r.GitIn(dir, append([]string{"rm", "-q", "--cached", "--"}, l.removed...)...)
	}
	add(l.staged)
	for p, c := range l.untracked {
		r.WriteFile(dir, p, c)
	}
	for p, target := range l.links {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, full); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range l.empty {
		if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(p)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	pats, err := machine.ParsePatterns(l.disposable)
	if err != nil {
		t.Fatal(err)
	}

	return r, pats
}

// agreeCheck builds l in a real repository and returns the build output
// of the tree on disk, what a strip finds in an archive holding all of
// the tree, and what a strip finds in the archive a capture makes.
func agreeCheck(t *testing.T, l *agreeLayout) (disk, strip, left []machine.DiscardedDir) {
	t.Helper()
	ctx := context.Background()
	r, pats := agreeTree(t, l)
	dir := r.Dir
	st, err := observe.ParseStatus([]byte(r.GitIn(dir, "status", "--porcelain=v2", "-z", "--ignored=matching", "--untracked-files=all", "--ignore-submodules=none")))
	if err != nil {
		t.Fatal(err)
	}
	g := hostio.NewGit(&hostio.Runner{})
	index, head, err := observe.IndexAndHead(ctx, g, hostio.Repo{}, dir, "", r.Head(dir))
	if err != nil {
		t.Fatal(err)
	}
	disk = observe.BuildOutput(dir, st, machine.NewTrackedSet(index), pats)
	for _, d := range disk {
		agreeMarkerHeld(t, d, index)
	}

	format, err := observe.ObjectFormatOf(ctx, g, dir)
	if err != nil {
		t.Fatal(err)
	}
	gitDir := filepath.Join(t.TempDir(), "git")
	objects, err := observe.InitScratch(ctx, g, gitDir, format, filepath.Join(dir, ".git", "objects"))
	if err != nil {
		t.Fatal(err)
	}
	headTree := r.GitIn(dir, "rev-parse", "HEAD^{tree}")
	archive := func(out []machine.DiscardedDir) []machine.DiscardedDir {
		leave := make([]string, 0, len(out))
		for _, d := range out {
			leave = append(leave, d.Path)
		}
		scan, err := observe.ScanTreeLeaving(dir, format, leave)
		if err != nil {
			t.Fatal(err)
		}
		if err := scan.WriteBlobs(objects, format); err != nil {
			t.Fatal(err)
		}
		tree, err := observe.WriteScratchTree(ctx, g, gitDir, filepath.Join(t.TempDir(), "index"), scan, false)
		if err != nil {
			t.Fatal(err)
		}
		status := machine.CaptureStatus(head, index, st.Ignored, out)
		m := machine.ArchiveManifest{WorktreeTree: tree, HeadTree: headTree, EmptyDirs: scan.EmptyDirs, BuildOutput: out, Status: &status}
		for _, n := range scan.Nested {
			m.Nested = append(m.Nested, machine.ArchiveNested{Path: n})
		}
		facts, err := observe.ObserveArchiveStrip(ctx, g, gitDir, m)
		if err != nil {
			t.Fatal(err)
		}
		return machine.PlanArchiveStrip(facts, pats)
	}
	return disk, archive(nil), archive(disk)
}

// agreeMarkerHeld fails when d is Flutter output without a pubspec.yaml
// the index holds beside it, or node_modules without a lockfile the index
// holds beside or above it.
func agreeMarkerHeld(t *testing.T, d machine.DiscardedDir, index []machine.TrackedEntry) {
	t.Helper()
	held := func(p string) bool {
		return slices.ContainsFunc(index, func(e machine.TrackedEntry) bool { return e.Path == p })
	}
	in := func(dir, name string) string {
		if dir == "." {
			return name
		}
		return dir + "/" + name
	}
	switch d.Kind {
	case machine.BuildFlutterOutput:
		if !held(in(path.Dir(d.Path), "pubspec.yaml")) {
			t.Errorf("%s is taken as Flutter output, but the index holds no pubspec.yaml beside it", d.Path)
		}
	case machine.BuildNodeModules:
		for dir := path.Dir(d.Path); ; dir = path.Dir(dir) {
			if slices.ContainsFunc([]string{"package-lock.json", "yarn.lock", "pnpm-lock.yaml"}, func(l string) bool { return held(in(dir, l)) }) {
				return
			}
			if dir == "." {
				t.Errorf("%s is taken as node_modules, but the index holds no lockfile beside or above it", d.Path)
				return
			}
		}
	}
}
