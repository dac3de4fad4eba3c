package machine_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/machine"
)

func TestClassifyBuildOutput(t *testing.T) {
	t.Parallel()
	const sig = machine.CacheDirSignature
	file := func(n string) machine.BuildChild { return machine.BuildChild{Name: n, Kind: machine.EntryFile} }
	dir := func(n string) machine.BuildChild { return machine.BuildChild{Name: n, Kind: machine.EntryDir} }
	profile := machine.BuildChild{Name: "debug", Kind: machine.EntryDir, Fingerprint: true}
	walked := func(f machine.BuildFacts) machine.BuildFacts { f.Walked = true; return f }
	d := func(p string, children ...machine.BuildChild) machine.BuildFacts {
		return walked(machine.BuildFacts{Path: p, Kind: machine.EntryDir, Children: children})
	}
	with := func(f machine.BuildFacts, change func(*machine.BuildFacts)) machine.BuildFacts { change(&f); return f }
	tracked := machine.TrackedPaths([]string{"Cargo.toml", "web/package-lock.json", "web/src/app.js", "app/pubspec.yaml",
		"web/packages/ui/package.json", "lib/package.json",
		"y/yarn.lock", "p/pnpm-lock.yaml", "b/bun.lockb", "s/npm-shrinkwrap.json", "vendor/keep.txt", "pkg/mod.py"})
	disposable, err := machine.ParsePatterns([]string{"/out/", "*.log"})
	if err != nil {
		t.Fatal(err)
	}
	tag := func(f machine.BuildFacts, head string) machine.BuildFacts {
		f.Children = append(f.Children, file("CACHEDIR.TAG"))
		f.CacheDirTag = head
		return f
	}
	venv := with(d(".venv", file("pyvenv.cfg"), dir("lib"), dir("bin")), func(f *machine.BuildFacts) {
		f.PyvenvCfg = "home = /usr/bin\nversion = 3.12.3\n"
	})
	tests := []struct {
		name  string
		facts machine.BuildFacts
		want  machine.BuildKind
	}{
		// Cargo: a .rustc_info.json, a profile, a signed tag with either.
		{"cargo-rustc-info", d("target", file(".rustc_info.json"), dir("debug")), machine.BuildCargoTarget},
		{"cargo-profile", d("target", profile), machine.BuildCargoTarget},
		{"cargo-tag-and-profile", tag(d("target", profile), sig), machine.BuildCargoTarget},
		{"cargo-any-name", d("build-out/x", profile), machine.BuildCargoTarget},
		{"cargo-profile-without-fingerprint", d("target", dir("debug")), machine.BuildNone},
		{"cargo-rustc-info-a-directory", d("target", dir(".rustc_info.json")), machine.BuildNone},
		{"cargo-wrong-tag-signature", tag(d("target", profile), "Signature: 0000"), machine.BuildNone},
		{"cargo-tag-unreadable", with(tag(d("target", profile), ""), func(f *machine.BuildFacts) { f.CacheDirTagErr = "permission denied" }), machine.BuildNone},
		// Any directory with a valid CACHEDIR.TAG.
		{"cachedir-tag", tag(d(".cache"), sig+"\n# made by a tool\n"), machine.BuildCacheDir},
		{"cachedir-tag-truncated", tag(d(".cache"), sig[:20]), machine.BuildNone},
		{"cachedir-tag-a-directory", d(".cache", dir("CACHEDIR.TAG")), machine.BuildNone},
		// node_modules beside each tracked lockfile, and only there.
		{"node-package-lock", d("web/node_modules", dir("left-pad")), machine.BuildNodeModules},
		{"node-yarn", d("y/node_modules"), machine.BuildNodeModules},
		{"node-pnpm", d("p/node_modules"), machine.BuildNodeModules},
		{"node-bun", d("b/node_modules"), machine.BuildNodeModules},
		{"node-shrinkwrap", d("s/node_modules"), machine.BuildNodeModules},
		{"node-no-lockfile", d("node_modules", dir("left-pad")), machine.BuildNone},
		{"node-lockfile-elsewhere", d("web/src/node_modules"), machine.BuildNone},
		{"node-lockfile-by-name-only", d("vendor/node_modules"), machine.BuildNone},
		{"node-workspace-package", d("web/packages/ui/node_modules", dir("react")), machine.BuildNodeModules},
		{"node-workspace-package-without-lockfile-above", d("lib/node_modules"), machine.BuildNone},
		{"node-below-an-untracked-package", d("web/packages/other/node_modules"), machine.BuildNone},
		{"node-pnpm-link-to-root-store", with(d("web/packages/ui/node_modules"), func(f *machine.BuildFacts) {
			f.Escaping = []machine.BuildLink{{Path: "react", Target: "../../../node_modules/.pnpm/react@18/node_modules/react"}}
		}), machine.BuildNodeModules},
		{"node-link-into-unrecognised-node-modules", with(d("web/node_modules"), func(f *machine.BuildFacts) {
			f.Escaping = []machine.BuildLink{{Path: "x", Target: "../../lib/node_modules/x"}}
		}), machine.BuildNone},
		// Virtualenv: pyvenv.cfg at its root; its interpreter links may
		// point into the home it names, and nowhere else outside it.
		{"venv", venv, machine.BuildPythonVenv},
		{"venv-interpreter-link", with(venv, func(f *machine.BuildFacts) {
			f.Escaping = []machine.BuildLink{{Path: "bin/python", Target: "/usr/bin/python3.12"}}
		}), machine.BuildPythonVenv},
		{"venv-link-outside-home", with(venv, func(f *machine.BuildFacts) {
			f.Escaping = []machine.BuildLink{{Path: "bin/python", Target: "/home/me/src/python"}}
		}), machine.BuildNone},
		{"venv-other-link-out", with(venv, func(f *machine.BuildFacts) {
			f.Escaping = []machine.BuildLink{{Path: "lib/mine", Target: "/usr/bin/x"}}
		}), machine.BuildNone},
		{"venv-no-home", with(venv, func(f *machine.BuildFacts) {
			f.PyvenvCfg = "version = 3\n"
			f.Escaping = []machine.BuildLink{{Path: "bin/python", Target: "/usr/bin/python3"}}
		}), machine.BuildNone},
		{"venv-cfg-a-directory", d(".venv", dir("pyvenv.cfg")), machine.BuildNone},
		// __pycache__ of bytecode only.
		{"pycache", d("pkg/__pycache__", file("mod.cpython-312.pyc"), file("mod.opt-1.pyo")), machine.BuildPythonBytecode},
		{"pycache-holding-py", d("pkg/__pycache__", file("mod.cpython-312.pyc"), file("mod.py")), machine.BuildNone},
		{"pycache-holding-dir", d("pkg/__pycache__", file("mod.pyc"), dir("x.pyc")), machine.BuildNone},
		{"pycache-empty", d("pkg/__pycache__"), machine.BuildNone},
		{"bytecode-by-name-only", d("pkg/cache", file("mod.pyc")), machine.BuildNone},
		// Flutter output beside a tracked pubspec.yaml.
		{"flutter-build", d("app/build", file("app.dill")), machine.BuildFlutterOutput},
		{"flutter-dart-tool", d("app/.dart_tool"), machine.BuildFlutterOutput},
		{"flutter-no-pubspec", d("build", file("app.dill")), machine.BuildNone},
		// Declared disposable in an approved custody.toml.
		{"disposable-dir", d("out", file("report.html")), machine.BuildDisposable},
		{"disposable-file", walked(machine.BuildFacts{Path: "logs/run.log", Kind: machine.EntryFile}), machine.BuildDisposable},
		{"disposable-dir-pattern-on-file", walked(machine.BuildFacts{Path: "out", Kind: machine.EntryFile}), machine.BuildNone},
		{"disposable-special", walked(machine.BuildFacts{Path: "x.log", Kind: machine.EntryOther}), machine.BuildNone},
		// Never build output, whatever its shape.
		{"unrecognised", d("dist", file("bundle.js")), machine.BuildNone},
		{"tracked-below", d("vendor", profile), machine.BuildNone},
		{"tracked-at", d("Cargo.toml", profile), machine.BuildNone},
		{"tree-root", d(".", profile), machine.BuildNone},
		{"holds-git", with(d("target", profile), func(f *machine.BuildFacts) { f.GitEntry = "target/debug/dep/.git" }), machine.BuildNone},
		{"disposable-holds-git", with(d("out"), func(f *machine.BuildFacts) { f.GitEntry = "out/x/.git" }), machine.BuildNone},
		{"holds-special", with(d("target", profile), func(f *machine.BuildFacts) { f.Special = "target/fifo" }), machine.BuildNone},
		{"unreadable", with(d("target", profile), func(f *machine.BuildFacts) { f.Unreadable = "target/x: permission denied" }), machine.BuildNone},
		{"link-escapes", with(d("web/node_modules"), func(f *machine.BuildFacts) {
			f.Escaping = []machine.BuildLink{{Path: "mine", Target: "../../../elsewhere"}}
		}), machine.BuildNone},
		{"node-workspace-link", with(d("web/node_modules"), func(f *machine.BuildFacts) {
			f.Escaping = []machine.BuildLink{{Path: "@app/ui", Target: "../../src"}}
		}), machine.BuildNodeModules},
		{"node-link-to-untracked-dir", with(d("web/node_modules"), func(f *machine.BuildFacts) {
			f.Escaping = []machine.BuildLink{{Path: "@app/ui", Target: "../../lib"}}
		}), machine.BuildNone},
		{"node-link-to-tracked-file", with(d("web/node_modules"), func(f *machine.BuildFacts) {
			f.Escaping = []machine.BuildLink{{Path: "x", Target: "../package-lock.json"}}
		}), machine.BuildNone},
		{"node-link-out-of-tree", with(d("web/node_modules"), func(f *machine.BuildFacts) {
			f.Escaping = []machine.BuildLink{{Path: "x", Target: "../../../elsewhere/web/src"}}
		}), machine.BuildNone},
		{"node-absolute-link-into-tree", with(d("web/node_modules"), func(f *machine.BuildFacts) {
			f.Escaping = []machine.BuildLink{{Path: "x", Target: "/abs/tree/web/src"}}
		}), machine.BuildNone},
		{"venv-workspace-link-is-not-allowed", with(venv, func(f *machine.BuildFacts) {
			f.Escaping = []machine.BuildLink{{Path: "lib/src", Target: "../../web/src"}}
		}), machine.BuildNone},
		{"not-walked", with(d("target", profile), func(f *machine.BuildFacts) { f.Walked = false }), machine.BuildNone},
		{"a-file", walked(machine.BuildFacts{Path: "target", Kind: machine.EntryFile}), machine.BuildNone},
		{"a-symlink", walked(machine.BuildFacts{Path: "target", Kind: machine.EntrySymlink, Children: []machine.BuildChild{profile}}), machine.BuildNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := machine.ClassifyBuildOutput(tt.facts, tracked, disposable); got != tt.want {
				t.Errorf("ClassifyBuildOutput = %q, want %q", got, tt.want)
			}
			if tt.want != machine.BuildNone {
				if got := machine.StructureKind(tt.facts, tracked, disposable); got != tt.want {
					t.Errorf("StructureKind = %q, want %q", got, tt.want)
				}
			}
		})
	}
}

