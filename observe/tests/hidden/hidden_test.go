package hidden

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/custody-sh/custody/fixtures/unprivileged"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/internal/gitsandbox"
)

// hiddenStatusArgs mirrors the one status custody trusts (observe.Worktree).
var hiddenStatusArgs = []string{"-c", "core.fsmonitor=false", "-c", "status.showUntrackedFiles=all", "-c", "diff.ignoreSubmodules=none",
	"status", "--porcelain=v2", "-z", "--ignored=matching", "--untracked-files=all", "--ignore-submodules=none"}

// hiddenFixture is a clone with a linked worktree wt (branch "wt") to
// observe.
type hiddenFixture struct {
	s    *gitsandbox.Sandbox
	main string
	wt   string
	repo hostio.Repo
}

func newHiddenFixture(t *testing.T) *hiddenFixture {
	t.Helper()
	s := gitsandbox.NewSandbox(t)
	main := s.NewOrigin()
	wt := filepath.Join(s.Root, "wt")
	s.Git(main, "worktree", "add", "-q", "-b", "wt", wt)
	return &hiddenFixture{s: s, main: main, wt: wt, repo: s.Discover(main)}
}

// status is the linked worktree's status as custody reads it.
func (f *hiddenFixture) status() machine.Status {
	f.s.T.Helper()
	st, err := observe.ParseStatus(f.s.GitRaw(f.wt, hiddenStatusArgs...))
	if err != nil {
		f.s.T.Fatalf("ParseStatus: %v", err)
	}
	return st
}

// hidden observes the linked worktree with a status read just now.
func (f *hiddenFixture) hidden() []machine.Hidden {
	f.s.T.Helper()
	return f.hiddenWith(f.status())
}

func (f *hiddenFixture) hiddenWith(st machine.Status) []machine.Hidden {
	f.s.T.Helper()
	key := gitfiles.AdminKeyOf(f.repo, f.wt)
	if key == "" {
		f.s.T.Fatalf("no admin key for %s", f.wt)
	}
	return observe.HiddenState(context.Background(), f.s.G, f.repo, f.wt, key, st)
}

var hiddenOpts = cmp.Options{
	cmpopts.EquateEmpty(),
	cmpopts.IgnoreFields(machine.Hidden{}, "Detail"),
	cmpopts.SortSlices(func(a, b machine.Hidden) bool { return string(a.Code)+"\x00"+a.Path < string(b.Code)+"\x00"+b.Path }),
}

func checkHidden(t *testing.T, got, want []machine.Hidden) {
	t.Helper()
	if d := cmp.Diff(want, got, hiddenOpts); d != "" {
		t.Errorf("HiddenState mismatch (-want +got):\n%s\ngot: %+v", d, got)
	}
}

