//go:build unix

package knownclean

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/hostio"
)

// knownCleanCase is one tree state the fast path (observing without git
// status a tree whose index and files are exactly its HEAD) must observe
// exactly as the status path does.
type knownCleanCase struct {
	name string
	make func(r *fixtures.Repo, wt string)
	// fast says the tree is exactly its HEAD and must be observed without
	// git status; any other case may be either way, as long as the
	// observation is the status path's.
	fast bool
}

// knownCleanCases are every fixture hazard and content case, and states
// that are next to clean: one changed byte (same size and mtime) of a
// file whose id the cache holds, a file changed within the racy window, an
// untracked file in an ignored directory, nested .git directories, a
// deleted file, an intent-to-add entry, attributes, an empty directory, a
// retargeted symlink and an unreadable directory.
func knownCleanCases() []knownCleanCase {
	cases := []knownCleanCase{
		{name: "Clean", fast: true, make: func(*fixtures.Repo, string) {}},
		{name: "CleanWithSymlinkAndScript", fast: true, make: func(r *fixtures.Repo, wt string) {
			r.WriteFile(wt, "bin/run.sh", "#!/bin/sh\n")
			kcChmod(r, filepath.Join(wt, "bin/run.sh"), 0o755)
			kcSymlink(r, "bin/run.sh", filepath.Join(wt, "run"))
			r.CommitAll(wt, "a script and a link")
		}},
		{name: "ChangedByteSameSizeAndMtime", make: func(r *fixtures.Repo, wt string) {
			sameSizeEdit(r, filepath.Join(wt, "src/a.txt"), "alpha\n", "alphb\n")
		}},
		{name: "ChangedWithinRacyWindow", make: func(r *fixtures.Repo, wt string) {
			r.WriteFile(wt, "src/a.txt", "alphb\n")
		}},
		{name: "UntrackedInIgnoredDir", make: func(r *fixtures.Repo, wt string) {
			kcExclude(r, "/build/")
			r.WriteFile(wt, "build/out.txt", "mine\n")
		}},
		{name: "IgnoredFileInTrackedDir", make: func(r *fixtures.Repo, wt string) {
			kcExclude(r, "*.log")
			r.WriteFile(wt, "src/debug.log", "mine\n")
		}},
		{name: "NestedGitDir", make: func(r *fixtures.Repo, wt string) {
			r.GitIn(r.Root, "init", "-q", "-b", "main", filepath.Join(wt, "src", "inner"))
		}},
		{name: "NestedGitInIgnoredDir", make: func(r *fixtures.Repo, wt string) {
			kcExclude(r, "/deps/")
			r.GitIn(r.Root, "init", "-q", "-b", "main", filepath.Join(wt, "deps", "lib"))
		}},
		{name: "DeletedFile", make: func(r *fixtures.Repo, wt string) {
			if err := os.Remove(filepath.Join(wt, "src/b.txt")); err != nil {
				r.TB.Fatal(err)
			}
		}},
		{name: "IntentToAdd", make: func(r *fixtures.Repo, wt string) {
			r.WriteFile(wt, "new.txt", "")
			r.GitIn(wt, "add", "-N", "new.txt")
		}},
		{name: "TrackedAttributes", make: func(r *fixtures.Repo, wt string) {
			r.WriteFile(wt, ".gitattributes", "*.txt text\n")
			r.CommitAll(wt, "attributes")
		}},
		{name: "InfoAttributes", make: func(r *fixtures.Repo, wt string) {
			if err := os.WriteFile(filepath.Join(r.Dir, ".git", "info", "attributes"), []byte("*.txt -text\n"), 0o644); err != nil {
				r.TB.Fatal(err)
			}
		}},
		{name: "EmptyDir", make: func(r *fixtures.Repo, wt string) {
			if err := os.Mkdir(filepath.Join(wt, "src", "empty"), 0o755); err != nil {
				r.TB.Fatal(err)
			}
		}},
		{name: "RetargetedSymlink", make: func(r *fixtures.Repo, wt string) {
			kcSymlink(r, "src/a.txt", filepath.Join(wt, "link"))
			r.CommitAll(wt, "a link")
			if err := os.Remove(filepath.Join(wt, "link")); err != nil {
				r.TB.Fatal(err)
			}
			kcSymlink(r, "src/b.txt", filepath.Join(wt, "link"))
		}},
		{name: "UnreadableDir", make: func(r *fixtures.Repo, wt string) {
			kcChmod(r, filepath.Join(wt, "src"), 0)
		}},
	}
	for _, h := range fixtures.Hazards() {
		cases = append(cases, knownCleanCase{name: "Hazard/" + h.Name, make: h.Make})
	}
	for _, h := range fixtures.MoreHazards() {
		if h.Name != "MarkerRemoved" { // needs a ready marker custody wrote
			cases = append(cases, knownCleanCase{name: "MoreHazard/" + h.Name, make: h.Make})
		}
	}
	for _, c := range fixtures.ContentCases() {
		cases = append(cases, knownCleanCase{name: "Content/" + c.Name, make: c.Make})
	}
	return cases
}