func TestLinkEscapes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		link, target string
		want         bool
	}{
		{"bin/python3", "python", false},
		{"lib64", "lib", false},
		{".bin/pad", "../left-pad/index.js", false},
		{"a/b/c", "../../x", false},
		{"a/b/c", "../../../x", true},
		{"l", "..", true},
		{"l", ".", false},
		{"l", "x/../..", true},
		{"l", "x/./y", false},
		{"bin/python", "/usr/bin/python3", true},
		{"l", "", true},
	}
	for _, tt := range tests {
		if got := machine.LinkEscapes(tt.link, tt.target); got != tt.want {
			t.Errorf("LinkEscapes(%q, %q) = %v, want %v", tt.link, tt.target, got, tt.want)
		}
	}
}

func TestWithoutBuildOutput(t *testing.T) {
	t.Parallel()
	o := machine.WorktreeObservation{
		Status: machine.Status{
			Changed:   []string{"src/a.go"},
			Untracked: []string{"node_modules/x/index.js", "node_modules_backup/y.js", "notes.txt"},
			Ignored:   []string{"target/", ".env", "pkg/__pycache__/m.pyc", "targetx/"},
		},
		Content: []machine.Unaccounted{
			{Code: machine.CodeUntrackedContent, Path: "node_modules/empty/"},
			{Code: machine.CodeUntrackedContent, Path: "stray/"},
			{Code: machine.CodeContentUnreadable, Path: "node_modules/locked"},
		},
		Discarded: []machine.DiscardedDir{
			{Path: "node_modules", Kind: machine.BuildNodeModules},
			{Path: "target", Kind: machine.BuildCargoTarget},
			{Path: "pkg/__pycache__", Kind: machine.BuildPythonBytecode},
		},
	}
	st, content := machine.WithoutBuildOutput(o)
	want := machine.Status{
		Changed:   []string{"src/a.go"},
		Untracked: []string{"node_modules_backup/y.js", "notes.txt"},
		Ignored:   []string{".env", "targetx/"},
	}
	if d := cmp.Diff(want, st); d != "" {
		t.Errorf("status (-want +got):\n%s", d)
	}
	wantContent := []machine.Unaccounted{
		{Code: machine.CodeUntrackedContent, Path: "stray/"},
		{Code: machine.CodeContentUnreadable, Path: "node_modules/locked"},
	}
	if d := cmp.Diff(wantContent, content); d != "" {
		t.Errorf("content (-want +got):\n%s", d)
	}
	o.Discarded = nil
	if st, content := machine.WithoutBuildOutput(o); !cmp.Equal(st, o.Status) || !cmp.Equal(content, o.Content) {
		t.Errorf("without discarded directories the observation changed: %+v %+v", st, content)
	}
}