func TestHiddenState(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		setup func(f *hiddenFixture)
		want  func(wt string) []machine.Hidden
		// details, when set, are substrings each finding's Detail must hold,
		// in the sorted order of the findings.
		details []string
	}{
		{
			name:  "clean",
			setup: func(f *hiddenFixture) {},
		},
		{
			name: "assume-unchanged",
			setup: func(f *hiddenFixture) {
				f.s.Git(f.wt, "update-index", "--assume-unchanged", "README")
				f.s.Write(f.wt, "README", "changed, and git status does not say so\n")
				if st := f.status(); !st.Clean() {
					f.s.T.Fatalf("fixture: status sees the change: %+v", st)
				}
			},
			want: func(wt string) []machine.Hidden {
				return []machine.Hidden{{Code: machine.CodeAssumeUnchanged, Path: filepath.Join(wt, "README")}}
			},
		},
		{
			name: "skip-worktree on a path with spaces and non-ASCII",
			setup: func(f *hiddenFixture) {
				f.s.CommitFile(f.wt, "dir/sp ace ü.txt", "x\n")
				f.s.Git(f.wt, "update-index", "--skip-worktree", "dir/sp ace ü.txt")
			},
			want: func(wt string) []machine.Hidden {
				return []machine.Hidden{{Code: machine.CodeSkipWorktree, Path: filepath.Join(wt, "dir/sp ace ü.txt")}}
			},
		},
		{
			name: "skip-worktree and assume-unchanged on one entry",
			setup: func(f *hiddenFixture) {
				// One update-index call applies only one of the two flags.
				f.s.Git(f.wt, "update-index", "--skip-worktree", "README")
				f.s.Git(f.wt, "update-index", "--assume-unchanged", "README")
				if out := f.s.Git(f.wt, "ls-files", "-v", "README"); out != "s README" {
					f.s.T.Fatalf("fixture: ls-files -v says %q", out)
				}
			},
			want: func(wt string) []machine.Hidden {
				return []machine.Hidden{{Code: machine.CodeSkipWorktree, Path: filepath.Join(wt, "README")}}
			},
		},
		{
			name: "staged content differs from HEAD and the working copy",
			setup: func(f *hiddenFixture) {
				f.s.Write(f.wt, "unstaged", "1\n")
				f.s.CommitFile(f.wt, "dir/a b.txt", "1\n")
				f.s.Write(f.wt, "dir/a b.txt", "2\n")
				f.s.Git(f.wt, "add", "dir/a b.txt")
				f.s.Write(f.wt, "dir/a b.txt", "3\n")
				// Staged only and unstaged only are status's business.
				f.s.Write(f.wt, "README", "staged only\n")
				f.s.Git(f.wt, "add", "README")
				f.s.Write(f.wt, "unstaged", "2\n")
			},
			want: func(wt string) []machine.Hidden {
				return []machine.Hidden{{Code: machine.CodeStagedDiffers, Path: filepath.Join(wt, "dir/a b.txt")}}
			},
		},
		{
			name: "nested .git directory",
			setup: func(f *hiddenFixture) {
				f.s.Git(f.wt, "init", "-q", "vendor/inner")
			},
			want: func(wt string) []machine.Hidden {
				return []machine.Hidden{{Code: machine.CodeNestedGit, Path: filepath.Join(wt, "vendor/inner/.git")}}
			},
		},
		{
			name: "nested .git file",
			setup: func(f *hiddenFixture) {
				f.s.Write(f.wt, "x/y/.git", "gitdir: ../../../elsewhere\n")
			},
			want: func(wt string) []machine.Hidden {
				return []machine.Hidden{{Code: machine.CodeNestedGit, Path: filepath.Join(wt, "x/y/.git")}}
			},
		},
		{
			name: "nested .git symlink",
			setup: func(f *hiddenFixture) {
				if err := os.MkdirAll(filepath.Join(f.wt, "l"), 0o755); err != nil {
					f.s.T.Fatal(err)
				}
				if err := os.Symlink(f.repo.CommonDir, filepath.Join(f.wt, "l", ".git")); err != nil {
					f.s.T.Fatal(err)
				}
			},
			want: func(wt string) []machine.Hidden {
				return []machine.Hidden{{Code: machine.CodeNestedGit, Path: filepath.Join(wt, "l/.git")}}
			},
		},
		{
			name: "a linked worktree nested inside",
			setup: func(f *hiddenFixture) {
				f.s.Git(f.main, "worktree", "add", "-q", "-b", "inner", filepath.Join(f.wt, "inner"))
			},
			want: func(wt string) []machine.Hidden {
				return []machine.Hidden{{Code: machine.CodeNestedGit, Path: filepath.Join(wt, "inner/.git")}}
			},
		},
		{
			name: "names that merely look like .git",
			setup: func(f *hiddenFixture) {
				f.s.Write(f.wt, ".github/.gitkeep", "")
				f.s.Write(f.wt, "foo.git/HEAD", "ref: refs/heads/main\n")
				f.s.Write(f.wt, ".gitignore", "*.log\n")
				f.s.Write(f.wt, "x.log", "ignored\n")
			},
		},
		{
			name: "per-worktree ref refs/worktree",
			setup: func(f *hiddenFixture) {
				f.s.Git(f.wt, "update-ref", "refs/worktree/x", "HEAD")
			},
			want: func(wt string) []machine.Hidden {
				return []machine.Hidden{{Code: machine.CodePerWorktreeRef, Path: wt}}
			},
			details: []string{"refs/worktree/x"},
		},
		{
			name: "per-worktree ref refs/bisect",
			setup: func(f *hiddenFixture) {
				f.s.Git(f.wt, "update-ref", "refs/bisect/x", "HEAD")
			},
			want: func(wt string) []machine.Hidden {
				return []machine.Hidden{{Code: machine.CodePerWorktreeRef, Path: wt}}
			},
			details: []string{"refs/bisect/x"},
		},
		{
			name: "per-worktree ref refs/rewritten",
			setup: func(f *hiddenFixture) {
				f.s.Git(f.wt, "update-ref", "refs/rewritten/deep/x", "HEAD")
			},
			want: func(wt string) []machine.Hidden {
				return []machine.Hidden{{Code: machine.CodePerWorktreeRef, Path: wt}}
			},
			details: []string{"refs/rewritten/deep/x"},
		},
		{
			// The main worktree's per-worktree refs and shared refs made from
			// the linked worktree do not die with it.
			name: "refs that are not this worktree's",
			setup: func(f *hiddenFixture) {
				f.s.Git(f.main, "update-ref", "refs/worktree/x", "HEAD")
				f.s.Git(f.main, "update-ref", "refs/bisect/x", "HEAD")
				f.s.Git(f.wt, "update-ref", "refs/heads/shared", "HEAD")
				f.s.Git(f.wt, "update-ref", "refs/custom/shared", "HEAD")
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newHiddenFixture(t)
			tc.setup(f)
			var want []machine.Hidden
			if tc.want != nil {
				want = tc.want(f.wt)
			}
			got := f.hidden()
			checkHidden(t, got, want)
			if tc.details != nil && len(got) == len(tc.details) {
				for i, d := range tc.details {
					if !strings.Contains(got[i].Detail, d) {
						t.Errorf("finding %d detail = %q, want it to name %q", i, got[i].Detail, d)
					}
				}
			}
		})
	}
}