// TestKnownCleanSeesWhatStatusSees: over every case, plan's fast path
// (Scope.HeadTrees set) observes exactly what the status path observes —
// the whole observation and its fingerprint, with the content hash cache
// warm and cold — and runs no git status for the trees that are exactly
// their HEAD.
func TestKnownCleanSeesWhatStatusSees(t *testing.T) {
	t.Parallel()
	for _, c := range knownCleanCases() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := fixtures.New(t, fixtures.Options{})
			r.WriteFile(r.Dir, "src/a.txt", "alpha\n")
			r.WriteFile(r.Dir, "src/b.txt", "beta\n")
			r.WriteFile(r.Dir, "src/deep/c.txt", "gamma\n")
			r.CommitAll(r.Dir, "sources")
			r.Git("push", "-q", "origin", "main")
			wt := filepath.Join(r.Root, "wt")
			r.Git("worktree", "add", "-q", "-b", "custody/wt", wt)
			ctx := context.Background()
			var trace bytes.Buffer
			g := hostio.NewGit(&hostio.Runner{Env: r.Env(), Trace: &trace})
			repo, err := gitfiles.Discover(ctx, g, r.Dir)
			if err != nil {
				t.Fatal(err)
			}
			cache := observe.NewHashCache(repo)
			// Every file is older than the racy-clean margin to this clock:
			// the cache keeps every id, and a warm walk reads nothing.
			cache.Now = func() time.Time { return time.Now().Add(time.Hour) }
			rec := machine.Record{ID: "wt", Kind: machine.KindWorktree, State: machine.StateFinished, Path: wt, Branch: "custody/wt", AdminKey: "wt"}
			scope := observe.Scope{Status: true, Hidden: true, Hashes: cache}
			inv, err := gitfiles.TakeInventory(ctx, g, repo)
			if err != nil {
				t.Fatal(err)
			}
			observe.Worktree(ctx, g, repo, inv, rec, scope) // the cache, warm
			c.make(r, wt)
			t.Cleanup(func() { _ = os.Chmod(filepath.Join(wt, "src"), 0o755) })
			if inv, err = gitfiles.TakeInventory(ctx, g, repo); err != nil {
				t.Fatal(err)
			}
			var heads []string
			for _, e := range inv.Entries {
				heads = append(heads, e.Head)
			}
			trees, err := gitfiles.CommitTrees(ctx, g, repo, heads)
			if err != nil {
				t.Fatal(err)
			}
			fast := scope
			fast.HeadTrees = trees
			for _, warm := range []bool{true, false} {
				if !warm {
					if err := os.RemoveAll(cache.Dir); err != nil {
						t.Fatal(err)
					}
				}
				trace.Reset()
				got := observe.Worktree(ctx, g, repo, inv, rec, fast)
				ranStatus := strings.Contains(trace.String(), " status ")
				want := observe.Worktree(ctx, g, repo, inv, rec, scope)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("warm cache %v: fast path observation (-status path +fast path):\n%s", warm, diff)
				}
				if machine.Fingerprint(got) != machine.Fingerprint(want) {
					t.Errorf("warm cache %v: fingerprints differ", warm)
				}
				if c.fast && ranStatus {
					t.Errorf("warm cache %v: git status ran for a tree that is exactly its HEAD", warm)
				}
			}
		})
	}
}

