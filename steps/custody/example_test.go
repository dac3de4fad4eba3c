package custody_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/steps/custody"
)

// A tree from new to its removal: made, worked in, published, finished,
// planned and applied.
func Example() {
	dir, cleanup := exampleRepository() // a clone of a remote, both made with git
	defer cleanup()
	ctx := context.Background()

	c, err := custody.Open(ctx, dir, custody.Options{})
	if err != nil {
		log.Fatal(err)
	}
	tree, err := c.New(ctx, "feature", custody.NewOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("new: on", strings.TrimSuffix(tree.Branch, tree.ID))

	publish(tree.Path, tree.Branch) // commit in the tree, push its branch

	finished, err := c.Finish(ctx, tree.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("finish:", finished[0].Outcome)

	plan, err := c.Plan(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, it := range plan.Items {
		fmt.Println("plan:", it.Action, "proven by", it.Proof.Kind)
	}

	res, err := c.Apply(ctx, plan)
	if err != nil {
		log.Fatal(err)
	}
	for _, it := range res.Items {
		fmt.Println("apply:", it.Outcome, "and its branch", it.Branch.Outcome)
	}
	// Output:
	// new: on custody/
	// finish: finished
	// plan: remove proven by ancestry
	// apply: removed and its branch deleted
}

// A tree that changed since plan is kept, and Apply says so with a
// *StaleError: plan again and review.
func ExampleCustody_Apply_stale() {
	dir, cleanup := exampleRepository()
	defer cleanup()
	ctx := context.Background()

	c, err := custody.Open(ctx, dir, custody.Options{})
	if err != nil {
		log.Fatal(err)
	}
	tree, err := c.New(ctx, "feature", custody.NewOptions{})
	if err != nil {
		log.Fatal(err)
	}
	publish(tree.Path, tree.Branch)
	if _, err := c.Finish(ctx, tree.ID); err != nil {
		log.Fatal(err)
	}
	plan, err := c.Plan(ctx)
	if err != nil {
		log.Fatal(err)
	}

	publish(tree.Path, tree.Branch) // more work, after plan

	_, err = c.Apply(ctx, plan)
	var stale *custody.StaleError
	if errors.As(err, &stale) {
		for _, it := range stale.Items {
			fmt.Println(it.Outcome, "and kept:", it.Refusal.Path == tree.Path)
		}
	}
	fmt.Println("errors.Is ErrStale:", errors.Is(err, custody.ErrStale))
	// Output:
	// stale and kept: true
	// errors.Is ErrStale: true
}

// Ports replaced: a fixed clock, whose time is what the journal records,
// and a git runner that counts the commands custody runs through it
// before running them for real.
func ExampleOptions() {
	dir, cleanup := exampleRepository()
	defer cleanup()
	ctx := context.Background()

	clock := custody.ClockFunc(func() time.Time { return time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC) })
	git := &countingGit{}
	c, err := custody.Open(ctx, dir, custody.Options{Clock: clock, Git: git, Actor: "ci"})
	if err != nil {
		log.Fatal(err)
	}
	tree, err := c.New(ctx, "feature", custody.NewOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("git worktree add ran:", git.count("worktree add"))

	shown, err := c.Show(ctx, tree.ID)
	if err != nil {
		log.Fatal(err)
	}
	for _, en := range shown.Journal {
		fmt.Println(en.At.Format(time.RFC3339), en.Actor, en.Trigger, "->", en.To)
	}
	// Output:
	// git worktree add ran: 1
	// 2030-01-02T03:04:05Z ci create -> provisioning
	// 2030-01-02T03:04:05Z ci created -> active
}

// countingGit counts the git commands it is handed by subcommand, then
// runs each for real.
type countingGit struct {
	mu   sync.Mutex
	seen map[string]int
}

func (g *countingGit) RunGit(ctx context.Context, c hostio.Cmd, run func(context.Context, hostio.Cmd) (hostio.Result, error)) (hostio.Result, error) {
	args := gitArgs(c.Args)
	g.mu.Lock()
	if g.seen == nil {
		g.seen = map[string]int{}
	}
	if len(args) >= 2 {
		g.seen[args[0]+" "+args[1]]++
	}
	g.mu.Unlock()
	return run(ctx, c)
}

func (g *countingGit) count(sub string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.seen[sub]
}

// exampleEnv is the environment the examples' git (theirs and custody's)
// runs with: no user or system configuration, a private home, fixed
// identities and dates.
func exampleEnv(home string) map[string]string {
	return map[string]string{
		"HOME": home, "XDG_STATE_HOME": filepath.Join(home, ".local", "state"), "XDG_DATA_HOME": filepath.Join(home, ".local", "share"),
		"GIT_CONFIG_GLOBAL": os.DevNull, "GIT_CONFIG_NOSYSTEM": "1",
		"GIT_AUTHOR_NAME": "Example", "GIT_AUTHOR_EMAIL": "example@example.com", "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
		"GIT_COMMITTER_NAME": "Example", "GIT_COMMITTER_EMAIL": "example@example.com", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
	}
}

// exampleRepository makes a bare remote and a clone of it with one
// commit on main, pushed, in a new temporary directory, and sets the
// process's environment to exampleEnv's. cleanup restores the environment
// and removes the directory.
func exampleRepository() (dir string, cleanup func()) {
	tmp, err := os.MkdirTemp("", "custody-example-")
	if err != nil {
		log.Fatal(err)
	}
	if real, err := filepath.EvalSymlinks(tmp); err == nil {
		tmp = real
	}
	restore := map[string]*string{}
	for k, v := range exampleEnv(filepath.Join(tmp, "home")) {
		if old, ok := os.LookupEnv(k); ok {
			restore[k] = &old
		} else {
			restore[k] = nil
		}
		os.Setenv(k, v)
	}
	cleanup = func() {
		for k, v := range restore {
			if v == nil {
				os.Unsetenv(k)
			} else {
				os.Setenv(k, *v)
			}
		}
		os.RemoveAll(tmp)
	}
	remote, dir := filepath.Join(tmp, "remote.git"), filepath.Join(tmp, "repo")
	for _, d := range []string{filepath.Join(tmp, "home"), dir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			log.Fatal(err)
		}
	}
	runGit(tmp, "init", "-q", "--bare", "-b", "main", remote)
	runGit(dir, "init", "-q", "-b", "main")
	runGit(dir, "remote", "add", "origin", remote)
	if err := os.WriteFile(filepath.Join(dir, "README"), []byte("example\n"), 0o644); err != nil {
		log.Fatal(err)
	}
	runGit(dir, "add", "README")
	runGit(dir, "commit", "-q", "-m", "first")
	runGit(dir, "push", "-q", "-u", "origin", "main")
	return dir, cleanup
}

// publish commits a new file in tree and pushes HEAD to branch on origin.
func publish(tree, branch string) {
	f, err := os.CreateTemp(tree, "work-*.txt")
	if err != nil {
		log.Fatal(err)
	}
	f.Close()
	runGit(tree, "add", "-A")
	runGit(tree, "commit", "-q", "-m", "work")
	runGit(tree, "push", "-q", "origin", "HEAD:refs/heads/"+branch)
}

// runGit runs git in dir, and ends the example when it fails.
func runGit(dir string, args ...string) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		log.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