// TestHiddenStateOperations: each operation in progress is refused; once it
// is completed or aborted, its leftovers (ORIG_HEAD, AUTO_MERGE, ...) are
// not.
func TestHiddenStateOperations(t *testing.T) {
	t.Parallel()
	// conflicting prepares, in the linked worktree, a branch "theirs" and
	// two commits of its own on "wt", all changing conflict.txt; it
	// returns the first of the two.
	conflicting := func(f *hiddenFixture) string {
		s, wt := f.s, f.wt
		s.CommitFile(wt, "conflict.txt", "base\n")
		s.Git(wt, "checkout", "-q", "-b", "theirs")
		s.CommitFile(wt, "conflict.txt", "theirs\n")
		s.Git(wt, "checkout", "-q", "wt")
		o1 := s.CommitFile(wt, "conflict.txt", "ours\n")
		s.CommitFile(wt, "conflict.txt", "ours again\n")
		return o1
	}
	resolve := func(f *hiddenFixture) {
		f.s.Write(f.wt, "conflict.txt", "resolved\n")
		f.s.Git(f.wt, "add", "conflict.txt")
	}
	type finish struct {
		name string
		run  func(f *hiddenFixture)
	}
	tests := []struct {
		name     string
		start    func(f *hiddenFixture)
		finishes []finish
	}{
		{
			name:  "rebase stopped on a conflict",
			start: func(f *hiddenFixture) { conflicting(f); f.s.GitFails(f.wt, "rebase", "theirs") },
			finishes: []finish{
				{"abort", func(f *hiddenFixture) { f.s.Git(f.wt, "rebase", "--abort") }},
				{"continue", func(f *hiddenFixture) {
					resolve(f)
					// The second commit conflicts again.
					if _, err := f.s.TryGit(f.wt, "rebase", "--continue"); err != nil {
						resolve(f)
						f.s.Git(f.wt, "rebase", "--continue")
					}
				}},
			},
		},
		{
			// Status is clean: only the rebase state tells.
			name: "rebase stopped by a failing exec",
			start: func(f *hiddenFixture) {
				f.s.CommitFile(f.wt, "one", "1\n")
				f.s.GitFails(f.wt, "rebase", "--exec", "false", "HEAD~1")
				if st := f.status(); !st.Clean() {
					f.s.T.Fatalf("fixture: status is not clean: %+v", st)
				}
			},
			finishes: []finish{
				{"abort", func(f *hiddenFixture) { f.s.Git(f.wt, "rebase", "--abort") }},
				{"continue", func(f *hiddenFixture) { f.s.Git(f.wt, "rebase", "--continue") }},
			},
		},
		{
			name:  "merge conflict",
			start: func(f *hiddenFixture) { conflicting(f); f.s.GitFails(f.wt, "merge", "theirs") },
			finishes: []finish{
				{"abort", func(f *hiddenFixture) { f.s.Git(f.wt, "merge", "--abort") }},
				{"commit", func(f *hiddenFixture) { resolve(f); f.s.Git(f.wt, "commit", "-q", "--no-edit") }},
			},
		},
		{
			name:  "cherry-pick conflict",
			start: func(f *hiddenFixture) { conflicting(f); f.s.GitFails(f.wt, "cherry-pick", "theirs") },
			finishes: []finish{
				{"abort", func(f *hiddenFixture) { f.s.Git(f.wt, "cherry-pick", "--abort") }},
				{"continue", func(f *hiddenFixture) { resolve(f); f.s.Git(f.wt, "cherry-pick", "--continue") }},
			},
		},
		{
			name: "revert conflict",
			start: func(f *hiddenFixture) {
				o1 := conflicting(f)
				f.s.GitFails(f.wt, "revert", o1)
			},
			finishes: []finish{
				{"abort", func(f *hiddenFixture) { f.s.Git(f.wt, "revert", "--abort") }},
				{"continue", func(f *hiddenFixture) { resolve(f); f.s.Git(f.wt, "revert", "--continue") }},
			},
		},
		{
			name: "am stopped on a conflict",
			start: func(f *hiddenFixture) {
				conflicting(f)
				patch := filepath.Join(f.s.Root, "theirs.patch")
				f.s.Write(f.s.Root, "theirs.patch", f.s.Git(f.wt, "format-patch", "-1", "--stdout", "theirs")+"\n")
				f.s.GitFails(f.wt, "am", "-3", patch)
			},
			finishes: []finish{
				{"abort", func(f *hiddenFixture) { f.s.Git(f.wt, "am", "--abort") }},
				{"continue", func(f *hiddenFixture) { resolve(f); f.s.Git(f.wt, "am", "--continue") }},
			},
		},
		{
			name:  "bisect started",
			start: func(f *hiddenFixture) { f.s.Git(f.wt, "bisect", "start") },
			finishes: []finish{
				{"reset", func(f *hiddenFixture) { f.s.Git(f.wt, "bisect", "reset") }},
			},
		},
	}
	for _, tc := range tests {
		for _, fin := range tc.finishes {
			t.Run(tc.name+"/"+fin.name, func(t *testing.T) {
				t.Parallel()
				f := newHiddenFixture(t)
				tc.start(f)
				checkHidden(t, f.hidden(), []machine.Hidden{{Code: machine.CodeOperationInProgress, Path: f.wt}})
				fin.run(f)
				checkHidden(t, f.hidden(), nil)
			})
		}
	}
}

