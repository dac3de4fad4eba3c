package quarantine

// Regenerable build output, end to end against real git: a clean,
// published tree whose only extra content is build output recognised by
// structure is removed by plan and apply, the plan item listing each
// discarded directory with its size; the same tree with anything that is
// not build output (an untracked source file in a node_modules/ no
// lockfile explains, a git dependency, an ignored .env, a CACHEDIR.TAG
// without the signature, a .py in __pycache__/, a disposable pattern of an
// unapproved custody.toml) is kept. Helpers are prefixed bo.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/google/go-cmp/cmp"
)

// boFiles are files to write, by path relative to the tree.
type boFiles map[string]string

// boLink is a symlink to make in the tree.
type boLink struct{ path, target string }

// boCase is one tree: what it commits (and pushes), what build output or
// hazard it then holds, and what plan must decide.
type boCase struct {
	name string
	// tracked files are committed in the tree and pushed.
	tracked boFiles
	// extra files are written after the push (not committed).
	extra boFiles
	links []boLink
	// setup runs after the files are written, with the tree's path.
	setup func(t *testing.T, r *fixtures.Repo, path string)
	// toml is written as custody.toml in the main checkout; trusted
	// approves it.
	toml    string
	trusted bool
	// discarded is what a removable tree's plan item must list (bytes
	// checked against the files written below each directory).
	discarded []machine.DiscardedDir
	// keep lists the refusal codes of a kept tree.
	keep []string
	// mentions must appear in the first refusal's message.
	mentions string
}

const boCargoTag = "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by cargo.\n"

func boCargo() (boFiles, boFiles) {
	return boFiles{"Cargo.toml": "[package]\nname = \"x\"\n", ".gitignore": "/target\n"},
		boFiles{
			"target/CACHEDIR.TAG":                            boCargoTag,
			"target/debug/.fingerprint/x-1/lib-x":            "0123456789abcdef",
			"target/debug/.fingerprint/x-1/lib-x.json":       "{}",
			"target/debug/deps/libx-1.rlib":                  "rlib bytes",
			"target/debug/incremental/x-2/s-3/dep-graph.bin": "graph",
		}
}

func boNode() (boFiles, boFiles) {
	return boFiles{"package.json": "{\"name\":\"x\"}\n", "package-lock.json": "{\"lockfileVersion\":3}\n", ".gitignore": "node_modules/\n"},
		boFiles{
			"node_modules/.package-lock.json":        "{}",
			"node_modules/left-pad/package.json":     "{\"name\":\"left-pad\"}",
			"node_modules/left-pad/index.js":         "module.exports = pad\n",
			"node_modules/left-pad/src/untracked.js": "// a source file inside node_modules\n",
		}
}

