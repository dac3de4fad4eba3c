package plan

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/custody-sh/custody/cmd/custody/internal/clitest"
	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
)

// mergedTrees makes n finished trees named prefix0..., each with a commit
// main merged and pushed (an ancestor of the advertised main, none a tip),
// and returns their ids.
func mergedTrees(t *testing.T, r *fixtures.Repo, prefix string, n int) []string {
	t.Helper()
	var ids, heads []string
	for i := range n {
		id, path := clitest.NewTree(t, r, fmt.Sprintf("%s%d", prefix, i))
		heads = append(heads, r.Commit(path, "w.txt", fmt.Sprintf("work %d\n", i)))
		ids = append(ids, id)
	}
	r.Git(append([]string{"merge", "-q", "-s", "ours", "--no-edit", "-m", "merge the work"}, heads...)...)
	r.Git("push", "-q", "origin", "main")
	clitest.MustCustody(t, r, 0, append([]string{"finish"}, ids...)...)
	return ids
}

// TestGitWorkPerTree: the git work of plan and apply grows by what each
// tree needs, never by what the fleet holds. Over three trees whose commits
// main merged (each an ancestor of the advertised main, none a tip):
// plan runs no status (each tree is exactly its HEAD, which one cat-file
// for every head's tree shows: decision 0185), reads every index itself (no ls-files),
// answers every tree's ancestry with one rev-list (no merge-base) and
// asks the remote once, reading git's configuration once for the remotes
// and the attributes both; apply asks the remote and HEAD's trees once for
// all its items, reads no branch list, proves ancestry without merge-base,
// lists no tree with ls-tree (the quarantine manifest is the index,
// verified against HEAD's tree id), sorts no reflog with cat-file, and
// verifies each removal from git's registry files, not `git worktree list`
// (the repository itself is identified from git's files too): at most 4 git processes per
// removal (two observations, one rev-list over the reflogs and the
// branch's compare-and-swap delete), beside a fixed few per command.
func TestGitWorkPerTree(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	mergedTrees(t, r, "cost", 3)

	file := clitest.PlanFile(t, r)
	plan := clitest.MustCustody(t, r, 0, "plan", "-o", file, "--debug")
	for _, c := range []struct {
		cmd  string
		want int
	}{
		{"-c core.fsmonitor=false", 0},                            // status: every tree is exactly its HEAD
		{"cat-file --batch-check=%(objectname) %(objecttype)", 3}, // the tips' types, every HEAD's tree, the known ancestors' types
		{"ls-files", 0},
		{"merge-base", 0},
		{"rev-list --stdin", 1},
		{"ls-remote --symref", 1},
		{"config", 1}, // the remotes and the attributes from outside, from one listing
	} {
		if got := clitest.GitRuns(plan.Stderr, c.cmd); got != c.want {
			t.Errorf("plan ran git %s %d times, want %d:\n%s", c.cmd, got, c.want, plan.Stderr)
		}
	}

	apply := clitest.MustCustody(t, r, 0, "apply", file, "--json", "--debug")
	for _, it := range clitest.DecodeResult[steps.ApplyResult](t, apply, "apply").Items {
		if it.Outcome != machine.OutcomeRemoved {
			t.Fatalf("apply %s: %s, want removed", it.ID, it.Outcome)
		}
	}
	for _, c := range []struct {
		cmd  string
		want int
	}{
		{"ls-remote --symref", 1},
		{"merge-base", 0},
		{"for-each-ref", 0},
		{"ls-files", 0},
		{"-c core.fsmonitor=false", 6}, // the observation and the final one, per tree
		{"worktree list", 0},           // the repository and each removal are read from git's files
		{"ls-tree", 0},
		{"cat-file", 4}, // the advertisement's two, HEAD's trees once, the known ancestors' types once
		{"rev-list --stdin", 1 + 3},
		{"update-ref", 3},
	} {
		if got := clitest.GitRuns(apply.Stderr, c.cmd); got != c.want {
			t.Errorf("apply ran git %s %d times, want %d:\n%s", c.cmd, got, c.want, apply.Stderr)
		}
	}
	// Everything from the first item's observation on is per removal.
	all := strings.Split(apply.Stderr, "\n")
	first := slices.IndexFunc(all, func(l string) bool { return strings.HasPrefix(l, "+ git -c core.fsmonitor=false") })
	if first < 0 {
		t.Fatalf("apply observed no tree:\n%s", apply.Stderr)
	}
	fixed := clitest.GitRuns(strings.Join(all[:first], "\n"), "")
	perItem := clitest.GitRuns(strings.Join(all[first:], "\n"), "")
	if perItem > 4*3 || fixed > 10 {
		t.Errorf("apply of 3 removals ran %d git processes for its items (%.2f per removal, want at most 4) and %d fixed (want at most 10):\n%s",
			perItem, float64(perItem)/3, fixed, apply.Stderr)
	}
	t.Logf("apply: %.2f git processes per removal, %d per command", float64(perItem)/3, fixed)
}