func kcExclude(r *fixtures.Repo, pattern string) {
	r.TB.Helper()
	p := filepath.Join(r.Dir, ".git", "info", "exclude")
	b, _ := os.ReadFile(p)
	if err := os.WriteFile(p, append(b, []byte("\n"+pattern+"\n")...), 0o644); err != nil {
		r.TB.Fatal(err)
	}
}

func kcChmod(r *fixtures.Repo, p string, mode os.FileMode) {
	r.TB.Helper()
	if err := os.Chmod(p, mode); err != nil {
		r.TB.Fatal(err)
	}
}

func kcSymlink(r *fixtures.Repo, target, p string) {
	r.TB.Helper()
	if err := os.Symlink(target, p); err != nil {
		r.TB.Fatal(err)
	}
}

// sameSizeEdit rewrites the file at p from old to content of the same
// size and sets its mtime back: only its ctime tells.
func sameSizeEdit(r *fixtures.Repo, p, old, content string) {
	r.TB.Helper()
	if len(old) != len(content) {
		r.TB.Fatalf("%q and %q differ in size", old, content)
	}
	fi, err := os.Lstat(p)
	if err != nil {
		r.TB.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), fi.Mode()); err != nil {
		r.TB.Fatal(err)
	}
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		r.TB.Fatal(err)
	}
}

// BenchmarkWorktreeKnownClean observes one clean tree of 2,050 files (the
// benchmark fleet's checkout) with a warm content hash cache, through plan's
// fast path and through git status, for a profile of the in-process part:
//
//	go test ./observe -run '^$' -bench WorktreeKnownClean -benchmem -cpuprofile cpu.out
func BenchmarkWorktreeKnownClean(b *testing.B) {
	r := fixtures.New(b, fixtures.Options{})
	for d := range 41 {
		for f := range 50 {
			r.WriteFile(r.Dir, fmt.Sprintf("pkg%02d/f%03d.go", d, f), fmt.Sprintf("package pkg%02d\n\nfunc F%03d() int { return %d }\n", d, f, f))
		}
	}
	r.CommitAll(r.Dir, "a realistic checkout")
	wt := filepath.Join(r.Root, "wt")
	r.Git("worktree", "add", "-q", "-b", "custody/wt", wt)
	ctx := context.Background()
	g := hostio.NewGit(&hostio.Runner{Env: r.Env()})
	repo, err := gitfiles.Discover(ctx, g, r.Dir)
	if err != nil {
		b.Fatal(err)
	}
	inv, err := gitfiles.TakeInventory(ctx, g, repo)
	if err != nil {
		b.Fatal(err)
	}
	var heads []string
	for _, e := range inv.Entries {
		heads = append(heads, e.Head)
	}
	trees, err := gitfiles.CommitTrees(ctx, g, repo, heads)
	if err != nil {
		b.Fatal(err)
	}
	cache := observe.NewHashCache(repo)
	cache.Now = func() time.Time { return time.Now().Add(time.Hour) }
	rec := machine.Record{ID: "wt", Kind: machine.KindWorktree, State: machine.StateFinished, Path: wt, Branch: "custody/wt", AdminKey: "wt"}
	for _, bc := range []struct {
		name  string
		trees map[string]string
	}{{"fast", trees}, {"status", nil}} {
		b.Run(bc.name, func(b *testing.B) {
			scope := observe.Scope{Status: true, Hidden: true, Hashes: cache, HeadTrees: bc.trees}
			observe.Worktree(ctx, g, repo, inv, rec, scope) // the cache, warm
			for b.Loop() {
				if o := observe.Worktree(ctx, g, repo, inv, rec, scope); len(o.Content) > 0 || o.StatusErr != "" {
					b.Fatalf("not clean: %+v", o)
				}
			}
		})
	}
}