func boCases() []boCase {
	cargoT, cargoX := boCargo()
	nodeT, nodeX := boNode()
	with := func(m boFiles, kv ...string) boFiles {
		out := boFiles{}
		for k, v := range m {
			out[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	without := func(m boFiles, k string) boFiles {
		out := with(m)
		delete(out, k)
		return out
	}
	return []boCase{
		{name: "cargo", tracked: cargoT, extra: cargoX,
			discarded: []machine.DiscardedDir{{Path: "target", Kind: machine.BuildCargoTarget}}},
		{name: "node", tracked: nodeT, extra: nodeX,
			links:     []boLink{{"node_modules/.bin/left-pad", "../left-pad/index.js"}},
			discarded: []machine.DiscardedDir{{Path: "node_modules", Kind: machine.BuildNodeModules}}},
		{name: "node-workspace", tracked: with(nodeT, "packages/ui/index.js", "export {}\n"), extra: nodeX,
			links:     []boLink{{"node_modules/ui", "../packages/ui"}},
			discarded: []machine.DiscardedDir{{Path: "node_modules", Kind: machine.BuildNodeModules}}},
		{name: "node-workspace-nested", tracked: with(nodeT, "packages/ui/package.json", "{}\n"),
			extra:     with(nodeX, "packages/ui/node_modules/dep/index.js", "dep\n"),
			links:     []boLink{{"packages/ui/node_modules/left-pad", "../../../node_modules/left-pad"}},
			discarded: []machine.DiscardedDir{{Path: "node_modules", Kind: machine.BuildNodeModules}, {Path: "packages/ui/node_modules", Kind: machine.BuildNodeModules}}},
		{name: "node-not-ignored", tracked: without(nodeT, ".gitignore"), extra: nodeX,
			discarded: []machine.DiscardedDir{{Path: "node_modules", Kind: machine.BuildNodeModules}}},
		{name: "venv", tracked: boFiles{"requirements.txt": "requests\n", ".gitignore": ".venv/\n"},
			extra: boFiles{
				".venv/pyvenv.cfg": "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.12.3\n",
				".venv/lib/python3.12/site-packages/requests/__init__.py": "# vendored\n",
				".venv/bin/activate": "# activate\n",
			},
			links:     []boLink{{".venv/bin/python", "/usr/bin/python3"}, {".venv/bin/python3", "python"}, {".venv/lib64", "lib"}},
			discarded: []machine.DiscardedDir{{Path: ".venv", Kind: machine.BuildPythonVenv}}},
		{name: "pycache", tracked: boFiles{"pkg/mod.py": "x = 1\n", ".gitignore": "__pycache__/\n"},
			extra:     boFiles{"pkg/__pycache__/mod.cpython-312.pyc": "bytecode", "pkg/__pycache__/mod.cpython-312.opt-1.pyo": "opt"},
			discarded: []machine.DiscardedDir{{Path: "pkg/__pycache__", Kind: machine.BuildPythonBytecode}}},
		{name: "pycache-by-suffix", tracked: boFiles{"pkg/mod.py": "x = 1\n", ".gitignore": "*.pyc\n"},
			extra:     boFiles{"pkg/__pycache__/mod.cpython-312.pyc": "bytecode"},
			discarded: []machine.DiscardedDir{{Path: "pkg/__pycache__", Kind: machine.BuildPythonBytecode}}},
		{name: "flutter", tracked: boFiles{"app/pubspec.yaml": "name: app\n", ".gitignore": "build/\n.dart_tool/\n"},
			extra: boFiles{"app/build/app.dill": "dill", "app/.dart_tool/package_config.json": "{}"},
			discarded: []machine.DiscardedDir{{Path: "app/.dart_tool", Kind: machine.BuildFlutterOutput},
				{Path: "app/build", Kind: machine.BuildFlutterOutput}}},
		{name: "cachedir-tag", tracked: boFiles{".gitignore": "/.cache/\n"},
			extra:     boFiles{".cache/CACHEDIR.TAG": boCargoTag, ".cache/blob": "cached"},
			discarded: []machine.DiscardedDir{{Path: ".cache", Kind: machine.BuildCacheDir}}},
		{name: "disposable-approved", tracked: boFiles{".gitignore": "/out/\n"},
			extra: boFiles{"out/report.html": "<html>"}, toml: "[cleanup]\ndisposable = [\"/out/\"]\n", trusted: true,
			discarded: []machine.DiscardedDir{{Path: "out", Kind: machine.BuildDisposable}}},

		{name: "node-no-lockfile", tracked: without(nodeT, "package-lock.json"), extra: nodeX,
			keep: []string{"ignored-files"}, mentions: "node_modules/"},
		{name: "node-git-dependency", tracked: nodeT, extra: with(nodeX, "node_modules/some-dep/index.js", "dep\n"),
			setup: func(t *testing.T, r *fixtures.Repo, path string) {
				r.GitIn(filepath.Join(path, "node_modules", "some-dep"), "init", "-q")
			},
			keep: []string{"ignored-files", "nested-git"}, mentions: "node_modules/"},
		{name: "node-link-out", tracked: nodeT, extra: nodeX, links: []boLink{{"node_modules/shared", "/usr/share"}},
			keep: []string{"ignored-files"}, mentions: "node_modules/"},
		{name: "env-beside-target", tracked: with(cargoT, ".gitignore", "/target\n.env\n"), extra: with(cargoX, ".env", "SECRET=1\n"),
			keep: []string{"ignored-files"}, mentions: "1 ignored files that removal would delete: .env"},
		{name: "cachedir-tag-wrong-signature", tracked: boFiles{".gitignore": "/.cache/\n"},
			extra: boFiles{".cache/CACHEDIR.TAG": "Signature: 00000000000000000000000000000000\n", ".cache/blob": "cached"},
			keep:  []string{"ignored-files"}, mentions: ".cache/"},
		{name: "pycache-holding-source", tracked: boFiles{"pkg/mod.py": "x = 1\n", ".gitignore": "__pycache__/\n"},
			extra: boFiles{"pkg/__pycache__/mod.cpython-312.pyc": "bytecode", "pkg/__pycache__/notes.py": "# mine\n"},
			keep:  []string{"ignored-files"}, mentions: "pkg/__pycache__/"},
		{name: "disposable-unapproved", tracked: boFiles{".gitignore": "/out/\n"},
			extra: boFiles{"out/report.html": "<html>"}, toml: "[cleanup]\ndisposable = [\"/out/\"]\n",
			keep: []string{"ignored-files"}, mentions: "out/"},
	}
}

// boTree makes a finished tree holding c's files, its commit published on
// a topic branch.
func boTree(t *testing.T, r *fixtures.Repo, c boCase) (id, path string) {
	t.Helper()
	id, path = clitest.NewTree(t, r, "bo")
	for p, s := range c.tracked {
		r.WriteFile(path, p, s)
	}
	r.CommitAll(path, "project files")
	r.Push(path, "topic/"+id)
	for p, s := range c.extra {
		r.WriteFile(path, p, s)
	}
	for _, l := range c.links {
		full := filepath.Join(path, l.path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(l.target, full); err != nil {
			t.Fatal(err)
		}
	}
	if c.setup != nil {
		c.setup(t, r, path)
	}
	if c.toml != "" {
		if c.trusted {
			clitest.WriteTrusted(t, r, c.toml)
		} else {
			r.WriteFile(r.Dir, "custody.toml", c.toml)
		}
	}
	clitest.FinishAll(t, r, id)
	return id, path
}

// boBytes is what a discarded directory's size must be: the bytes of the
// files c wrote below it and the targets of its links.
func boBytes(c boCase, dir string) int64 {
	var n int64
	for p, s := range c.extra {
		if strings.HasPrefix(p, dir+"/") {
			n += int64(len(s))
		}
	}
	for _, l := range c.links {
		if strings.HasPrefix(l.path, dir+"/") {
			n += int64(len(l.target))
		}
	}
	return n
}

// TestBuildOutputPlanApply runs every case through plan and apply.
func TestBuildOutputPlanApply(t *testing.T) {
	t.Parallel()
	for _, c := range boCases() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := clitest.InitRepoWith(t, fixtures.Options{})
			id, path := boTree(t, r, c)
			p, file := clitest.PlanAny(t, r)
			it := clitest.PlanItem(t, p, id)
			if c.keep != nil {
				if it.Action != machine.ActionKeep || it.Refusal == nil {
					t.Fatalf("plan does not keep %s: %+v", c.name, it)
				}
				if got := clitest.RefusalCodes(it.Refusals); !cmp.Equal(got, c.keep) {
					t.Errorf("refusals %v, want %v (%s)", got, c.keep, it.Refusal.Message)
				}
				if !strings.Contains(it.Refusal.Message, c.mentions) {
					t.Errorf("refusal %q does not mention %q", it.Refusal.Message, c.mentions)
				}
				if it.Discarded != nil {
					t.Errorf("kept item lists discarded directories: %+v", it.Discarded)
				}
				before := clitest.SnapKept(r, id, path)
				clitest.ApplyFile(t, r, file, 0)
				clitest.AssertKept(t, r, id, path, before, before.Refs)
				return
			}
			if it.Action != machine.ActionRemove {
				t.Fatalf("plan keeps %s: %+v", c.name, it.Refusals)
			}
			want := make([]machine.DiscardedDir, len(c.discarded))
			for i, d := range c.discarded {
				d.Bytes = boBytes(c, d.Path)
				want[i] = d
			}
			if d := cmp.Diff(want, it.Discarded); d != "" {
				t.Errorf("plan item's discarded directories (-want +got):\n%s", d)
			}
			a := clitest.ApplyFile(t, r, file, 0)
			if o := clitest.ApplyOutcome(t, a, id); o.Outcome != "removed" {
				t.Fatalf("apply: %+v", o)
			}
			clitest.AssertRemovedWithBranch(t, r, id, path)
		})
	}
}

// boCase returns the case named name.
func boCaseNamed(t *testing.T, name string) boCase {
	t.Helper()
	for _, c := range boCases() {
		if c.name == name {
			return c
		}
	}
	t.Fatalf("no case %s", name)
	return boCase{}
}

// TestBuildOutputQuarantineChanged: what appears in a discarded directory
// after the final observation (a git dependency cloned into node_modules/
// just before the move or into the quarantine after it, a source file in
// a __pycache__/) is never deleted: the tree is moved back whole and apply
// refuses with quarantine-changed naming the entry.
func TestBuildOutputQuarantineChanged(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, tree, point string
		write             string // relative to the tree
		entry             string // what the refusal names, relative to the tree
		link              string // when set, write is a symlink to it
	}{
		{"git-before-move", "node", "apply/before-quarantine", "node_modules/late-dep/.git/HEAD", "node_modules", ""},
		{"git-into-quarantine", "node", "apply/after-quarantine", "node_modules/late-dep/.git/HEAD", "node_modules", ""},
		{"source-in-pycache", "pycache", "apply/after-quarantine", "pkg/__pycache__/notes.py", "pkg/__pycache__", ""},
		// Only classifying the directory again finds this one.
		{"link-out-into-quarantine", "node", "apply/after-quarantine", "node_modules/mine", "node_modules", "../../../../elsewhere"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := clitest.InitRepoWith(t, fixtures.Options{})
			id, path := boTree(t, r, boCaseNamed(t, c.tree))
			p, file := clitest.PlanAny(t, r)
			if it := clitest.PlanItem(t, p, id); it.Action != machine.ActionRemove {
				t.Fatalf("plan keeps %s: %+v", id, it.Refusals)
			}
			release, wait := clitest.Paused(t, r, c.point, "apply", file, "--json")
			base := path
			if c.point == "apply/after-quarantine" {
				base = filepath.Join(filepath.Dir(path), ".custody-quarantine-"+id)
			}
			if c.link != "" {
				if err := os.Symlink(c.link, filepath.Join(base, c.write)); err != nil {
					t.Fatal(err)
				}
			} else {
				r.WriteFile(base, c.write, "written after the final observation\n")
			}
			release()
			res := wait()
			if res.Code != 3 {
				t.Fatalf("apply: want exit 3, got\n%s", res)
			}
			o := clitest.ApplyOutcome(t, clitest.ApplyDecoded(t, res), id)
			if o.Refusal == nil || o.Refusal.Code != machine.CodeQuarantineChanged || !strings.HasPrefix(o.Refusal.Path, filepath.Join(path, c.entry)) {
				t.Fatalf("apply %s: %+v, want quarantine-changed naming %s", id, o, filepath.Join(path, c.entry))
			}
			if target, err := os.Readlink(filepath.Join(path, c.write)); c.link != "" && (err != nil || target != c.link) {
				t.Errorf("link %s after apply: %q, %v", c.write, target, err)
			} else if b, err := os.ReadFile(filepath.Join(path, c.write)); c.link == "" && (err != nil || string(b) != "written after the final observation\n") {
				t.Errorf("%s after apply: %q, %v", c.write, b, err)
			}
			for p, s := range boCaseNamed(t, c.tree).extra {
				if b, err := os.ReadFile(filepath.Join(path, p)); err != nil || string(b) != s {
					t.Errorf("build output %s after apply: %q, %v", p, b, err)
				}
			}
			if st := clitest.RecordState(t, r, id); st != "finished" {
				t.Errorf("record %s is %s, want finished (stepped back)", id, st)
			}
		})
	}
}

