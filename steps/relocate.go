package steps

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/steps/failpoint"
	"github.com/custody-sh/custody/store"
)

// RelocateResult is what Relocate did with one worktree record.
type RelocateResult struct {
	ID      string          `json:"id"`
	Outcome machine.Outcome `json:"outcome"`
	// From is where the tree was; To is where it is to be (and, when
	// relocated or already-done, is).
	From string `json:"from"`
	To   string `json:"to,omitempty"`
	// Head is the commit the tree held, unchanged by the move.
	Head    string           `json:"head,omitempty"`
	State   machine.State    `json:"state,omitempty"`
	Refusal *machine.Refusal `json:"refusal,omitempty"`
}

// Pending reports whether the relocation was refused or left unfinished
// (exit 3).
func (r RelocateResult) Pending() bool { return machine.ItemPending(r.Outcome, r.Refusal) }

// Relocate moves the active worktree record id to dst ("" for the managed
// root's <root>/<id>; otherwise a path, made absolute against the current
// directory) through the worktree machine's relocating state (DESIGN §4):
// no resources (their commands were frozen with the tree's path: refused
// as resources-frozen); a fresh observation of the tree and of the
// destination; the guard (the tree clean, unlocked, unleased and used by
// no process; the destination
// free, on a real path and inside no other tree); the relocation intent
// {src, dst, HEAD} committed (the managed root put in info/exclude first
// when dst is in it); the destination's parent checked again; a
// non-forced `git worktree move`; then git
// must register exactly dst under the record's admin key with HEAD
// unchanged, and lstat must find nothing at src, before relocated fires,
// which updates the record's path, clears the intent and journals it in
// one transaction. A move git refused steps the record back (the tree is
// where it was) and is a relocation-failed refusal; what fits neither is
// left carrying its intent for resume, which settles it by the same rules.
//
// A record already at dst is already-done. Refusals are returned in the
// result with nothing changed; errors are failures to observe or commit.
// Migration's adopt-and-move calls it too.
func Relocate(ctx context.Context, e *Env, id, dst string) (RelocateResult, error) {
	rec, err := e.Store.Get(id)
	if errors.Is(err, store.ErrNotFound) {
		return RelocateResult{ID: id, Outcome: machine.OutcomeRefused, Refusal: machine.NoRecordRefusal(id)}, nil
	}
	if err != nil {
		return RelocateResult{}, err
	}
	res := RelocateResult{ID: id, From: rec.Path, State: rec.State}
	refused := func(r *machine.Refusal) (RelocateResult, error) {
		res.Outcome, res.Refusal = machine.OutcomeRefused, r
		return res, nil
	}
	target, ref, err := relocationTarget(ctx, e, rec, dst)
	if err != nil {
		return RelocateResult{}, err
	}
	if ref != nil {
		return refused(ref)
	}
	res.To = target
	if target == rec.Path && rec.Intent == nil && rec.State == machine.StateActive {
		res.Outcome, res.Head = machine.OutcomeAlreadyDone, rec.EffectiveHead()
		return res, nil
	}
	rs, err := e.LiveResources(id)
	if err != nil {
		return RelocateResult{}, err
	}
	if ref := machine.ResourcesBlockRelocation(rec, rs); ref != nil {
		return refused(ref)
	}
	scope, err := e.AssessScope(nil)
	if err != nil {
		return RelocateResult{}, err
	}
	scope.Proof = false
	obs, _, err := e.ObserveRecord(ctx, rec, scope)
	if err != nil {
		return RelocateResult{}, err
	}
	at := rec
	at.Path = target
	dest, _, err := e.ObserveRecord(ctx, at, observe.Scope{})
	if err != nil {
		return RelocateResult{}, err
	}
	retry := machine.CommandOn([]string{"custody", "relocate"}, id)
	if dst != "" {
		retry += " --to " + machine.QuoteArg(target)
	}
	if ref := machine.RelocationBlock(rec, obs, dest, e.Now().UTC(), retry); ref != nil {
		return refused(ref)
	}
	res.Head = obs.Head
	var r *machine.Refusal
	if within(target, e.Root) {
		// Into the managed root: git in the main checkout must keep not
		// seeing it, as custody init made it (a person may have edited
		// info/exclude since).
		if _, err := e.ExcludeRoot(); err != nil {
			if errors.As(err, &r) {
				return refused(r)
			}
			return RelocateResult{}, err
		}
	}
	key := rec.AdminKeyOrID()
	intent := &machine.Intent{Kind: machine.IntentRelocation, Path: rec.Path, Destination: target, Branch: rec.Branch,
		Commit: obs.Head, Dev: obs.Dev, Ino: obs.Ino, AdminKey: key, Holder: e.Holder, At: e.Now().UTC()}
	moving, err := e.fire(ctx, rec, machine.TriggerRelocate, machine.Firing{Obs: obs, Intent: intent, Dest: &dest}, "relocation intent")
	if errors.As(err, &r) {
		return refused(r)
	}
	if err != nil {
		return RelocateResult{}, err
	}
	failpoint.At("relocate/after-intent")
	failpoint.Pause("relocate/before-move")
	// What could have changed since the observation is checked again
	// right before git moves the tree; a move not made for it is retried
	// with the relocate itself once the obstacle is gone.
	moveErr := beforeMove(e, rec.Path, target)
	notTried := moveErr != nil
	if moveErr == nil {
		_, moveErr = gitfiles.ChangeRegistry(ctx, e.Git, e.Repo, "worktree", "move", rec.Path, target)
	}
	failpoint.At("relocate/after-move")
	if moveErr != nil && ctx.Err() != nil {
		// Interrupted while git moved the tree: where it is is not known
		// yet. The intent stays; resume finishes or steps back.
		res.Outcome, res.State = machine.OutcomeFailed, moving.State
		res.Refusal = machine.RelocationInterruptedRefusal(rec.Path, target, moveErr)
		return res, nil
	}
	items, err := worktreeWorkflow().resumeOne(ctx, e, moving, true)
	if err != nil {
		return RelocateResult{}, err
	}
	now, err := e.Store.Get(id)
	if err != nil {
		return RelocateResult{}, err
	}
	res.State = now.State
	it := ResumeItem{Outcome: machine.OutcomeRefused}
	if len(items) > 0 {
		it = items[0]
	}
	switch {
	case it.Outcome == machine.OutcomeRelocated:
		res.Outcome = machine.OutcomeRelocated
	case it.Outcome == machine.OutcomeSteppedBack:
		return refused(machine.RelocationFailedRefusal(id, rec.Path, target, moveErr, notTried, retry))
	default:
		res.Outcome, res.Refusal = machine.OutcomeRefused, it.Refusal
		if res.Refusal == nil {
			res.Refusal = machine.RelocationLeftRefusal(id, rec.Path, now.State)
		}
	}
	return res, nil
}

