package observe

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/fixtures/unprivileged"
	"github.com/custody-sh/custody/machine"
)

// TestConfigCleanup: [cleanup] disposable is parsed as written, and a
// malformed pattern is refused naming the line and the key.
func TestConfigCleanup(t *testing.T) {
	t.Parallel()
	c, err := ParseConfig(cfgName, []byte("[cleanup]\ndisposable = [\"/out/\", \"*.log\"]\n"), "repo")
	if err != nil {
		t.Fatal(err)
	}
	want := cfgDefaults("repo")
	want.Disposable = []string{"/out/", "*.log"}
	if d := cmp.Diff(want, c); d != "" {
		t.Errorf("config (-want +got):\n%s", d)
	}
	cfgWantError(t, "[project]\nslug = \"x\"\n[cleanup]\ndisposable = [\"[\"]\n", 4, "cleanup.disposable", "syntax error in pattern")
	cfgWantError(t, "[cleanup]\ndisposable = [\"/\"]\n", 2, "cleanup.disposable", "matches nothing")
	cfgWantError(t, "[cleanup]\nkeep = []\n", 2, "cleanup.keep", "unknown key")
}

// boWrite makes files (content) and symlinks ("->target") under root.
func boWrite(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, s := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		if len(s) > 2 && s[:2] == "->" {
			err = os.Symlink(s[2:], full)
		} else if s == "/" {
			err = os.MkdirAll(full, 0o755)
		} else {
			err = os.WriteFile(full, []byte(s), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestBuildOutputOnDisk: what observe gathers from a real tree, and the
// outermost recognised directory per path status reported.
func TestBuildOutputOnDisk(t *testing.T) {
	t.Parallel()
	tag := machine.CacheDirSignature + "\n"
	tests := []struct {
		name    string
		files   map[string]string
		ignored []string
		tracked []string
		want    []machine.DiscardedDir
	}{
		{"cargo", map[string]string{"target/CACHEDIR.TAG": tag, "target/debug/.fingerprint/x/a": "12", "target/debug/deps/x.rlib": "123"},
			[]string{"target/"}, nil, []machine.DiscardedDir{{Path: "target", Kind: machine.BuildCargoTarget, Bytes: int64(len(tag)) + 5}}},
		{"nested-outermost-wins", map[string]string{"web/node_modules/a/index.js": "1", "web/node_modules/a/node_modules/b/x.js": "22"},
			[]string{"web/node_modules/a/index.js", "web/node_modules/a/node_modules/b/x.js"}, []string{"web/package-lock.json"},
			[]machine.DiscardedDir{{Path: "web/node_modules", Kind: machine.BuildNodeModules, Bytes: 3}}},
		{"git-directory-without-dot-git", map[string]string{"node_modules/dep/HEAD": "ref: refs/heads/main\n", "node_modules/dep/objects/": "/", "node_modules/dep/refs/": "/"},
			[]string{"node_modules/"}, []string{"package-lock.json"}, nil},
		{"dot-git-file", map[string]string{"node_modules/dep/.git": "gitdir: /elsewhere\n"},
			[]string{"node_modules/"}, []string{"package-lock.json"}, nil},
		{"dot-git-symlink", map[string]string{"node_modules/dep/.git": "->/elsewhere"},
			[]string{"node_modules/"}, []string{"package-lock.json"}, nil},
		{"escaping-link", map[string]string{"node_modules/dep": "->../../outside"},
			[]string{"node_modules/"}, []string{"package-lock.json"}, nil},
		{"inner-link", map[string]string{"node_modules/.bin/x": "->../dep/x.js", "node_modules/dep/x.js": "1"},
			[]string{"node_modules/"}, []string{"package-lock.json"},
			[]machine.DiscardedDir{{Path: "node_modules", Kind: machine.BuildNodeModules, Bytes: int64(len("../dep/x.js")) + 1}}},
		{"tracked-inside", map[string]string{"node_modules/patched/x.js": "1"},
			[]string{"node_modules/patched/x.js"}, []string{"package-lock.json", "node_modules/keep.js"}, nil},
		{"pycache-by-file", map[string]string{"pkg/__pycache__/m.pyc": "b"},
			[]string{"pkg/__pycache__/m.pyc"}, []string{"pkg/m.py"},
			[]machine.DiscardedDir{{Path: "pkg/__pycache__", Kind: machine.BuildPythonBytecode, Bytes: 1}}},
		{"wrong-tag", map[string]string{".cache/CACHEDIR.TAG": "Signature: nope\n", ".cache/x": "1"},
			[]string{".cache/"}, nil, nil},
		{"env-is-not-build-output", map[string]string{".env": "SECRET=1\n"}, []string{".env"}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			boWrite(t, dir, tt.files)
			got := BuildOutput(dir, machine.Status{Ignored: tt.ignored}, machine.TrackedPaths(tt.tracked), machine.Patterns{})
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("BuildOutput (-want +got):\n%s", d)
			}
		})
	}
}

// TestBuildOutputUnreadable: a directory below a candidate that cannot be
// read makes it not build output (what it holds is unknown).
func TestBuildOutputUnreadable(t *testing.T) {
	t.Parallel()
	if unprivileged.Run(t) {
		return // root is not refused by permission bits: run as nobody
	}
	dir := t.TempDir()
	boWrite(t, dir, map[string]string{"node_modules/dep/x.js": "1"})
	locked := filepath.Join(dir, "node_modules", "dep")
	if err := os.Chmod(locked, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(locked, 0o755) })
	if got := BuildOutput(dir, machine.Status{Ignored: []string{"node_modules/"}}, machine.TrackedPaths([]string{"package-lock.json"}), machine.Patterns{}); got != nil {
		t.Errorf("an unreadable directory was discarded: %+v", got)
	}
}

// BenchmarkBuildOutput measures recognising an ignored node_modules/ of
// 2,000 files in 400 directories (the walk that proves it holds no
// repository, every file lstat'ed, none read).
func BenchmarkBuildOutput(b *testing.B) {
	dir := b.TempDir()
	for i := range 400 {
		for j := range 5 {
			p := filepath.Join(dir, "node_modules", "pkg"+strconv.Itoa(i), "f"+strconv.Itoa(j)+".js")
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("module.exports = 1\n"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	st := machine.Status{Ignored: []string{"node_modules/"}}
	tracked := machine.TrackedPaths([]string{"package-lock.json"})
	b.ResetTimer()
	for b.Loop() {
		if got := BuildOutput(dir, st, tracked, machine.Patterns{}); len(got) != 1 {
			b.Fatalf("BuildOutput = %+v", got)
		}
	}
}