// TestBuildOutputStale: a discarded directory that stops being build
// output between plan and apply (a git dependency appears in it) makes the
// plan stale for that tree, and nothing of it is deleted.
func TestBuildOutputStale(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepoWith(t, fixtures.Options{})
	id, path := boTree(t, r, boCaseNamed(t, "node"))
	p, file := clitest.PlanAny(t, r)
	if it := clitest.PlanItem(t, p, id); it.Action != machine.ActionRemove {
		t.Fatalf("plan keeps %s: %+v", id, it.Refusals)
	}
	r.GitIn(filepath.Join(path, "node_modules", "left-pad"), "init", "-q")
	a := clitest.Apply(t, r, file, 3)
	if o := clitest.ApplyOutcome(t, a, id); o.Refusal == nil || o.Refusal.Code != machine.CodeStale {
		t.Fatalf("apply: %+v, want stale", o)
	}
	if _, err := os.Lstat(filepath.Join(path, "node_modules", "left-pad", "index.js")); err != nil {
		t.Errorf("node_modules lost a file: %v", err)
	}
}

// TestBuildOutputCrashResume: a removal killed while it deletes a tree
// with build output is finished by resume.
func TestBuildOutputCrashResume(t *testing.T) {
	t.Parallel()
	for _, point := range []string{"apply/after-quarantine", "apply/during-delete"} {
		t.Run(strings.TrimPrefix(point, "apply/"), func(t *testing.T) {
			t.Parallel()
			r := clitest.InitRepoWith(t, fixtures.Options{})
			id, path := boTree(t, r, boCaseNamed(t, "venv"))
			_, file := clitest.PlanAny(t, r)
			clitest.MustBeKilled(t, r, point, "apply", file)
			clitest.MustCustody(t, r, 0, "resume")
			clitest.AssertRemovedWithBranch(t, r, id, path)
			if _, err := os.Lstat(filepath.Join(filepath.Dir(path), ".custody-quarantine-"+id)); !os.IsNotExist(err) {
				t.Errorf("quarantine left behind: %v", err)
			}
		})
	}
}

