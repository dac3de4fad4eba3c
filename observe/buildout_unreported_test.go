//go:build unix

package observe_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/hostio"
)

// unreportedFixed are layouts where what a walk finds untracked and what
// git status reports differ, each with whether BuildOutputUnreported may
// answer (false: it must leave the tree to git).
func unreportedFixed() map[string]struct {
	l      *agreeLayout
	answer bool
	extra  func(t *testing.T, dir string)
} {
	type fixed = struct {
		l      *agreeLayout
		answer bool
		extra  func(t *testing.T, dir string)
	}
	out := map[string]fixed{}
	cargo := func() *agreeLayout {
		l := newAgreeLayout()
		l.committed["Cargo.toml"] = "[package]\n"
		return l
	}
	// The usual case: target/ ignored, beside a tracked Cargo.toml.
	l := cargo()
	l.untracked["target/.rustc_info.json"] = "{}"
	l.untracked["target/debug/deps/a.rlib"] = "rlib"
	l.ignore = []string{"/target/"}
	out["ignored-target"] = fixed{l, true, nil}
	// The same, not ignored, with a name that is not UTF-8 inside and a
	// person's untracked file beside it.
	l = cargo()
	l.untracked["target/.rustc_info.json"] = "{}"
	l.untracked["target/debug/\xff\xfe\n.o"] = "obj"
	l.untracked["notes.md"] = "mine\n"
	out["untracked-target-odd-names"] = fixed{l, true, nil}
	// A directory ignored whole that holds a Cargo target below: status
	// names only the directory, so the target is not its candidate.
	l = cargo()
	l.untracked["scratch/notes.md"] = "mine\n"
	l.untracked["scratch/target/.rustc_info.json"] = "{}"
	l.ignore = []string{"/scratch/"}
	out["target-below-ignored-dir"] = fixed{l, false, nil}
	// The same not ignored: status lists every file, and the target is
	// found; the walk cannot tell the two apart, and asks.
	l = cargo()
	l.untracked["scratch/notes.md"] = "mine\n"
	l.untracked["scratch/target/.rustc_info.json"] = "{}"
	out["target-below-untracked-dir"] = fixed{l, false, nil}
	// An ignored directory holding only empty directories, one a Cargo
	// target by its shape: status reports it whole.
	l = cargo()
	l.empty = []string{"target/debug/.fingerprint", "target/release"}
	l.ignore = []string{"/target/"}
	out["bare-ignored-target"] = fixed{l, false, func(t *testing.T, dir string) {}}
	// The same not ignored: status reports nothing; the shape still
	// sends it to git.
	l = cargo()
	l.empty = []string{"target/debug/.fingerprint"}
	out["bare-untracked-target"] = fixed{l, false, nil}
	// Empty directories that are nobody's build output: no question.
	l = cargo()
	l.empty = []string{"logs", "tmp/cache"}
	l.ignore = []string{"/tmp/"}
	out["bare-other"] = fixed{l, true, nil}
	// A nested repository holding a target.
	l = cargo()
	out["nested-repository"] = fixed{l, false, func(t *testing.T, dir string) {
		sub := filepath.Join(dir, "vendor", "lib")
		if err := os.MkdirAll(filepath.Join(sub, "target"), 0o755); err != nil {
			t.Fatal(err)
		}
		runGit(t, sub, "init", "-q")
		if err := os.WriteFile(filepath.Join(sub, "target", ".rustc_info.json"), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}}
	// A submodule's path (a gitlink in the index) whose directory holds
	// no .git (not initialised, or its .git removed) but a Cargo target:
	// git never looks inside a gitlink's directory, so status reports
	// nothing there, and plan finds no build output in it.
	l = cargo()
	out["gitlink-without-git"] = fixed{l, false, func(t *testing.T, dir string) {
		sub := filepath.Join(dir, "vendor", "lib")
		if err := os.MkdirAll(filepath.Join(sub, "target", "debug"), 0o755); err != nil {
			t.Fatal(err)
		}
		head := runGitOut(t, dir, "rev-parse", "HEAD")
		runGit(t, dir, "update-index", "--add", "--cacheinfo", "160000,"+head+",vendor/lib")
		for name, body := range map[string]string{"target/.rustc_info.json": "{}", "target/debug/app": "\x7fELF", "notes.md": "mine\n"} {
			if err := os.WriteFile(filepath.Join(sub, filepath.FromSlash(name)), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}}
	// A FIFO in a target: nothing git reports, and special to the
	// classifier.
	l = cargo()
	l.untracked["target/.rustc_info.json"] = "{}"
	out["fifo-in-target"] = fixed{l, true, func(t *testing.T, dir string) {
		if err := syscall.Mkfifo(filepath.Join(dir, "target", "pipe"), 0o644); err != nil {
			t.Skipf("no FIFO here: %v", err)
		}
	}}
	// A target that is a symlink to a directory.
	l = cargo()
	l.untracked["elsewhere/.rustc_info.json"] = "{}"
	l.links["target"] = "elsewhere"
	out["symlinked-target"] = fixed{l, true, nil}
	// A disposable file and directory, one ignored by a negated pattern.
	l = cargo()
	l.untracked["coverage/lcov.info"] = "TN:\n"
	l.untracked["debug.log"] = "log\n"
	l.untracked["keep.log"] = "kept\n"
	l.ignore = []string{"*.log", "!keep.log"}
	l.disposable = []string{"/coverage/", "*.log"}
	out["disposable"] = fixed{l, true, nil}
	return out
}

// TestBuildOutputUnreportedAgreesWithStatus: wherever it answers, the
// build output found from the index and a walk (what sweep decides an
// idle tree by, with no git process) is exactly what BuildOutput finds
// over git status's report and the same index (what plan decides by),
// path, kind and bytes; and it leaves to git the trees where the two can
// differ (a find below a directory that holds nothing tracked, a nested
// repository, an untracked directory holding no file whose shape is build
// output). Over the generated layouts of TestStripAgreesWithTreeOnDisk
// and fixed ones.
func TestBuildOutputUnreportedAgreesWithStatus(t *testing.T) {
	t.Parallel()
	type tc struct {
		l      *agreeLayout
		answer *bool
		extra  func(t *testing.T, dir string)
	}
	cases := map[string]tc{}
	for name, f := range unreportedFixed() {
		cases[name] = tc{f.l, &f.answer, f.extra}
	}
	for name, l := range agreeFixed() {
		cases[name] = tc{l: l}
	}
	for seed := range uint64(agreeLayouts(t)) {
		cases[fmt.Sprintf("seed-%d", seed)] = tc{l: agreeGen(seed)}
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			r, pats := agreeTree(t, c.l)
			dir := r.Dir
			if c.extra != nil {
				c.extra(t, dir)
			}
			st, err := observe.ParseStatus([]byte(r.GitIn(dir, "status", "--porcelain=v2", "-z", "--ignored=matching", "--untracked-files=all", "--ignore-submodules=none")))
			if err != nil {
				t.Fatal(err)
			}
			index, _, err := observe.IndexAndHead(ctx, hostio.NewGit(&hostio.Runner{}), hostio.Repo{}, dir, "", r.Head(dir))
			if err != nil {
				t.Fatal(err)
			}
			tracked := machine.NewTrackedSet(index)
			want := observe.BuildOutput(dir, st, tracked, pats)
			var u observe.Untracked
			err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				rel, _ := filepath.Rel(dir, p)
				u.Add(filepath.ToSlash(rel), d.Type(), tracked)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			got, ok := observe.BuildOutputUnreported(observe.DiskBuild(dir), u, tracked, pats)
			if c.answer != nil && ok != *c.answer {
				t.Errorf("answered %v; want %v (status's build output: %+v)", ok, *c.answer, want)
			}
			if ok {
				if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("status's build output (-) and the walk's (+) differ; layout %+v:\n%s", c.l, diff)
				}
			}
		})
	}
}

// runGitOut runs git in dir and returns its output's first line.
func runGitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	g := hostio.NewGit(&hostio.Runner{})
	out, err := g.Observe(context.Background(), dir, args...)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// runGit runs git in dir, failing t on an error.
func runGit(t *testing.T, dir string, args ...string) {
	t.Helper()
	g := hostio.NewGit(&hostio.Runner{})
	if _, err := g.Observe(context.Background(), dir, args...); err != nil {
		t.Fatal(err)
	}
}