// TestHiddenStateOperationOnlyInMain: an operation in the main worktree is
// not the linked worktree's.
func TestHiddenStateOperationOnlyInMain(t *testing.T) {
	t.Parallel()
	f := newHiddenFixture(t)
	f.s.Git(f.main, "bisect", "start")
	checkHidden(t, f.hidden(), nil)
}

func TestHiddenStateUnreadableDirectory(t *testing.T) {
	t.Parallel()
	if unprivileged.Run(t) {
		return // root is not refused by permission bits: run as nobody
	}
	f := newHiddenFixture(t)
	locked := filepath.Join(f.wt, "locked")
	f.s.Write(f.wt, "locked/inner/.git", "gitdir: /nowhere\n")
	if err := os.Chmod(locked, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(locked, 0o755) })
	// What is inside cannot be seen, so it is not known to be clean.
	checkHidden(t, f.hiddenWith(machine.Status{}), []machine.Hidden{{Code: machine.CodeObservationFailed, Path: locked}})
}

// TestHiddenStateDirectoryTooDeep: a directory whose path is too long to
// open (ENAMETOOLONG) cannot be read, whoever runs the test.
func TestHiddenStateDirectoryTooDeep(t *testing.T) {
	t.Parallel()
	f := newHiddenFixture(t)
	const pathMax = 4096
	name := strings.Repeat("d", 200)
	r, err := os.OpenRoot(f.wt)
	if err != nil {
		t.Fatal(err)
	}
	cur, first := f.wt, ""
	for len(cur) < pathMax+len(name) {
		if err := r.Mkdir(name, 0o755); err != nil {
			t.Fatal(err)
		}
		next, err := r.OpenRoot(name)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		r = next
		cur = filepath.Join(cur, name)
		if first == "" && len(cur) >= pathMax {
			first = cur
		}
	}
	// A nested repository beyond the limit is exactly what must not be
	// taken for absent.
	if err := r.Mkdir(".git", 0o755); err != nil {
		t.Fatal(err)
	}
	r.Close()
	checkHidden(t, f.hiddenWith(machine.Status{}), []machine.Hidden{{Code: machine.CodeObservationFailed, Path: first}})
}

