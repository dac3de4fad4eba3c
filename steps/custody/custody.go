package custody

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/store"
)

// The results are the core's own types under names of this package: the
// values the custody command prints as JSON, so a program that embeds
// custody and a script that runs it read the same fields.
type (
	// NewResult is the tree New made: id, path, branch, HEAD.
	NewResult = steps.NewResult
	// Outcome is what a method did with one record.
	Outcome = steps.Outcome
	// Plan is a reviewed assessment Apply carries out. It is kept as a
	// value; machine.ParsePlan reads a custody.plan/1 file into one.
	Plan = machine.Plan
	// PlanItem is one record's part in a Plan: its action and why.
	PlanItem = machine.PlanItem
	// ApplyResult is what Apply did with each of the plan's actions.
	ApplyResult = steps.ApplyResult
	// ResumeResult is what Resume did with each interrupted intent.
	ResumeResult = steps.ResumeResult
	// ResumeItem is one record Resume settled or left refused.
	ResumeItem = steps.ResumeItem
	// ListOptions say which records List reads.
	ListOptions = steps.ListOptions
	// ListRow is one record as List shows it.
	ListRow = steps.ListRow
	// ShowResult is one record with its journal and what it rests on.
	ShowResult = steps.ShowResult
	// Refusal is an expected "no": a stable code, the exact path, a
	// reason and the command that retries. Refusals returned as errors
	// match errors.As(err, &*Refusal) and errors.Is(err, code.AsError()).
	Refusal = machine.Refusal
)

// DefaultLockTimeout is how long Open's store waits for another custody
// holding the state file when Options.LockTimeout is zero: the custody
// command's --lock-timeout default.
const DefaultLockTimeout = 10 * time.Second

// Options are the ports custody runs through. Each one left nil is the
// real one.
type Options struct {
	// Git is handed every git command (nil: run as it is).
	Git GitRunner
	// Clock is the time (nil: SystemClock).
	Clock Clock
	// Processes scans processes for the in-use checks (nil:
	// SystemProcesses).
	Processes ProcessScanner
	// Output receives progress and what the automatic resume did (nil:
	// nothing is reported).
	Output Output
	// Actor names who acts, in the journal ("": DefaultActor).
	Actor string
	// LockTimeout bounds each wait for the state file's lock, and how
	// long Apply waits for another live process's intent on a tree (zero:
	// DefaultLockTimeout).
	LockTimeout time.Duration
}

// Custody is one repository's custody, opened by Open. Its methods are
// the custody command's, with typed results; each may be called any
// number of times, one at a time (a Custody is not safe for concurrent
// use: open one per goroutine, and the state file's lock orders them).
type Custody struct {
	env *steps.Env
	out Output
}

// Open opens the custody of the repository dir belongs to: it finds the
// repository exactly, reads its custody.toml, and opens its state file
// (<git-common-dir>/custody/state.db), making it on first use. ctx bounds
// every wait for the state file's lock for as long as the Custody is
// used. Open runs no workflow: interrupted intents are settled by the
// first mutating method, or by Resume.
func Open(ctx context.Context, dir string, opts Options) (*Custody, error) {
	g := NewGit(opts.Git, nil)
	site, err := Locate(ctx, g, dir)
	if err != nil {
		return nil, err
	}
	wait := opts.LockTimeout
	if wait <= 0 {
		wait = DefaultLockTimeout
	}
	st, err := store.OpenWith(ctx, site.StatePath(), store.Options{Timeout: wait, Create: true})
	if err != nil {
		return nil, err
	}
	w := Wiring{Git: g, Clock: opts.Clock, Processes: opts.Processes, Actor: opts.Actor, Wait: wait}
	if opts.Output != nil {
		w.Progress = opts.Output
	}
	return &Custody{env: NewEnv(site, st, w), out: opts.Output}, nil
}

// Repository is the main checkout of the repository in custody.
func (c *Custody) Repository() string { return c.env.Repo.MainCheckout }

// Root is the managed root new trees are made in.
func (c *Custody) Root() string { return c.env.Root }

