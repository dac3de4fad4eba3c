package custody_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/steps/custody"
	"github.com/google/go-cmp/cmp"
)

// gitCall is one git command the recording runner saw.
type gitCall struct {
	Dir  string
	Args []string
}

// recordingGit runs every git command for real and records it.
type recordingGit struct {
	mu    sync.Mutex
	calls []gitCall
}

func (g *recordingGit) RunGit(ctx context.Context, c hostio.Cmd, run func(context.Context, hostio.Cmd) (hostio.Result, error)) (hostio.Result, error) {
	g.mu.Lock()
	g.calls = append(g.calls, gitCall{Dir: c.Dir, Args: slices.Clone(c.Args)})
	g.mu.Unlock()
	return run(ctx, c)
}

// take returns the calls recorded since the last take.
func (g *recordingGit) take() []gitCall {
	g.mu.Lock()
	defer g.mu.Unlock()
	calls := g.calls
	g.calls = nil
	return calls
}

// fakeClock is a clock the test sets.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// countingScanner scans the system's processes and counts the scans.
type countingScanner struct {
	mu    sync.Mutex
	scans int
}

func (s *countingScanner) Scan() *observe.Processes {
	s.mu.Lock()
	s.scans++
	s.mu.Unlock()
	return custody.SystemProcesses().Scan()
}

func (s *countingScanner) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.scans
}

// recordingOutput records what custody reported.
type recordingOutput struct {
	mu      sync.Mutex
	steps   []string
	resumed []steps.ResumeItem
}

func (o *recordingOutput) Step(done, total int, what string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.steps = append(o.steps, what)
}

func (o *recordingOutput) Resumed(it steps.ResumeItem) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.resumed = append(o.resumed, it)
}

// embedding is custody opened in a fixture repository with every port
// replaced by the test's.
type embedding struct {
	r     *fixtures.Repo
	c     *custody.Custody
	git   *recordingGit
	clock *fakeClock
	scan  *countingScanner
	out   *recordingOutput
}