// beforeMove checks, right before git moves the tree at src to dst, what
// may have changed since both were observed: dst's parent must still lie
// under no symlink (before and after its missing directories are made),
// nothing may be at dst (git would move the tree into it), and no process
// (as e scans them) may have started using the tree (one holding its old
// path would write where the tree no longer is). It returns why the move
// is not to be made.
func beforeMove(e *Env, src, dst string) error {
	if err := realAncestors(filepath.Dir(dst)); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if err := realAncestors(filepath.Dir(dst)); err != nil {
		return err
	}
	if _, err := os.Lstat(dst); !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("the destination appeared after it was observed (lstat: %v)", err)
	}
	ps, err := e.scanAll().Inside(src)
	if err != nil {
		return fmt.Errorf("the processes using %s cannot be observed: %w", src, err)
	}
	if len(ps) > 0 {
		return fmt.Errorf("process %d (%s) started using the tree via its %s after it was checked; end it, then relocate again", ps[0].PID, ps[0].Command, ps[0].Via)
	}
	return nil
}

// realAncestors checks, right before git moves a tree, that dir's nearest
// existing ancestor is still the real directory it was when the
// destination was checked: a symlink put there since would have git move
// the tree somewhere else than the path the record is to take.
func realAncestors(dir string) error {
	existing := dir
	for {
		if _, err := os.Lstat(existing); err == nil {
			break
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			break
		}
		existing = parent
	}
	real, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return fmt.Errorf("the destination's parent %s cannot be resolved: %w", existing, err)
	}
	if real != existing {
		return fmt.Errorf("the destination's parent %s became a symlink to %s after it was checked", existing, real)
	}
	return nil
}