// NewOptions say where a new tree starts and on what branch.
type NewOptions struct {
	// From is the revision the tree starts at, resolved in the main
	// checkout ("": its HEAD).
	From string
	// Branch names the branch custody creates for the tree ("": custody's
	// <prefix><id>). It must not exist yet.
	Branch string
	// Checkout is an existing branch the tree is made on instead; custody
	// did not create it and never deletes it. It excludes From and Branch.
	Checkout string
}

// New makes a managed worktree named name and returns it, active. A name
// or branch that can never be made is refused before anything is opened.
// Like every mutating method it first settles interrupted intents
// (reported to Output.Resumed). A refusal is returned as a *Refusal.
func (c *Custody) New(ctx context.Context, name string, opt NewOptions) (NewResult, error) {
	req := steps.NewRequest{Name: name, From: opt.From, Branch: opt.Branch, Checkout: opt.Checkout}
	if err := steps.CheckNewRequest(req); err != nil {
		return NewResult{}, err
	}
	if err := c.resumeFirst(ctx); err != nil {
		return NewResult{}, err
	}
	return steps.NewFor(ctx, c.env, req)
}

// Finish marks each named tree finished: its final HEAD is recorded and
// plan may assess it. A tree already finished is already-done; one that
// cannot be finished (a live lease, no such record) is an Outcome with a
// Refusal, and the next id goes on. It first settles interrupted intents.
func (c *Custody) Finish(ctx context.Context, ids ...string) ([]Outcome, error) {
	if len(ids) == 0 {
		return nil, errors.New("custody: Finish names no tree: give the id of each tree to finish")
	}
	if err := c.resumeFirst(ctx); err != nil {
		return nil, err
	}
	return steps.Finish(ctx, c.env, ids)
}

// Plan assesses every finished tree afresh and says which may go (with
// the proof it rests on) and why each other one is kept. It writes
// nothing: give the plan, reviewed, to Apply.
func (c *Custody) Plan(ctx context.Context) (Plan, error) {
	return steps.Plan(ctx, c.env)
}

// Apply does exactly what plan says (only the items named in only, when
// any are): each tree to remove is observed afresh, must equal what plan
// saw, and goes only after its removal intent is durable. It first
// settles interrupted intents. Applying a plan again reports already-done.
//
// The result always says what was done, item by item. When a tree changed
// since plan, its item is stale and was not touched, the other items still
// went on, and Apply returns the result with a *StaleError (errors.Is
// ErrStale): plan again to review the change. A plan of another
// repository is refused whole, as a *Refusal.
func (c *Custody) Apply(ctx context.Context, plan Plan, only ...string) (ApplyResult, error) {
	if err := c.resumeFirst(ctx); err != nil {
		return ApplyResult{PlanID: plan.PlanID, Items: []Outcome{}}, err
	}
	res, err := steps.ApplyWith(ctx, c.env, plan, steps.ApplyOptions{Only: only})
	if err != nil {
		return res, err
	}
	var stale []Outcome
	for _, it := range res.Items {
		if it.Outcome == machine.OutcomeStale {
			stale = append(stale, it)
		}
	}
	if len(stale) > 0 {
		return res, &StaleError{PlanID: plan.PlanID, Items: stale}
	}
	return res, nil
}

// Resume drives every interrupted intent (of every kind) to its one
// outcome. It is idempotent: with nothing interrupted it does nothing.
func (c *Custody) Resume(ctx context.Context) (ResumeResult, error) {
	return steps.Resume(ctx, c.env)
}

// List returns every live record (every record with opt.All), each with a
// glance at its tree. It writes nothing.
func (c *Custody) List(ctx context.Context, opt ListOptions) ([]ListRow, error) {
	return steps.List(ctx, c.env, opt)
}

// Show returns one record with its journal and, unless it is tombstoned,
// a fresh observation and assessment of its tree. It writes nothing. An
// unknown id is a *Refusal.
func (c *Custody) Show(ctx context.Context, id string) (ShowResult, error) {
	return steps.Show(ctx, c.env, id)
}

// resumeFirst settles interrupted intents before a mutating method, as
// every mutating custody command does, and reports each to Output.
func (c *Custody) resumeFirst(ctx context.Context) error {
	res, err := steps.Resume(ctx, c.env)
	if err != nil {
		return fmt.Errorf("resume before acting: %w", err)
	}
	if c.out != nil {
		for _, it := range res.Items {
			c.out.Resumed(it)
		}
	}
	return nil
}