// TestAssessBuildOutput: build output is the only extra content → remove;
// an ignored .env beside it still keeps the tree, naming only the .env.
func TestAssessBuildOutput(t *testing.T) {
	t.Parallel()
	rec, obs := removableRecord(), removableObs()
	obs.Status.Ignored = []string{"target/", "node_modules/"}
	obs.Content = []machine.Unaccounted{{Code: machine.CodeUntrackedContent, Path: "node_modules/empty/"}}
	if v := machine.Assess(rec, obs, machine.DefaultPolicy(), testNow); v.Action != machine.ActionKeep {
		t.Fatalf("unrecognised ignored directories did not keep the tree: %+v", v)
	}
	obs.Discarded = []machine.DiscardedDir{{Path: "node_modules", Kind: machine.BuildNodeModules}, {Path: "target", Kind: machine.BuildCargoTarget}}
	if v := machine.Assess(rec, obs, machine.DefaultPolicy(), testNow); v.Action != machine.ActionRemove {
		t.Fatalf("build output kept the tree: %+v", v.Refusals)
	}
	obs.Status.Ignored = append(obs.Status.Ignored, ".env")
	v := machine.Assess(rec, obs, machine.DefaultPolicy(), testNow)
	if v.Action != machine.ActionKeep || len(v.Refusals) != 1 || v.Refusals[0].Code != machine.CodeIgnoredFiles {
		t.Fatalf("an ignored .env beside build output: %+v", v)
	}
	if want := "has 1 ignored files that removal would delete: .env"; !strings.Contains(v.Refusals[0].Message, want) {
		t.Errorf("refusal %q does not say %q", v.Refusals[0].Message, want)
	}
}