// TestBuildOutputResumeFindsChange: what changes in a quarantined
// node_modules/ while the removal lies killed (a git dependency appears,
// or the directory is replaced by a link) is found by the resume that
// settles it (which does not classify again, since a killed deletion may
// have taken what made the directory recognisable): the tree is moved back
// with it.
func TestBuildOutputResumeFindsChange(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		change func(t *testing.T, r *fixtures.Repo, q string) (check func(path string) error)
	}{
		{"git-dependency", func(t *testing.T, r *fixtures.Repo, q string) func(string) error {
			r.WriteFile(q, "node_modules/late-dep/.git/HEAD", "ref: refs/heads/main\n")
			return func(path string) error {
				b, err := os.ReadFile(filepath.Join(path, "node_modules/late-dep/.git/HEAD"))
				if err == nil && string(b) != "ref: refs/heads/main\n" {
					err = fmt.Errorf("holds %q", b)
				}
				return err
			}
		}},
		{"replaced-by-link", func(t *testing.T, r *fixtures.Repo, q string) func(string) error {
			elsewhere := t.TempDir()
			r.WriteFile(elsewhere, "keep.txt", "not the tree's\n")
			if err := os.RemoveAll(filepath.Join(q, "node_modules")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(elsewhere, filepath.Join(q, "node_modules")); err != nil {
				t.Fatal(err)
			}
			return func(path string) error {
				if target, err := os.Readlink(filepath.Join(path, "node_modules")); err != nil || target != elsewhere {
					return fmt.Errorf("link %q, %v", target, err)
				}
				_, err := os.Stat(filepath.Join(elsewhere, "keep.txt"))
				return err
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := clitest.InitRepoWith(t, fixtures.Options{})
			id, path := boTree(t, r, boCaseNamed(t, "node"))
			_, file := clitest.PlanAny(t, r)
			clitest.MustBeKilled(t, r, "apply/after-quarantine", "apply", file)
			check := c.change(t, r, filepath.Join(filepath.Dir(path), ".custody-quarantine-"+id))
			res := clitest.Custody(t, r, "resume", "--json")
			if res.Code != 3 || !strings.Contains(res.Stdout, string(machine.CodeQuarantineChanged)) {
				t.Fatalf("resume: want exit 3 with quarantine-changed, got\n%s", res)
			}
			if err := check(path); err != nil {
				t.Errorf("after resume: %v", err)
			}
			if st := clitest.RecordState(t, r, id); st == "tombstoned" {
				t.Errorf("record %s tombstoned although its tree was moved back", id)
			}
		})
	}
}

// boTool runs a real build tool in dir with the machine's environment
// (a tool finds its toolchain through it), skipping the test when the
// tool is not installed.
func boTool(t *testing.T, dir string, env []string, name string, args ...string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("%s is not installed", name)
	}
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("%s %v cannot run here (%v):\n%s", name, args, err, out)
	}
}