// TestGitWorkOfNew: `custody new` in a plain working tree starts two git
// processes whatever the fleet holds: one rev-parse resolves and peels
// HEAD, and `git worktree add` makes the tree. The repository is
// identified, and the id and path are found free, from git's own files.
func TestGitWorkOfNew(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	for i := range 3 {
		clitest.NewTree(t, r, fmt.Sprintf("before%d", i))
	}
	res := clitest.MustCustody(t, r, 0, "new", "counted", "--debug")
	if got := clitest.GitRuns(res.Stderr, ""); got != 2 {
		t.Errorf("custody new ran %d git processes, want 2:\n%s", got, res.Stderr)
	}
	for _, c := range []struct {
		cmd  string
		want int
	}{
		{"rev-parse --is-bare-repository", 0},
		{"rev-parse --show-toplevel", 0},
		{"worktree list", 0},
		{"rev-parse --verify --quiet --end-of-options HEAD^{commit}", 1},
		{"worktree add", 1},
	} {
		if got := clitest.GitRuns(res.Stderr, c.cmd); got != c.want {
			t.Errorf("custody new ran git %s %d times, want %d:\n%s", c.cmd, got, c.want, res.Stderr)
		}
	}
}

// TestGitWorkOfUnpushedTrees: plan proves every tree that is no ancestor
// of the first tip in one batch (observe.ProveAll): trees with commits on
// no remote, and trees published on another branch, cost no git process
// of their own (each is exactly its HEAD, so no status either). Plan of 6
// such trees runs as many git processes as plan of 2.
func TestGitWorkOfUnpushedTrees(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	r.Git("checkout", "-q", "-b", "rel")
	r.Commit(r.Dir, "rel.txt", "release\n")
	r.Git("push", "-q", "origin", "rel")
	r.Git("checkout", "-q", "main")
	count := func(from, to int) (int, string) {
		for i := from; i < to; i++ {
			id, path := clitest.NewTree(t, r, fmt.Sprintf("unpushed%d", i))
			r.Commit(path, "w.txt", fmt.Sprintf("work %d\n", i))
			if i%2 == 1 {
				// Published on rel only: an ancestor of no first tip.
				r.Git("-C", path, "reset", "-q", "--hard", "origin/rel")
				r.Commit(path, "r.txt", fmt.Sprintf("on rel %d\n", i))
				r.Git("-C", path, "push", "-q", "origin", "HEAD:rel")
			}
			clitest.Finish(t, r, id)
		}
		plan := clitest.MustCustody(t, r, 0, "plan", "--debug")
		return strings.Count(plan.Stderr, "\n+ git "), plan.Stderr
	}
	two, _ := count(0, 2)
	six, trace := count(2, 6)
	if two != six {
		t.Errorf("plan of 2 unpushed or elsewhere-published trees ran %d git processes, of 6 ran %d; want the same:\n%s", two, six, trace)
	}
	for _, c := range []struct {
		cmd  string
		want int
	}{
		{"-c core.fsmonitor=false", 0}, // status: every tree is exactly its HEAD
		{"merge-base", 1},              // the batch's common ancestors
		{"rev-list --parents", 1},      // the batch's history
		{"diff-tree --stdin", 1},       // the heads' changes
	} {
		if got := clitest.GitRuns(trace, c.cmd); got != c.want {
			t.Errorf("plan ran git %s %d times, want %d:\n%s", c.cmd, got, c.want, trace)
		}
	}
}

// TestSweepGitWorkPerTree: sweep decides an idle active tree's build
// output from its index and one walk, with no git process of its own
// (decision 0265): over three idle trees whose Cargo target is ignored,
// untracked, or beside a person's untracked file, sweep runs no git status
// and no ls-files, reads git's configuration once, and discards all three
// targets. A fourth tree whose target lies in an untracked directory
// (where status might not have named it) is the one tree git status is
// asked about, once, and what it decides stands.
func TestSweepGitWorkPerTree(t *testing.T) {
	t.Parallel()
	r := clitest.InitRepo(t)
	var paths []string
	for i, shape := range []string{"ignored", "untracked", "beside", "below"} {
		_, p := clitest.NewTree(t, r, fmt.Sprintf("sw%d", i))
		r.WriteFile(p, "Cargo.toml", "[package]\n")
		if shape == "ignored" {
			r.WriteFile(p, ".gitignore", "/target/\n")
		}
		r.CommitAll(p, "crate")
		dir := "target"
		if shape == "below" {
			dir = "scratch/target"
			r.WriteFile(p, "scratch/notes.md", "a person's notes\n")
		}
		if shape == "beside" {
			r.WriteFile(p, "notes.md", "a person's notes\n")
		}
		r.WriteFile(p, dir+"/.rustc_info.json", "{}\n")
		r.WriteFile(p, dir+"/debug/deps/a.rlib", "rlib\n")
		paths = append(paths, p)
	}
	time.Sleep(20 * time.Millisecond) // idle for longer than --idle
	res := clitest.MustCustody(t, r, 0, "sweep", "--idle", "10ms", "--debug")
	for _, c := range []struct {
		cmd  string
		want int
	}{
		{"-c core.fsmonitor=false", 1}, // status: only the tree whose target is below an untracked directory
		{"ls-files", 0},
		{"config", 1},
	} {
		if got := clitest.GitRuns(res.Stderr, c.cmd); got != c.want {
			t.Errorf("sweep ran git %s %d times, want %d:\n%s", c.cmd, got, c.want, res.Stderr)
		}
	}
	for i, p := range paths {
		dir := "target"
		if i == 3 {
			dir = "scratch/target"
		}
		if _, err := os.Lstat(filepath.Join(p, dir)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s/%s is still there (%v):\n%s", p, dir, err, res.Stdout)
		}
	}
	for _, keep := range []string{filepath.Join(paths[2], "notes.md"), filepath.Join(paths[3], "scratch", "notes.md")} {
		if _, err := os.Lstat(keep); err != nil {
			t.Errorf("%s is gone: %v", keep, err)
		}
	}
}
