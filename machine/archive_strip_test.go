package machine_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/machine"
)

func stripEntries(paths ...string) []machine.ArchiveTreeEntry {
	var out []machine.ArchiveTreeEntry
	for _, p := range paths {
		out = append(out, machine.ArchiveTreeEntry{Path: p, Mode: "100644", Size: 10})
	}
	return out
}

func headOf(paths ...string) []machine.TrackedEntry {
	var out []machine.TrackedEntry
	for _, p := range paths {
		out = append(out, machine.TrackedEntry{Path: p, Mode: "100644"})
	}
	return out
}

// TestPlanArchiveStrip: a strip takes what the tree's own classification
// (FindBuildOutput) finds over the facts the tree was captured with: only
// a marker the index held counts (an untracked pubspec.yaml does not, a
// staged one does), nothing the index held is taken, a directory status
// reported ignored whole is decided whole, what the directory holds
// includes its empty directories, nested repositories and the build
// output already left out; a name alone, a nested repository, a link
// leading out or an unsigned CACHEDIR.TAG keeps it in the patch.
func TestPlanArchiveStrip(t *testing.T) {
	t.Parallel()
	dir := func(kind machine.BuildKind) func(string, int64) machine.DiscardedDir {
		return func(p string, bytes int64) machine.DiscardedDir {
			return machine.DiscardedDir{Path: p, Kind: kind, Bytes: bytes}
		}
	}
	cargo, flutter, tag := dir(machine.BuildCargoTarget), dir(machine.BuildFlutterOutput), dir(machine.BuildCacheDir)
	link := func(p, target string) machine.ArchiveTreeEntry {
		return machine.ArchiveTreeEntry{Path: p, Mode: "120000", Size: int64(len(target))}
	}
	base := headOf("Cargo.toml", "src/main.rs")
	logs, err := machine.ParsePatterns([]string{"*.log", "/coverage/"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		f          machine.ArchiveStripFacts
		disposable machine.Patterns
		want       []machine.DiscardedDir
	}{
		{name: "signed tag", f: machine.ArchiveStripFacts{Head: base, Entries: stripEntries("Cargo.toml", "src/main.rs", "out/CACHEDIR.TAG", "out/x"), SignedTags: []string{"out/CACHEDIR.TAG"}},
			want: []machine.DiscardedDir{tag("out", 20)}},
		{name: "unsigned tag disqualifies", f: machine.ArchiveStripFacts{Head: base, Entries: stripEntries("t/CACHEDIR.TAG", "t/.rustc_info.json")}},
		{name: "profile, outermost only", f: machine.ArchiveStripFacts{Head: base, Entries: stripEntries("target/debug/.fingerprint/a/b", "target/debug/app", "target/release/.fingerprint/c/d")},
			want: []machine.DiscardedDir{cargo("target", 30)}},
		{name: "an empty .fingerprint makes a profile", f: machine.ArchiveStripFacts{Head: base, Entries: stripEntries("target/debug/app"), EmptyDirs: []string{"target/debug/.fingerprint"}},
			want: []machine.DiscardedDir{cargo("target", 10)}},
		{name: "rustc info", f: machine.ArchiveStripFacts{Head: base, Entries: stripEntries("tgt/.rustc_info.json")}, want: []machine.DiscardedDir{cargo("tgt", 10)}},
		{name: "rustc info as a link is not", f: machine.ArchiveStripFacts{Head: base, Entries: []machine.ArchiveTreeEntry{link("tgt/.rustc_info.json", "x")},
			LinkTargets: map[string]string{"tgt/.rustc_info.json": "x"}}},
		{name: "flutter beside HEAD's pubspec", f: machine.ArchiveStripFacts{Head: headOf("app/pubspec.yaml"), Entries: stripEntries("app/pubspec.yaml", "app/build/o", "app/.dart_tool/p")},
			want: []machine.DiscardedDir{flutter("app/.dart_tool", 10), flutter("app/build", 10)}},
		{name: "an untracked pubspec makes no flutter output", f: machine.ArchiveStripFacts{Entries: stripEntries("app/pubspec.yaml", "app/build/RELEASE-NOTES.md", "app/build/deploy.sh")}},
		{name: "an untracked pubspec at the root makes no flutter output", f: machine.ArchiveStripFacts{Head: base, Entries: stripEntries("pubspec.yaml", "build/o")}},
		{name: "a staged pubspec does", f: machine.ArchiveStripFacts{Entries: stripEntries("app/pubspec.yaml", "app/build/o"),
			Status: machine.ArchiveStatus{IndexAdded: []machine.ArchiveIndexEntry{{Path: "app/pubspec.yaml", Mode: "100644"}}}},
			want: []machine.DiscardedDir{flutter("app/build", 10)}},
		{name: "a pubspec removed from the index does not", f: machine.ArchiveStripFacts{Head: headOf("app/pubspec.yaml"), Entries: stripEntries("app/pubspec.yaml", "app/build/o"),
			Status: machine.ArchiveStatus{IndexRemoved: []string{"app/pubspec.yaml"}}}},
		{name: "a staged file below keeps the directory", f: machine.ArchiveStripFacts{Head: base, Entries: stripEntries("target/.rustc_info.json", "target/NOTES.md"),
			Status: machine.ArchiveStatus{IndexAdded: []machine.ArchiveIndexEntry{{Path: "target/NOTES.md", Mode: "100644"}}}}},
		{name: "build by name alone", f: machine.ArchiveStripFacts{Head: base, Entries: stripEntries("build/o", "x/.dart_tool/p")}},
		{name: "HEAD holds a file below", f: machine.ArchiveStripFacts{Head: headOf("target/keep"), Entries: stripEntries("target/keep", "target/.rustc_info.json")}},
		{name: "HEAD holds the directory's path as a file", f: machine.ArchiveStripFacts{Head: headOf("app/pubspec.yaml", "app/build"), Entries: stripEntries("app/pubspec.yaml", "app/build/o")}},
		{name: "a nested repository below", f: machine.ArchiveStripFacts{Entries: stripEntries("target/.rustc_info.json"), Nested: []string{"target/dep"}}},
		{name: "a gitlink below", f: machine.ArchiveStripFacts{Entries: append(stripEntries("target/.rustc_info.json"), machine.ArchiveTreeEntry{Path: "target/sub", Mode: "160000"})}},
		{name: "a git directory below", f: machine.ArchiveStripFacts{Entries: stripEntries("target/.rustc_info.json", "target/b/HEAD", "target/b/objects/x"), EmptyDirs: []string{"target/b/refs"}}},
		{name: "a link leading out", f: machine.ArchiveStripFacts{Entries: append(stripEntries("target/.rustc_info.json"), link("target/debug/l", "../../src")),
			LinkTargets: map[string]string{"target/debug/l": "../../src"}}},
		{name: "a link staying inside", f: machine.ArchiveStripFacts{Entries: append(stripEntries("target/.rustc_info.json"), link("target/debug/l", "../x")),
			LinkTargets: map[string]string{"target/debug/l": "../x"}}, want: []machine.DiscardedDir{cargo("target", 14)}},
		{name: "an absolute link", f: machine.ArchiveStripFacts{Entries: append(stripEntries("target/.rustc_info.json"), link("target/l", "/etc")),
			LinkTargets: map[string]string{"target/l": "/etc"}}},
		{name: "a link whose target was not read", f: machine.ArchiveStripFacts{Entries: append(stripEntries("target/.rustc_info.json"), link("target/l", "x"))}},
		{name: "a profile deep below, after its directory was seen", f: machine.ArchiveStripFacts{Head: base, Entries: stripEntries("crates/x/target/debug/app", "crates/x/target/debug/.fingerprint/a/b", "crates/x/src/lib.rs")},
			want: []machine.DiscardedDir{cargo("crates/x/target", 20)}},
		{name: "a venv named build is a venv", f: machine.ArchiveStripFacts{Head: headOf("pubspec.yaml"), Entries: append(stripEntries("pubspec.yaml", "build/pyvenv.cfg", "build/lib/x"), link("build/bin/python", "/usr/bin/python3")),
			LinkTargets: map[string]string{"build/bin/python": "/usr/bin/python3"}, PyvenvCfgs: map[string]string{"build/pyvenv.cfg": "home = /usr/bin\n"}},
			want: []machine.DiscardedDir{dir(machine.BuildPythonVenv)("build", 36)}},
		{name: "a venv whose interpreter is elsewhere", f: machine.ArchiveStripFacts{Entries: append(stripEntries("venv/pyvenv.cfg"), link("venv/bin/python", "/usr/bin/python3")),
			LinkTargets: map[string]string{"venv/bin/python": "/usr/bin/python3"}, PyvenvCfgs: map[string]string{"venv/pyvenv.cfg": "home = /opt/py\n"}}},
		{name: "a pubspec.yaml added below a Cargo target", f: machine.ArchiveStripFacts{Head: base, Entries: stripEntries("target/.rustc_info.json", "target/x/pubspec.yaml")},
			want: []machine.DiscardedDir{cargo("target", 20)}},
		{name: "a CACHEDIR.TAG that is a directory disqualifies", f: machine.ArchiveStripFacts{Head: base, Entries: stripEntries("t/CACHEDIR.TAG/x", "t/.rustc_info.json")}},
		{name: "node_modules beside a tracked lockfile", f: machine.ArchiveStripFacts{Head: headOf("package-lock.json"), Entries: stripEntries("package-lock.json", "node_modules/CACHEDIR.TAG", "node_modules/x"),
			SignedTags: []string{"node_modules/CACHEDIR.TAG"}}, want: []machine.DiscardedDir{dir(machine.BuildNodeModules)("node_modules", 20)}},
		{name: "node_modules beside an untracked lockfile", f: machine.ArchiveStripFacts{Head: headOf("package.json"), Entries: stripEntries("package.json", "package-lock.json", "node_modules/x")}},
		{name: "bytecode", f: machine.ArchiveStripFacts{Head: headOf("m.py"), Entries: stripEntries("m.py", "__pycache__/m.cpython-312.pyc")},
			want: []machine.DiscardedDir{dir(machine.BuildPythonBytecode)("__pycache__", 10)}},
		{name: "bytecode beside an empty directory", f: machine.ArchiveStripFacts{Head: headOf("m.py"), Entries: stripEntries("m.py", "__pycache__/m.cpython-312.pyc"), EmptyDirs: []string{"__pycache__/e"}}},
		{name: "bytecode beside build output left out", f: machine.ArchiveStripFacts{Head: headOf("m.py"), Entries: stripEntries("m.py", "__pycache__/m.cpython-312.pyc"), Done: []string{"__pycache__/venv"}}},
		{name: "a Cargo target above build output left out", f: machine.ArchiveStripFacts{Head: base, Entries: stripEntries("target/.rustc_info.json"), Done: []string{"target/venv"}}},
		{name: "below build output left out", f: machine.ArchiveStripFacts{Head: base, Entries: stripEntries("out/x"), Done: []string{"out"}}},
		{name: "inside a directory ignored whole", f: machine.ArchiveStripFacts{Head: base, Entries: stripEntries("out/target/.rustc_info.json", "out/a"),
			Status: machine.ArchiveStatus{IgnoredDirs: []string{"out"}}}},
		{name: "inside a directory not ignored", f: machine.ArchiveStripFacts{Head: base, Entries: stripEntries("out/target/.rustc_info.json", "out/a")},
			want: []machine.DiscardedDir{cargo("out/target", 10)}},
		{name: "disposable patterns", f: machine.ArchiveStripFacts{Head: base, Entries: stripEntries("debug.log", "coverage/index.html", "src/notes.log", "notes.md")}, disposable: logs,
			want: []machine.DiscardedDir{dir(machine.BuildDisposable)("coverage", 10), dir(machine.BuildDisposable)("debug.log", 10), dir(machine.BuildDisposable)("src/notes.log", 10)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, machine.PlanArchiveStrip(tt.f, tt.disposable)); diff != "" {
				t.Errorf("PlanArchiveStrip (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStrippedManifest: the new tree, the new patch's digest and size,
// the stripped directories added to build_output in path order, and the
// empty directories at or below them no longer listed (a restore does not
// make them).
func TestStrippedManifest(t *testing.T) {
	t.Parallel()
	m := machine.ArchiveManifest{WorktreeTree: "old", Files: []machine.ArchiveFile{{Name: "commits.bundle", SHA256: "b", Size: 1}, {Name: machine.ArchivePatchName, SHA256: "p", Size: 9}},
		BuildOutput: []machine.DiscardedDir{{Path: "node_modules", Kind: machine.BuildNodeModules, Bytes: 4}},
		EmptyDirs:   []string{"app/build/tmp", "app/buildx", "app/build", "docs/empty"}}
	got := machine.StrippedManifest(m, []machine.DiscardedDir{{Path: "app/build", Kind: machine.BuildFlutterOutput, Bytes: 3}}, "new", nil, "q", 2)
	want := m
	want.WorktreeTree = "new"
	want.Files = []machine.ArchiveFile{{Name: "commits.bundle", SHA256: "b", Size: 1}, {Name: machine.ArchivePatchName, SHA256: "q", Size: 2}}
	want.BuildOutput = []machine.DiscardedDir{{Path: "app/build", Kind: machine.BuildFlutterOutput, Bytes: 3}, {Path: "node_modules", Kind: machine.BuildNodeModules, Bytes: 4}}
	want.EmptyDirs = []string{"app/buildx", "docs/empty"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("StrippedManifest (-want +got):\n%s", diff)
	}
	if m.Files[1].SHA256 != "p" || m.WorktreeTree != "old" {
		t.Errorf("StrippedManifest changed its argument: %+v", m)
	}
}

// TestDecideArchiveStrip: prune's local checks first, then an archive
// whose manifest does not record its tree's index and status is kept
// whole (archive-status-unknown); one that records them may be stripped.
func TestDecideArchiveStrip(t *testing.T) {
	t.Parallel()
	with := func() machine.ArchiveManifest {
		m := archiveManifest()
		m.Status = &machine.ArchiveStatus{IndexAdded: []machine.ArchiveIndexEntry{}, IndexRemoved: []string{}, IgnoredDirs: []string{}}
		return m
	}
	for _, tt := range []struct {
		name    string
		m       machine.ArchiveManifest
		present bool
		code    machine.Code
	}{
		{"status recorded", with(), false, ""},
		{"status not recorded", archiveManifest(), false, machine.CodeArchiveStatusUnknown},
		{"tree present comes first", archiveManifest(), true, machine.CodeArchiveTreePresent},
		{"status naming a path outside", func() machine.ArchiveManifest { m := with(); m.Status.IgnoredDirs = []string{"../x"}; return m }(), false, machine.CodeArchiveInvalid},
		{"status unsorted", func() machine.ArchiveManifest { m := with(); m.Status.IndexRemoved = []string{"b", "a"}; return m }(), false, machine.CodeArchiveInvalid},
	} {
		obs := machine.ArchivePruneObservation{Dir: archiveObs(t, tt.m, nil), TreePresent: tt.present}
		_, r := machine.DecideArchiveStrip(obs)
		var code machine.Code
		if r != nil {
			code = r.Code
		}
		if code != tt.code {
			t.Errorf("%s: DecideArchiveStrip = %v, want %q", tt.name, r, tt.code)
		}
	}
}

// TestCaptureStatus: the index against HEAD's tree (a staged addition, a
// conflict's stages once, a removal from the index) and the directories
// status reported ignored whole, less those at or below the build output
// left out, sorted; nothing is nil.
func TestCaptureStatus(t *testing.T) {
	t.Parallel()
	head := headOf("README", "app/pubspec.yaml", "src/a")
	index := []machine.TrackedEntry{{Path: "README", Mode: "100644"}, {Path: "src/a", Mode: "100644"},
		{Path: "target/NOTES.md", Mode: "100644"}, {Path: "c", Mode: "100644"}, {Path: "c", Mode: "100755"}, {Path: "sub", Mode: "160000"}}
	got := machine.CaptureStatus(head, index, []string{"out/", "x.log", "node_modules/", "node_modules/a/", "b/"},
		[]machine.DiscardedDir{{Path: "node_modules", Kind: machine.BuildNodeModules}})
	want := machine.ArchiveStatus{
		IndexAdded:   []machine.ArchiveIndexEntry{{Path: "c", Mode: "100644"}, {Path: "sub", Mode: "160000"}, {Path: "target/NOTES.md", Mode: "100644"}},
		IndexRemoved: []string{"app/pubspec.yaml"},
		IgnoredDirs:  []string{"b", "out"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CaptureStatus (-want +got):\n%s", diff)
	}
	wantIndex := []machine.TrackedEntry{{Path: "README", Mode: "100644"}, {Path: "src/a", Mode: "100644"},
		{Path: "c", Mode: "100644"}, {Path: "sub", Mode: "160000"}, {Path: "target/NOTES.md", Mode: "100644"}}
	if diff := cmp.Diff(wantIndex, got.Index(head)); diff != "" {
		t.Errorf("Index: HEAD's entries less the removed, then the added (-want +got):\n%s", diff)
	}
	empty := machine.CaptureStatus(nil, nil, nil, nil)
	if empty.IndexAdded == nil || empty.IndexRemoved == nil || empty.IgnoredDirs == nil {
		t.Errorf("CaptureStatus of nothing has a nil list: %+v", empty)
	}
}
