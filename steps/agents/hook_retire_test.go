//go:build unix

package agents_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/steps/agents"
	"github.com/custody-sh/custody/store"
)

// hrEnv is the workflow environment of r as a command builds it, with
// every git command custody runs going through a wrapper that logs the
// directory it runs in and its arguments to the returned file, one line
// each, before running git.
func hrEnv(t *testing.T, r *fixtures.Repo) (*steps.Env, string) {
	t.Helper()
	ctx := context.Background()
	log := filepath.Join(r.Root, "git.log")
	wrapper := filepath.Join(r.Root, "git-logged")
	script := "#!/bin/sh\nprintf '%s\\t%s\\n' \"$(pwd -P)\" \"$*\" >>'" + log + "'\nexec git \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	g := hostio.NewGit(&hostio.Runner{})
	g.Bin = wrapper
	repo, err := gitfiles.Discover(ctx, g, r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg, src, err := observe.ReadConfig(repo)
	if err != nil {
		t.Fatal(err)
	}
	root, err := steps.ResolveRoot(repo, cfg.Root)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenContext(ctx, steps.StatePath(repo), 5*time.Second, true)
	if err != nil {
		t.Fatal(err)
	}
	return &steps.Env{Repo: repo, Git: g, Store: st, Policy: cfg.Policy(), Config: cfg, ConfigSource: src,
		Root: root, Now: time.Now, Actor: "test", Holder: steps.Self(), Wait: time.Second}, log
}

// hrTouched returns the trees among trees that a git command in log ran
// in or named.
func hrTouched(t *testing.T, log string, trees []string) []string {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var out []string
	for _, tree := range trees {
		for _, line := range strings.Split(string(b), "\n") {
			dir, args, _ := strings.Cut(line, "\t")
			if dir == tree || strings.HasPrefix(dir, tree+"/") || strings.Contains(args, tree) {
				out = append(out, tree)
				break
			}
		}
	}
	return out
}

// TestRetireHookTree: with real git, RetireHookTree removes a tree whose
// work is provably published (releasing the session's lease first), and
// keeps, with its reason, one holding an untracked file and one holding an
// unpushed commit, each active again as it was before the hook (so the
// next session in it takes a lease), while a tree already finished stays
// finished. Each retirement observes its own tree
// only: no git command runs in, or names, any other tree, not even one
// that is broken; a full plan, for contrast, does observe them.
func TestRetireHookTree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := fixtures.New(t, fixtures.Options{})
	e, log := hrEnv(t, r)
	mk := func(name string) steps.NewResult {
		t.Helper()
		res, err := steps.New(ctx, e, name, "", r.Dir)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	safe, untracked, unpushed, broken := mk("safe"), mk("untracked"), mk("unpushed"), mk("broken")
	r.Commit(safe.Path, "done.txt", "published\n")
	r.Push(safe.Path, safe.Branch)
	r.WriteFile(untracked.Path, "notes.txt", "only here\n")
	unpushedHead := r.Commit(unpushed.Path, "wip.txt", "only here\n")
	// The broken tree is finished (a plan observes it) and its index is
	// garbage: observing it fails.
	if _, err := steps.Finish(ctx, e, []string{broken.ID}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.Dir, ".git", "worktrees", broken.ID, "index"), []byte("not an index"), 0o644); err != nil {
		t.Fatal(err)
	}
	hrLease(t, e, safe, "session-1")
	all := []string{safe.Path, untracked.Path, unpushed.Path, broken.Path}
	retire := func(tree steps.NewResult, session string) agents.HookRetirement {
		t.Helper()
		if err := os.Remove(log); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		res, err := agents.RetireHookTree(ctx, e, agents.RetireRequest{Dir: filepath.Join(tree.Path, "."), Session: session,
			Hook: "worktree-remove", Agent: "claude", Actor: "test"})
		if err != nil {
			t.Fatalf("RetireHookTree(%s): %v", tree.ID, err)
		}
		if res.ID != tree.ID || res.Path != tree.Path {
			t.Errorf("RetireHookTree(%s) names %s at %s", tree.ID, res.ID, res.Path)
		}
		var others []string
		for _, p := range all {
			if p != tree.Path {
				others = append(others, p)
			}
		}
		if got := hrTouched(t, log, others); len(got) > 0 {
			t.Errorf("retiring %s ran git in or on other trees %v", tree.ID, got)
		}
		return res
	}
	state := func(id string) machine.State {
		t.Helper()
		rec, err := e.Store.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		return rec.State
	}

	res := retire(safe, "session-1")
	if res.Kept || res.Removal == nil || res.Removal.Outcome != machine.OutcomeRemoved || res.Removal.Refusal != nil {
		t.Fatalf("the safe tree: %+v, want removed", res)
	}
	if _, err := os.Lstat(safe.Path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the safe tree's directory is still there (%v)", err)
	}
	if s := state(safe.ID); s != machine.StateTombstoned {
		t.Errorf("the safe tree's record is %s, want tombstoned", s)
	}

	for _, tc := range []struct {
		tree steps.NewResult
		code machine.Code
		file string
	}{
		{untracked, machine.CodeUntrackedFiles, "notes.txt"},
		{unpushed, machine.CodeUnpushedCommits, "wip.txt"},
	} {
		res := retire(tc.tree, "")
		if !res.Kept || res.Refusal == nil || res.Removal != nil {
			t.Errorf("%s: %+v, want kept by the plan", tc.tree.ID, res)
			continue
		}
		var codes []machine.Code
		for _, r := range res.Refusals {
			codes = append(codes, r.Code)
		}
		if !hasRefusal(res.Refusals, tc.code) {
			t.Errorf("%s kept for %v, want %s among them", tc.tree.ID, codes, tc.code)
		}
		if b, err := os.ReadFile(filepath.Join(tc.tree.Path, tc.file)); err != nil || string(b) != "only here\n" {
			t.Errorf("%s lost %s: %q %v", tc.tree.ID, tc.file, b, err)
		}
		if s := state(tc.tree.ID); s != machine.StateActive || res.State != machine.StateActive {
			t.Errorf("%s is %s (the result says %q), want active again, as it was before the hook", tc.tree.ID, s, res.State)
		}
		hrLease(t, e, tc.tree, "a later session")
	}
	if head := r.BranchTip(unpushed.Branch); head != unpushedHead {
		t.Errorf("the unpushed commit's branch is at %q, want %s", head, unpushedHead)
	}

	// A tree finished before the hook stays finished: plan takes it up.
	if err := os.Remove(log); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	finished := mk("finished")
	r.WriteFile(finished.Path, "draft.txt", "only here\n")
	if _, err := steps.Finish(ctx, e, []string{finished.ID}); err != nil {
		t.Fatal(err)
	}
	all = append(all, finished.Path)
	if res := retire(finished, ""); !res.Kept || res.State != machine.StateFinished || state(finished.ID) != machine.StateFinished {
		t.Errorf("a tree finished before the hook: %+v, record %s; want kept, finished", res, state(finished.ID))
	}

	// The contrast: a full plan observes the other trees, so the log above
	// would have shown it.
	if err := os.Remove(log); err != nil {
		t.Fatal(err)
	}
	if _, err := steps.Plan(ctx, e); err != nil {
		t.Fatal(err)
	}
	if got := hrTouched(t, log, []string{finished.Path, broken.Path}); len(got) != 2 {
		t.Errorf("a full plan touched only %v of the finished trees: the log does not show observation", got)
	}
}