// TestFingerprintCoversBuildOutput: a directory that stops (or starts)
// being build output between plan and apply changes the fingerprint.
func TestFingerprintCoversBuildOutput(t *testing.T) {
	t.Parallel()
	obs := removableObs()
	obs.Status.Ignored = []string{"node_modules/"}
	before := machine.Fingerprint(obs)
	obs.Discarded = []machine.DiscardedDir{{Path: "node_modules", Kind: machine.BuildNodeModules, Bytes: 10}}
	with := machine.Fingerprint(obs)
	if with == before {
		t.Error("discarding node_modules did not change the fingerprint")
	}
	obs.Discarded[0].Kind = machine.BuildDisposable
	if machine.Fingerprint(obs) == with {
		t.Error("another kind of build output did not change the fingerprint")
	}
}

// TestTrackedSetGitlink: a gitlink is tracked at its path (AtOrBelow) but
// is no file, and Gitlink names it; a file, a directory holding tracked
// paths and an untracked path are no gitlink.
func TestTrackedSetGitlink(t *testing.T) {
	tracked := machine.NewTrackedSet([]machine.TrackedEntry{
		{Path: "vendor/lib", Mode: "160000"},
		{Path: "src/main.rs", Mode: "100644"},
	})
	for _, tc := range []struct {
		path                    string
		atOrBelow, file, gitlnk bool
	}{
		{"vendor/lib", true, false, true},
		{"vendor", true, false, false},
		{"src/main.rs", true, true, false},
		{"src", true, false, false},
		{"vendor/lib/target", false, false, false},
	} {
		got := [3]bool{tracked.AtOrBelow(tc.path), tracked.File(tc.path), tracked.Gitlink(tc.path)}
		if diff := cmp.Diff([3]bool{tc.atOrBelow, tc.file, tc.gitlnk}, got); diff != "" {
			t.Errorf("%s: AtOrBelow, File, Gitlink (-want +got):\n%s", tc.path, diff)
		}
	}
}