// newSubmoduleFixture is a hidden fixture whose main checkout has a
// submodule "sub" (upstream: the bare up.git) committed and pushed; the
// linked worktree has it checked out when init is set.
func newSubmoduleFixture(t *testing.T, init bool) *hiddenFixture {
	t.Helper()
	s := gitsandbox.NewSandbox(t)
	up := filepath.Join(s.Root, "up.git")
	s.Git(s.Root, "init", "-q", "--bare", "-b", "main", up)
	upWork := filepath.Join(s.Root, "up-work")
	s.Git(s.Root, "init", "-q", "-b", "main", upWork)
	s.CommitFile(upWork, "lib.txt", "lib\n")
	s.Git(upWork, "push", "-q", up, "main")
	main := s.NewOrigin()
	s.Git(main, "-c", "protocol.file.allow=always", "submodule", "add", "-q", up, "sub")
	s.CommitAll(main, "add sub")
	s.Git(main, "push", "-q", "origin", "main")
	wt := filepath.Join(s.Root, "wt")
	s.Git(main, "worktree", "add", "-q", "-b", "wt", wt)
	if init {
		s.Git(wt, "-c", "protocol.file.allow=always", "submodule", "update", "-q", "--init")
	}
	return &hiddenFixture{s: s, main: main, wt: wt, repo: s.Discover(main)}
}