// embed opens custody in a new fixture repository (a clone of a bare
// remote in a temporary directory), as a program that embeds it would,
// with a recording git runner, a fake clock, a counting process scanner
// and a recording output. Every process custody runs sees the fixture's
// environment.
func embed(t *testing.T) *embedding {
	t.Helper()
	r := fixtures.New(t, fixtures.Options{})
	for _, kv := range r.Env() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			t.Setenv(k, v)
		}
	}
	em := &embedding{r: r, git: &recordingGit{}, clock: &fakeClock{now: at(0)}, scan: &countingScanner{}, out: &recordingOutput{}}
	c, err := custody.Open(context.Background(), r.Dir, custody.Options{
		Git: em.git, Clock: em.clock, Processes: em.scan, Output: em.out, Actor: "embedder", LockTimeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	em.c = c
	em.git.take()
	return em
}

// at is the fake clock's i-th time: whole hours from a fixed start,
// monotonic and far from the real time, so a time the system clock gave
// cannot pass for one of them.
func at(i int) time.Time {
	return time.Date(2031, 4, 5, 6, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Hour)
}

// ran reports whether calls hold a git command whose arguments (after
// "git" and any -c options) begin with sub.
func ran(calls []gitCall, sub ...string) bool {
	for _, c := range calls {
		if hasPrefix(gitArgs(c.Args), sub) {
			return true
		}
	}
	return false
}

// gitArgs are a git command line's arguments after the program and its
// leading -c options.
func gitArgs(argv []string) []string {
	args := argv[1:]
	for len(args) >= 2 && args[0] == "-c" {
		args = args[2:]
	}
	return args
}

func hasPrefix(args, prefix []string) bool {
	return len(args) >= len(prefix) && slices.Equal(args[:len(prefix)], prefix)
}

// mutates reports the calls that may change the repository: the git
// commands plan must never run.
func mutates(calls []gitCall) []gitCall {
	var out []gitCall
	for _, c := range calls {
		args := gitArgs(c.Args)
		for _, m := range [][]string{{"worktree", "add"}, {"worktree", "remove"}, {"worktree", "prune"}, {"worktree", "move"},
			{"update-ref"}, {"branch"}, {"commit"}, {"push"}, {"reset"}, {"checkout"}} {
			if hasPrefix(args, m) {
				out = append(out, c)
			}
		}
	}
	return out
}

// TestEmbedNewToApply drives one tree through the façade as a program
// that embeds custody would: new, a commit published to the remote,
// finish, plan, apply. Each step's typed result says what happened, the
// recording runner saw the git commands each step must run (and plan none
// that changes anything), every git command ran as git, and the journal
// holds exactly the fake clock's times, each transition at the time of
// the step that made it.
func TestEmbedNewToApply(t *testing.T) {
	em := embed(t)
	ctx := context.Background()
	r, c := em.r, em.c

	// new, at time 1.
	em.clock.set(at(1))
	tree, err := c.New(ctx, "feature", custody.NewOptions{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if want := "custody/" + tree.ID; tree.Branch != want {
		t.Errorf("New: branch %q, want %q", tree.Branch, want)
	}
	if want := filepath.Join(c.Root(), tree.ID); tree.Path != want {
		t.Errorf("New: path %q, want %q", tree.Path, want)
	}
	if head := r.Head(r.Dir); tree.Head != head {
		t.Errorf("New: head %s, want the main checkout's %s", tree.Head, head)
	}
	if c.Repository() != r.Dir {
		t.Errorf("Repository() = %q, want %q", c.Repository(), r.Dir)
	}
	calls := em.git.take()
	if !ran(calls, "worktree", "add") {
		t.Errorf("New ran no git worktree add; it ran:\n%s", show(calls))
	}
	for _, call := range calls {
		if filepath.Base(call.Args[0]) != "git" {
			t.Errorf("New ran %q through the git runner, not git", call.Args)
		}
	}

	// Work in the tree, published to the bare remote.
	work := r.Commit(tree.Path, "work.txt", "done\n")
	r.Push(tree.Path, tree.Branch)

	// finish, at time 2.
	em.clock.set(at(2))
	fin, err := c.Finish(ctx, tree.ID)
	if err != nil {
		t.Fatalf("Finish: %v", err)
	}
	if diff := cmp.Diff([]custody.Outcome{{ID: tree.ID, Outcome: machine.OutcomeFinished, State: machine.StateFinished}}, fin); diff != "" {
		t.Errorf("Finish (-want +got):\n%s", diff)
	}
	em.git.take()

	// plan, at time 3: it proves the tree by ancestry against the remote
	// and changes nothing.
	em.clock.set(at(3))
	plan, err := c.Plan(ctx)
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	if len(plan.Items) != 1 {
		t.Fatalf("Plan: %d items, want 1: %+v", len(plan.Items), plan.Items)
	}
	it := plan.Items[0]
	if it.ID != tree.ID || it.Action != machine.ActionRemove || it.Proof == nil || it.Proof.Kind != machine.ProofAncestry || it.Proof.Head != work {
		t.Errorf("Plan: item %+v (proof %+v), want remove %s proven by ancestry of %s", it, it.Proof, tree.ID, work)
	}
	if !plan.CreatedAt.Equal(at(3)) {
		t.Errorf("Plan: created at %s, want the fake clock's %s", plan.CreatedAt, at(3))
	}
	calls = em.git.take()
	if !ran(calls, "ls-remote") {
		t.Errorf("Plan asked no remote (git ls-remote); it ran:\n%s", show(calls))
	}
	if m := mutates(calls); len(m) > 0 {
		t.Errorf("Plan ran git commands that change the repository:\n%s", show(m))
	}

	// apply, at time 4: the tree goes and the branch custody created is
	// deleted.
	em.clock.set(at(4))
	scansBefore := em.scan.count()
	res, err := c.Apply(ctx, plan)
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if len(res.Items) != 1 || res.Items[0].ID != tree.ID || res.Items[0].Outcome != machine.OutcomeRemoved || res.Items[0].Refusal != nil {
		t.Fatalf("Apply: %+v, want %s removed", res.Items, tree.ID)
	}
	if res.PlanID != plan.PlanID || res.Pending() {
		t.Errorf("Apply: plan %s pending %v, want plan %s and nothing pending", res.PlanID, res.Pending(), plan.PlanID)
	}
	if b := res.Items[0].Branch; b == nil || b.Outcome != machine.BranchDeleted || b.Commit != work {
		t.Errorf("Apply: branch %+v, want the branch custody created deleted", b)
	}
	if _, err := os.Lstat(tree.Path); !os.IsNotExist(err) {
		t.Errorf("after Apply, %s: %v, want it gone", tree.Path, err)
	}
	if tip := r.BranchTip(tree.Branch); tip != "" {
		t.Errorf("after Apply, branch %s is at %s, want it deleted", tree.Branch, tip)
	}
	calls = em.git.take()
	if !ran(calls, "ls-remote") {
		t.Errorf("Apply asked no remote afresh (git ls-remote); it ran:\n%s", show(calls))
	}
	// The branch goes by compare-and-swap on the commit the proof covers.
	if !ran(calls, "update-ref", "-d", "refs/heads/"+tree.Branch, work) {
		t.Errorf("Apply did not delete %s by compare-and-swap on %s; it ran:\n%s", tree.Branch, work, show(calls))
	}
	if em.scan.count() == scansBefore {
		t.Errorf("Apply never asked the injected process scanner who uses the tree")
	}
	if len(em.out.steps) == 0 {
		t.Errorf("Apply reported no progress to the injected output")
	}
	if len(em.out.resumed) != 0 {
		t.Errorf("the automatic resume reported %+v, with nothing interrupted", em.out.resumed)
	}

	// The record and its journal: each transition at the fake time of the
	// step that made it, by the injected actor.
	shown, err := c.Show(ctx, tree.ID)
	if err != nil {
		t.Fatalf("Show: %v", err)
	}
	if shown.Record.State != machine.StateTombstoned {
		t.Errorf("Show: state %s, want tombstoned", shown.Record.State)
	}
	type entry struct {
		At      time.Time
		Trigger string
		To      string
		Actor   string
	}
	var got []entry
	for _, en := range shown.Journal {
		if en.Trigger == "" {
			continue // an event, not a transition: checked below
		}
		got = append(got, entry{At: en.At.UTC(), Trigger: en.Trigger, To: en.To, Actor: en.Actor})
	}
	want := []entry{
		{at(1), "create", "provisioning", "embedder"},
		{at(1), "created", "active", "embedder"},
		{at(2), "finish", "finished", "embedder"},
		{at(4), "remove", "removing", "embedder"},
		{at(4), "removed", "tombstoned", "embedder"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("journal transitions (-want +got):\n%s", diff)
	}
	fake := map[time.Time]bool{at(1): true, at(2): true, at(3): true, at(4): true}
	for _, en := range shown.Journal {
		if !fake[en.At.UTC()] {
			t.Errorf("journal entry %d (%s%s) at %s: not a time the fake clock gave", en.Seq, en.Trigger, en.Event, en.At)
		}
	}

	// List shows the tree only with All, tombstoned.
	rows, err := c.List(ctx, custody.ListOptions{})
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if len(rows) != 0 {
		t.Errorf("List: %d live rows, want none", len(rows))
	}
	rows, err = c.List(ctx, custody.ListOptions{All: true})
	if err != nil {
		t.Fatalf("List all: %v", err)
	}
	if len(rows) != 1 || rows[0].Record.ID != tree.ID || rows[0].Record.State != machine.StateTombstoned {
		t.Errorf("List all: %+v, want %s tombstoned", rows, tree.ID)
	}

	// Apply again: already done, nothing changed.
	again, err := c.Apply(ctx, plan)
	if err != nil {
		t.Fatalf("Apply again: %v", err)
	}
	if len(again.Items) != 1 || again.Items[0].Outcome != machine.OutcomeAlreadyDone {
		t.Errorf("Apply again: %+v, want already-done", again.Items)
	}
	// Resume with nothing interrupted does nothing.
	rs, err := c.Resume(ctx)
	if err != nil || len(rs.Items) != 0 {
		t.Errorf("Resume: %+v, %v; want nothing to do", rs, err)
	}
}

// show renders calls one per line.
func show(calls []gitCall) string {
	var b strings.Builder
	for _, c := range calls {
		b.WriteString("\t" + strings.Join(c.Args, " ") + "\n")
	}
	return b.String()
}

// TestEmbedApplyStale: a plan whose tree changed since (a commit made and
// published after plan) is refused by Apply with a *StaleError the
// caller matches with errors.As and errors.Is, whose items carry the
// stale refusal naming the tree; the tree and its branch stay as they
// are, and a fresh plan applies.
func TestEmbedApplyStale(t *testing.T) {
	em := embed(t)
	ctx := context.Background()
	r, c := em.r, em.c
	tree, err := c.New(ctx, "stale", custody.NewOptions{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	r.Commit(tree.Path, "a.txt", "a\n")
	r.Push(tree.Path, tree.Branch)
	if _, err := c.Finish(ctx, tree.ID); err != nil {
		t.Fatalf("Finish: %v", err)
	}
	plan, err := c.Plan(ctx)
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	if len(plan.Items) != 1 || plan.Items[0].Action != machine.ActionRemove {
		t.Fatalf("Plan: %+v, want one removal", plan.Items)
	}

	// The tree changes after plan: still published, but not what was
	// reviewed.
	later := r.Commit(tree.Path, "b.txt", "b\n")
	r.Push(tree.Path, tree.Branch)

	res, err := c.Apply(ctx, plan)
	if err == nil {
		t.Fatalf("Apply of a stale plan: no error; result %+v", res.Items)
	}
	var stale *custody.StaleError
	if !errors.As(err, &stale) {
		t.Fatalf("Apply: %T %v, want a *custody.StaleError", err, err)
	}
	if !errors.Is(err, custody.ErrStale) {
		t.Errorf("errors.Is(err, ErrStale) = false for %v", err)
	}
	if !errors.Is(err, machine.CodeStale.AsError()) {
		t.Errorf("errors.Is(err, CodeStale.AsError()) = false for %v", err)
	}
	if errors.Is(err, machine.CodeLocked.AsError()) {
		t.Errorf("errors.Is(err, CodeLocked.AsError()) = true: the error matches another code")
	}
	var refusal *custody.Refusal
	if !errors.As(err, &refusal) || refusal.Code != machine.CodeStale || refusal.Path != tree.Path {
		t.Errorf("errors.As(err, *Refusal) = %+v, want code stale at %s", refusal, tree.Path)
	}
	if stale.PlanID != plan.PlanID || len(stale.Items) != 1 || stale.Items[0].ID != tree.ID || stale.Items[0].Outcome != machine.OutcomeStale {
		t.Errorf("StaleError: %+v, want plan %s with %s stale", stale, plan.PlanID, tree.ID)
	}
	if msg := err.Error(); !strings.Contains(msg, tree.ID) || !strings.Contains(msg, "custody plan") {
		t.Errorf("StaleError message %q names neither the tree nor the retry", msg)
	}
	if len(res.Items) != 1 || res.Items[0].Outcome != machine.OutcomeStale {
		t.Errorf("Apply result: %+v, want the item stale", res.Items)
	}
	if _, err := os.Lstat(tree.Path); err != nil {
		t.Errorf("after a stale Apply, %s: %v, want it kept", tree.Path, err)
	}
	if tip := r.BranchTip(tree.Branch); tip != later {
		t.Errorf("after a stale Apply, branch %s at %q, want it kept at %s", tree.Branch, tip, later)
	}
	shown, err := c.Show(ctx, tree.ID)
	if err != nil {
		t.Fatalf("Show: %v", err)
	}
	if shown.Record.State != machine.StateFinished || shown.Record.Intent != nil {
		t.Errorf("after a stale Apply, record %s with intent %+v, want finished with none", shown.Record.State, shown.Record.Intent)
	}

	// Plan again: the fresh plan applies.
	plan, err = c.Plan(ctx)
	if err != nil {
		t.Fatalf("Plan again: %v", err)
	}
	res, err = c.Apply(ctx, plan)
	if err != nil {
		t.Fatalf("Apply of the fresh plan: %v", err)
	}
	if len(res.Items) != 1 || res.Items[0].Outcome != machine.OutcomeRemoved {
		t.Errorf("Apply of the fresh plan: %+v, want removed", res.Items)
	}
}