// TestBuildOutputRealTools: build output as the real tools make it (cargo
// build, npm install of a local package, python -m venv and compileall),
// in a clean and published tree, is recognised and removed with it.
func TestBuildOutputRealTools(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		build func(t *testing.T, path string)
		want  []machine.DiscardedDir
	}{
		{"cargo", func(t *testing.T, path string) {
			boTool(t, path, nil, "cargo", "init", "-q", "--vcs", "none", "--name", "bo")
			boTool(t, path, nil, "cargo", "build", "-q", "--offline")
			if err := os.WriteFile(filepath.Join(path, ".gitignore"), []byte("/target\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, []machine.DiscardedDir{{Path: "target", Kind: machine.BuildCargoTarget}}},
		{"npm", func(t *testing.T, path string) {
			dep := t.TempDir()
			if err := os.WriteFile(filepath.Join(dep, "package.json"), []byte(`{"name":"pad","version":"1.0.0","main":"index.js"}`), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dep, "index.js"), []byte("module.exports = 1\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			env := []string{"npm_config_cache=" + t.TempDir(), "npm_config_update_notifier=false"}
			boTool(t, dep, env, "npm", "pack", "-q", "--offline")
			if err := os.WriteFile(filepath.Join(path, "package.json"), []byte(`{"name":"web","version":"1.0.0"}`), 0o644); err != nil {
				t.Fatal(err)
			}
			boTool(t, path, env, "npm", "install", "-q", "--offline", "--no-audit", "--no-fund", filepath.Join(dep, "pad-1.0.0.tgz"))
			if err := os.WriteFile(filepath.Join(path, ".gitignore"), []byte("node_modules/\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, []machine.DiscardedDir{{Path: "node_modules", Kind: machine.BuildNodeModules}}},
		{"python", func(t *testing.T, path string) {
			if err := os.MkdirAll(filepath.Join(path, "pkg"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(path, "pkg", "mod.py"), []byte("x = 1\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			boTool(t, path, nil, "python3", "-m", "venv", "--without-pip", ".venv")
			boTool(t, path, nil, filepath.Join(path, ".venv", "bin", "python"), "-m", "compileall", "-q", "pkg")
			if err := os.WriteFile(filepath.Join(path, ".gitignore"), []byte(".venv/\n__pycache__/\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, []machine.DiscardedDir{{Path: ".venv", Kind: machine.BuildPythonVenv}, {Path: "pkg/__pycache__", Kind: machine.BuildPythonBytecode}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := clitest.InitRepoWith(t, fixtures.Options{})
			id, path := clitest.NewTree(t, r, "tool")
			c.build(t, path)
			// What the project tracks (manifests, lockfiles, sources) is
			// committed and published; the output stays.
			r.CommitAll(path, "project")
			r.Push(path, "topic/"+id)
			clitest.FinishAll(t, r, id)
			p, file := clitest.PlanAny(t, r)
			it := clitest.PlanItem(t, p, id)
			if it.Action != machine.ActionRemove {
				t.Fatalf("plan keeps %s: %+v", c.name, it.Refusals)
			}
			got := make([]machine.DiscardedDir, len(it.Discarded))
			for i, d := range it.Discarded {
				if d.Bytes <= 0 {
					t.Errorf("discarded %s has %d bytes", d.Path, d.Bytes)
				}
				d.Bytes = 0
				got[i] = d
			}
			if d := cmp.Diff(c.want, got); d != "" {
				t.Errorf("discarded (-want +got):\n%s", d)
			}
			a := clitest.ApplyFile(t, r, file, 0)
			if o := clitest.ApplyOutcome(t, a, id); o.Outcome != "removed" {
				t.Fatalf("apply: %+v", o)
			}
			clitest.AssertRemovedWithBranch(t, r, id, path)
		})
	}
}