func TestHiddenStateSubmodules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		init    bool
		setup   func(f *hiddenFixture, sub string)
		want    func(sub string) []machine.Hidden
		details []string
	}{
		{
			// The submodule's own .git (a gitfile) is not a nested .git.
			name:  "clean and pushed",
			init:  true,
			setup: func(f *hiddenFixture, sub string) {},
		},
		{
			name:  "not checked out",
			init:  false,
			setup: func(f *hiddenFixture, sub string) {},
		},
		{
			name:  "changed file",
			init:  true,
			setup: func(f *hiddenFixture, sub string) { f.s.Write(sub, "lib.txt", "changed\n") },
			want: func(sub string) []machine.Hidden {
				return []machine.Hidden{{Code: machine.CodeSubmoduleChanges, Path: sub}}
			},
		},
		{
			name:  "untracked file",
			init:  true,
			setup: func(f *hiddenFixture, sub string) { f.s.Write(sub, "new.txt", "new\n") },
			want: func(sub string) []machine.Hidden {
				return []machine.Hidden{{Code: machine.CodeSubmoduleChanges, Path: sub}}
			},
		},
		{
			name:  "commit not on its remote",
			init:  true,
			setup: func(f *hiddenFixture, sub string) { f.s.CommitFile(sub, "lib.txt", "local only\n") },
			want: func(sub string) []machine.Hidden {
				return []machine.Hidden{{Code: machine.CodeSubmoduleUnpushed, Path: sub}}
			},
		},
		{
			// The submodule's commit is on its remote only under a custom
			// ref: any advertised namespace counts.
			name: "commit on its remote under a custom ref",
			init: true,
			setup: func(f *hiddenFixture, sub string) {
				f.s.CommitFile(sub, "lib.txt", "pushed elsewhere\n")
				f.s.Git(sub, "push", "-q", "origin", "HEAD:refs/custom/x")
			},
		},
		{
			name: "nested repository inside the submodule",
			init: true,
			setup: func(f *hiddenFixture, sub string) {
				f.s.Git(sub, "init", "-q", "deep")
			},
			want: func(sub string) []machine.Hidden {
				return []machine.Hidden{
					{Code: machine.CodeNestedGit, Path: filepath.Join(sub, "deep/.git")},
					{Code: machine.CodeSubmoduleChanges, Path: sub},
				}
			},
		},
		{
			// Refused either way; the detail says the remote did not answer.
			name: "its remote does not answer",
			init: true,
			setup: func(f *hiddenFixture, sub string) {
				f.s.Git(sub, "remote", "set-url", "origin", filepath.Join(f.s.Root, "gone.git"))
			},
			want: func(sub string) []machine.Hidden {
				return []machine.Hidden{{Code: machine.CodeSubmoduleUnpushed, Path: sub}}
			},
			details: []string{"did not answer"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newSubmoduleFixture(t, tc.init)
			sub := filepath.Join(f.wt, "sub")
			tc.setup(f, sub)
			var want []machine.Hidden
			if tc.want != nil {
				want = tc.want(sub)
			}
			// An initialized submodule's repository lives in the admin
			// entry's modules/: git removes such a tree only by force.
			if tc.init {
				want = append(want, machine.Hidden{Code: machine.CodeSubmodules,
					Path: filepath.Join(f.repo.AdminDir(gitfiles.AdminKeyOf(f.repo, f.wt)), "modules")})
			}
			got := f.hidden()
			checkHidden(t, got, want)
			if tc.details != nil && len(got) >= len(tc.details) {
				for i, d := range tc.details {
					if !strings.Contains(got[i].Detail, d) {
						t.Errorf("finding %d detail = %q, want it to hold %q", i, got[i].Detail, d)
					}
				}
			}
		})
	}
}

// TestHiddenStateSequencerPending: a cherry-pick or revert of several
// commits that stopped on a conflict, whose resolution the user committed
// with plain `git commit`, is still in progress: CHERRY_PICK_HEAD (or
// REVERT_HEAD) is gone, but the sequencer holds the commits not yet picked,
// and `git status` says "Cherry-pick currently in progress". Removing the
// tree would drop them.
func TestHiddenStateSequencerPending(t *testing.T) {
	t.Parallel()
	for _, op := range []string{"cherry-pick", "revert"} {
		for _, fin := range []string{"continue", "abort", "quit"} {
			t.Run(op+"/"+fin, func(t *testing.T) {
				t.Parallel()
				f := newHiddenFixture(t)
				s, wt := f.s, f.wt
				s.CommitFile(wt, "conflict.txt", "base\n")
				s.Git(wt, "checkout", "-q", "-b", "theirs")
				t1 := s.CommitFile(wt, "conflict.txt", "theirs\n")
				t2 := s.CommitFile(wt, "second.txt", "2\n")
				s.Git(wt, "checkout", "-q", "wt")
				// The first commit conflicts; the second is still to do (had
				// the last one conflicted, committing it would end the run).
				if op == "revert" {
					s.Git(wt, "reset", "-q", "--hard", "theirs")
					s.CommitFile(wt, "conflict.txt", "theirs, changed again\n")
					s.GitFails(wt, "revert", t1, t2)
				} else {
					s.CommitFile(wt, "conflict.txt", "ours\n")
					s.GitFails(wt, "cherry-pick", t1, t2)
				}
				s.Write(wt, "conflict.txt", "resolved\n")
				s.Git(wt, "add", "conflict.txt")
				s.Git(wt, "commit", "-q", "--no-edit")
				if out := s.Git(wt, "status"); !strings.Contains(out, "currently in progress") {
					t.Fatalf("fixture: git status does not say the %s is in progress:\n%s", op, out)
				}
				checkHidden(t, f.hidden(), []machine.Hidden{{Code: machine.CodeOperationInProgress, Path: wt}})
				s.Git(wt, op, "--"+fin)
				checkHidden(t, f.hidden(), nil)
			})
		}
	}
}