// hrLease leases tree to session for an hour.
func hrLease(t *testing.T, e *steps.Env, tree steps.NewResult, session string) {
	t.Helper()
	req := machine.LeaseRequest{Op: machine.LeaseAcquire, Session: session, Now: time.Now().UTC(), Duration: time.Hour}
	lr, err := e.Store.ChangeLease(store.LeaseChange{Path: tree.Path, Key: tree.ID, Request: req, Actor: "test"})
	if err != nil || lr.Lease == nil || lr.Lease.Holder != session {
		t.Fatalf("leasing %s to %s: %+v %v", tree.ID, session, lr, err)
	}
}

// hasRefusal reports whether rs holds a refusal with code.
func hasRefusal(rs []machine.Refusal, code machine.Code) bool {
	for _, r := range rs {
		if r.Code == code {
			return true
		}
	}
	return false
}

// TestRetireHookTreeRefusals: a directory in no managed tree is refused
// with not-in-worktree and names no record; a leased tree another session
// holds is kept with lease-live and stays active.
func TestRetireHookTreeRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := fixtures.New(t, fixtures.Options{})
	e, _ := hrEnv(t, r)
	res, err := agents.RetireHookTree(ctx, e, agents.RetireRequest{Dir: r.Dir})
	var ref *machine.Refusal
	if !errors.As(err, &ref) || ref.Code != machine.CodeNotInWorktree || res.ID != "" {
		t.Errorf("the main checkout: %+v %v, want a not-in-worktree refusal naming no record", res, err)
	}
	tree, err := steps.New(ctx, e, "leased", "", r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	hrLease(t, e, tree, "session-a")
	res, err = agents.RetireHookTree(ctx, e, agents.RetireRequest{Dir: tree.Path, Session: "session-b"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Kept || res.Refusal == nil || res.Refusal.Code != machine.CodeLeaseLive || len(res.Refusals) != 1 {
		t.Errorf("a tree another session leases: %+v, want kept [lease-live]", res)
	}
	if rec, err := e.Store.Get(tree.ID); err != nil || rec.State != machine.StateActive {
		t.Errorf("the leased tree is %v (%v), want active", rec.State, err)
	}
}
